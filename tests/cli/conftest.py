"""The command line is tested against the same live API stack as the API itself."""

from tests.api.api_helpers import api, api_settings, live

__all__ = ["api", "api_settings", "live"]

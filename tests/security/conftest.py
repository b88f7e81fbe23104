"""The API suite's fixtures, for the abuse and fuzz tests."""

from tests.api.api_helpers import api, api_settings, live

__all__ = ["api", "api_settings", "live"]

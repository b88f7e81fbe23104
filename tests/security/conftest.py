"""The API fixtures of the worker suite, for the abuse and fuzz tests."""

from tests.worker.worker_api_helpers import api, api_settings, live

__all__ = ["api", "api_settings", "live"]

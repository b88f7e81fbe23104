"""Fixtures of the worker suite; the helpers themselves live in worker_api_helpers."""

from tests.worker.worker_api_helpers import api, api_settings, live

__all__ = ["api", "api_settings", "live"]

"""Each test starts from no VIRTFLOW_* variables and a fresh settings cache."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from runtime.settings import CONFIG_ENV, SECRETS_DIR_ENV, get_settings


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in list(os.environ):
        if name.startswith("VIRTFLOW_"):
            monkeypatch.delenv(name)
    # Set (empty) so that whatever a command sets is undone after the test.
    monkeypatch.setenv(CONFIG_ENV, "")
    monkeypatch.setenv(SECRETS_DIR_ENV, "")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()

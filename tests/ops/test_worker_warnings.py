"""The worker silences the SDK's warning about a cancel that reached it after the activity
ended (a held spare's watch ends by itself as the release cordons its Node), and only that."""

from __future__ import annotations

import warnings

from worker.worker import quiet_benign_sdk_warnings

LATE_CANCEL = "Cannot find activity to cancel for token b'\\n$01a2'"
SDK = "temporalio.worker._activity"


def test_only_the_late_cancel_warning_of_the_sdk_is_silenced() -> None:
    with warnings.catch_warnings(record=True) as seen:
        warnings.resetwarnings()  # not the test session's filters (pyproject.toml has this one)
        quiet_benign_sdk_warnings()
        warnings.filterwarnings("always", append=True)  # everything else shows every time
        warnings.warn_explicit(LATE_CANCEL, UserWarning, "_activity.py", 227, module=SDK)
        warnings.warn_explicit("Something else", UserWarning, "_activity.py", 230, module=SDK)
        warnings.warn_explicit(LATE_CANCEL, UserWarning, "elsewhere.py", 1, module="elsewhere")
    assert [(str(w.message), w.filename) for w in seen] == [
        ("Something else", "_activity.py"),
        (LATE_CANCEL, "elsewhere.py"),
    ]

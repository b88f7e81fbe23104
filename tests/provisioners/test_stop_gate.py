"""A cancel against a libvirt call: the stop waits for a call under way, and a call that comes
after the stop is not made. Ansible runs each task in a worker process of its own session,
which the kill of ansible-playbook's process group does not reach, so the worker itself must
read that the run was stopped (seen: a domain defined and started after its destroy)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from provisioners.stopping import UNINTERRUPTIBLE_ENV, StopGate
from tests.helpers import load_module

PLUGIN = (
    Path(__file__).resolve().parents[2]
    / "hypervisors/libvirt/action_plugins/virtflow_libvirt_domain.py"
)


def test_a_stop_waits_for_a_call_and_a_later_call_is_not_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    domain = load_module(PLUGIN)
    marker = tmp_path / "uninterruptible"
    monkeypatch.setenv(UNINTERRUPTIBLE_ENV, str(marker))
    gate = StopGate(marker)

    with domain.uninterruptible():
        assert not gate.may_stop(), "a call under way was not waited for"
    assert gate.may_stop()
    assert gate.may_stop()  # asked again while the runner kills: still yes

    # A worker that reaches its call now waits for the run to be over, then makes none.
    outcome: list[str] = []

    def worker() -> None:
        try:
            with domain.uninterruptible():
                outcome.append("called")
        except domain.RunStopped:
            outcome.append("not called")

    thread = threading.Thread(target=worker)
    thread.start()
    gate.close()  # the run is over
    thread.join(timeout=30)
    assert outcome == ["not called"]

    # Its directory already gone: no call either.
    monkeypatch.setenv(UNINTERRUPTIBLE_ENV, str(tmp_path / "gone" / "uninterruptible"))
    with pytest.raises(domain.RunStopped), domain.uninterruptible():
        pytest.fail("called after the run was over")

"""One Temporal dev server per test session; each test gets its own task queue."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from cli.dev import free_ports
from contracts.common import SEARCH_ATTRIBUTES
from runtime.temporal_binaries import DEV_SERVER_DYNAMIC_CONFIG, temporal_cli, temporal_test_server
from tests.known_secrets import SCANNED
from tests.security.secret_scan import SecretScan

SECRET_SCAN = SecretScan(SCANNED)

pytest_plugins = ["tests.watchdog"]

if os.environ.get("PYTEST_XDIST_WORKER"):
    # A pytest-xdist worker starts with COLUMNS=80 and LINES=24 set, which rich reads once, when
    # the command line's consoles are made: its tables and errors would wrap at 80 columns.
    # The command-line tests set the width they need for each invocation.
    os.environ.pop("COLUMNS", None)
    os.environ.pop("LINES", None)


def pytest_configure(config: pytest.Config) -> None:
    SECRET_SCAN.install()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    terminalreporter.write_line(SECRET_SCAN.summary())


def pytest_sessionfinish(session: pytest.Session) -> None:
    # In a pytest-xdist worker (after its session fixtures, so after its history scan): the
    # counts go to the controller, which prints the summary.
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output["secret_scan"] = SECRET_SCAN.counts()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    counts = getattr(node, "workeroutput", {}).get("secret_scan")
    if counts is not None:
        SECRET_SCAN.add_counts(counts)


@pytest.fixture(scope="session")
def temporal_ui_port() -> int:
    """The dev server's web UI port (the UI screenshot test opens it)."""
    return free_ports().temporal_ui


@pytest.fixture(scope="session")
async def temporal_env(temporal_ui_port: int) -> AsyncIterator[WorkflowEnvironment]:
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(temporal_cli()),
        ui=True,
        ui_port=temporal_ui_port,
        search_attributes=list(SEARCH_ATTRIBUTES),
        data_converter=pydantic_data_converter,
        dev_server_extra_args=[
            "--dynamic-config-value",
            "limit.historyCount.suggestContinueAsNew=200",
            # A retired build reads "drained" seconds after its last pinned workflow closed
            # (3 minutes each by default), so the deploy tests can wait for it.
            "--dynamic-config-value",
            'matching.wv.VersionDrainageStatusVisibilityGracePeriod="1s"',
            "--dynamic-config-value",
            'matching.wv.VersionDrainageStatusRefreshInterval="1s"',
            *DEV_SERVER_DYNAMIC_CONFIG,
        ],
    )
    yield env
    try:
        # Every workflow the session ran, before the server and its histories go away.
        await SECRET_SCAN.check(env.client)
    finally:
        await env.shutdown()


@pytest.fixture
async def client(temporal_env: WorkflowEnvironment) -> Client:
    return temporal_env.client


@pytest.fixture
async def time_skipping_env() -> AsyncIterator[WorkflowEnvironment]:
    """The time-skipping test server: timers of hours pass in milliseconds.

    One per test (it starts in about 0.1 s): the server skips time only while nothing is in
    flight anywhere on it, so an activity a finished test left running would hold time to the
    wall clock for every later test until that activity's own timeout, half an hour or more."""
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=str(temporal_test_server()),
        data_converter=pydantic_data_converter,
    )
    # The spares' search attributes (all Keyword), which the dev server gets as arguments.
    await env.client.operator_service.add_search_attributes(
        AddSearchAttributesRequest(
            namespace=env.client.namespace,
            search_attributes={
                key.name: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD for key in SEARCH_ATTRIBUTES
            },
        )
    )
    yield env
    await env.shutdown()


@pytest.fixture
def task_queue() -> str:
    return f"tq-{uuid.uuid4()}"


# The tests that share the host's one libvirtd, all under this directory: they count its
# domains before and after, and some reuse a domain name.
LIBVIRT_TESTS = "tests/libvirt/"
# Tests that share one expensive module fixture which writes into the source tree: the wheel
# is built once, from `build/`, which two builds side by side tear out from under each other.
ONE_WORKER_MODULES = ("tests/ops/test_wheel.py",)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, which a plain run may lack
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Run in parallel (`make test`: pytest-xdist, `--dist loadgroup`), the libvirt tests stay
    on one worker, each of ONE_WORKER_MODULES on one worker, and the others are shared out one
    by one.

    Chosen by path here rather than with `xdist_group` marks: pytest-xdist 3.8 carries a mark's
    group in the test's node id, which pytest 9.2 no longer lets a plugin change, so the marks
    are silently ignored (pytest-dev/pytest-xdist#1386) and libvirt tests ran side by side."""
    from xdist.scheduler import LoadGroupScheduling

    class LibvirtOnOneWorker(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.startswith(LIBVIRT_TESTS):
                return "libvirt"
            module = nodeid.split("::", 1)[0]
            return module if module in ONE_WORKER_MODULES else nodeid

    return LibvirtOnOneWorker(config, log)

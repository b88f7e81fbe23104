"""The `virtflow` command line: one Typer app, its commands by family.

- processes (`processes.py`): dev, lab, demo, worker, api, receiver, codec-server
- spares, through the HTTP API (`spares.py`, shown by `spare_view.py`): prepare, status,
  release, cancel, window, list
- placement questions (`placement_questions.py`): explain, inventory
- the registered clusters (`clusters.py`): clusters
- the deploy gate (`replay.py`): replay
- groups: `config` (`config.py`), `warm` (`warm.py`)

Exit codes and error lines are the same for all (`common.py`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from runtime.settings import CONFIG_ENV, get_settings

from . import bookings, clusters, placement_questions, processes, replay, spares
from .config import config_app
from .warm import warm_app

app = typer.Typer(
    name="virtflow",
    help="Spare-node provisioning on Temporal.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(config_app, name="config")
app.add_typer(warm_app, name="warm")

# In the order `virtflow --help` lists them; None: the function's name.
COMMANDS: list[tuple[str | None, Callable[..., Any]]] = [
    (None, processes.dev),
    (None, processes.lab),
    (None, processes.demo),
    (None, processes.worker),
    (None, processes.api),
    (None, processes.receiver),
    (None, replay.replay),
    ("codec-server", processes.codec_server),
    (None, spares.prepare),
    (None, spares.status),
    (None, spares.release),
    (None, spares.cancel),
    (None, spares.window),
    (None, placement_questions.explain),
    ("list", spares.list_spares),
    (None, bookings.bookings),
    (None, placement_questions.inventory),
    (None, clusters.clusters),
]
for name, command in COMMANDS:
    app.command(name)(command)


@app.callback()
def main(
    config: Annotated[
        Path | None,
        typer.Option("--config", help="YAML settings file (same as VIRTFLOW_CONFIG)"),
    ] = None,
) -> None:
    if config is not None:
        os.environ[CONFIG_ENV] = str(config)
        get_settings.cache_clear()


def run_cli() -> NoReturn:
    """The `virtflow` entry point.

    It ends the process without the interpreter's teardown: the Temporal SDK's native runtime
    can crash there (SIGSEGV) after all the work is done, which would turn a success into a
    failure exit code. Everything that must be cleaned up is closed by the commands themselves.
    """
    try:
        app(prog_name="virtflow")
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)

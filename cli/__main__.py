"""`python -m cli` is the `virtflow` command."""

from .main import run_cli

run_cli()

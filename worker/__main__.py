"""`python -m worker` is the `virtflow` command."""

from .cli import run_cli

run_cli()

"""`python -m worker` is the `virtflow` command."""

from .cli import app

app(prog_name="virtflow")

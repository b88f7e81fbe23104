"""The `virtflow` command line: the processes (`dev`, `demo`, `worker`, `api`, `receiver`) and
the operator's commands, which reuse the API's spare operations."""

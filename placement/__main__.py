"""`python -m placement [FILE|-] [--policy policy.yaml] [--explain]`

Reads the placement JSON form (PLACEMENT.md) from FILE or stdin and prints the decision as
JSON, or a table with --explain. Exit 0 with a decision (also when nothing fits: the JSON says
so), 2 with a one-line message naming the field when the input is invalid.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from pydantic import ValidationError

from .engine import place
from .errors import PolicyError
from .explain import render_explanation
from .models import PlacementInput
from .policy import first_error, load_policy
from .registry import RegistryError


class InputError(Exception):
    pass


def _read(path: str | None) -> Any:
    try:
        if path in (None, "-"):
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"input: invalid JSON: {exc}") from None


def _decide(args: argparse.Namespace) -> str:
    data = _read(args.file)
    if not isinstance(data, dict):
        raise InputError("input: expected a JSON object")
    try:
        inp = PlacementInput.model_validate(data)
    except ValidationError as exc:
        key, message = first_error(exc)
        more = len(exc.errors()) - 1
        raise InputError(f"{key}: {message}" + (f" (and {more} more)" if more else "")) from None
    try:
        if args.policy:
            inp = inp.model_copy(update={"policy": load_policy(args.policy)})
        decision = place(inp)
    except PolicyError as exc:
        prefix = "" if args.policy else "policy."
        raise InputError(f"{prefix}{exc}") from None
    if args.explain:
        return render_explanation(inp, decision)
    return json.dumps(decision.to_json(), indent=2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m placement", description="Decide on which host a VM goes, and why."
    )
    parser.add_argument("file", nargs="?", help="placement JSON (default or '-': stdin)")
    parser.add_argument("--policy", help="policy YAML, replacing the input's policy")
    parser.add_argument("--explain", action="store_true", help="print a readable table")
    args = parser.parse_args(argv)
    try:
        print(_decide(args))
    except (InputError, RegistryError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

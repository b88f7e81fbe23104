"""Every failure type virtflow raises is in the catalogue (contracts/failures.py), and every
raise retries it or not as the catalogue says."""

from __future__ import annotations

import ast
from pathlib import Path

from contracts.failures import RETRY, Failure

REPO = Path(__file__).resolve().parents[2]
PRODUCT = (
    "api",
    "cli",
    "worker",
    "workflows",
    "activities",
    "provisioners",
    "hypervisors",
    "runtime",
    "contracts",
)


def calls() -> list[tuple[str, ast.Call]]:
    found = []
    for package in PRODUCT:
        for path in sorted((REPO / package).rglob("*.py")):
            where = path.relative_to(REPO).as_posix()
            for node in ast.walk(ast.parse(path.read_text(), filename=where)):
                if isinstance(node, ast.Call):
                    found.append((f"{where}:{node.lineno}", node))
    return found


def catalogued(node: ast.expr) -> Failure | None:
    """The catalogue's member `node` names (`Failure.X`), if it names one."""
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "Failure"
    ):
        return Failure[node.attr]
    return None


def keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def test_every_type_has_its_retry_decision_and_why() -> None:
    assert set(RETRY) == set(Failure)
    for failure, decision in RETRY.items():
        assert decision.why and "\n" not in decision.why, failure
        assert failure.retried is decision.retried


def test_no_raise_spells_a_failure_type_of_its_own() -> None:
    literal: list[str] = []
    for where, call in calls():
        typed = keyword(call, "type")
        if (
            isinstance(call.func, ast.Name)
            and call.func.id == "ApplicationError"
            and isinstance(typed, ast.Constant | ast.JoinedStr)
        ):
            literal.append(f"{where}: type={ast.unparse(typed)}")
        listed = keyword(call, "non_retryable_error_types")
        if isinstance(listed, ast.List):
            literal += [
                f"{where}: {ast.unparse(e)} in non_retryable_error_types"
                for e in listed.elts
                if catalogued(e) is None
            ]
    assert literal == []


def test_each_raise_retries_as_the_catalogue_says() -> None:
    wrong: list[str] = []
    seen: set[Failure] = set()
    for where, call in calls():
        if not (isinstance(call.func, ast.Name) and call.func.id == "ApplicationError"):
            continue
        typed = keyword(call, "type")
        failure = catalogued(typed) if typed is not None else None
        if failure is None:
            continue
        seen.add(failure)
        flag = keyword(call, "non_retryable")
        final = False if flag is None else ast.literal_eval(flag)
        if final is failure.retried:
            wrong.append(f"{where}: {failure.name} raised with non_retryable={final}")
    for where, call in calls():
        listed = keyword(call, "non_retryable_error_types")
        if isinstance(listed, ast.List):
            for element in listed.elts:
                failure = catalogued(element)
                if failure is not None and failure.retried:
                    wrong.append(f"{where}: {failure.name} is retried, yet listed as final")
    assert wrong == []
    # The catalogue names only types that are raised somewhere (or handed on by name).
    assert seen, "no raise found: the scan reads the wrong folders"

"""The import direction the README states is the one the code follows.

The README's chain (`cli -> api | worker -> workflows -> ...`) is read from the README itself,
so the two cannot drift apart: a package may import only packages of a later link of the
chain, never one of its own link or an earlier one. `lab/` (the simulated site) may be imported
only by `virtflow dev` and `virtflow demo`, `virtflow_client/` only by the command line.
Every import is counted, also one inside a function or a TYPE_CHECKING block.
"""

from __future__ import annotations

import ast
import gc
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# Who may import the two packages outside the chain, by module path.
OUTSIDE_THE_CHAIN = {
    "lab": ("cli/dev.py", "cli/demo.py"),
    "virtflow_client": ("cli/",),
}


def stated_chain() -> list[list[str]]:
    """The README's line `a -> b | c -> ...` as its links, top first."""
    readme = (REPO / "README.md").read_text()
    (line,) = [ln for ln in readme.splitlines() if re.fullmatch(r"\s*cli ->[\w |>-]+", ln)]
    return [[name.strip() for name in link.split("|")] for link in line.split("->")]


def imports_of(path: Path) -> set[str]:
    """The top-level names of every absolute import in the file."""
    found: set[str] = set()
    for node in ast.walk(parse(path)):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def parse(path: Path) -> ast.Module:
    """The file's syntax tree, built with the garbage collector held off.

    CPython 3.11 counts recursion while it builds the tree's objects; a finalizer that the
    collector runs meanwhile (an earlier test's asyncio future, logging that nobody read its
    exception) moves the count, and the parse fails with "AST constructor recursion depth
    mismatch", which says nothing about the file."""
    source = path.read_text()
    gc.disable()
    try:
        return ast.parse(source, filename=str(path))
    finally:
        gc.enable()


def layer_violations(chain: list[list[str]]) -> list[str]:
    layer = {package: depth for depth, link in enumerate(chain) for package in link}
    known = set(layer) | set(OUTSIDE_THE_CHAIN)
    wrong: list[str] = []
    gc.collect()  # what earlier tests left runs its finalizers now, not during a parse
    for package in layer:
        for path in sorted((REPO / package).rglob("*.py")):
            where = path.relative_to(REPO).as_posix()
            for target in sorted(imports_of(path) & known - {package}):
                if target in OUTSIDE_THE_CHAIN:
                    if not where.startswith(OUTSIDE_THE_CHAIN[target]):
                        wrong.append(f"{where} imports {target}")
                elif layer[target] <= layer[package]:
                    wrong.append(f"{where} imports {target}: not below {package}")
    return wrong


def test_the_readme_states_a_chain_of_every_product_package() -> None:
    chain = stated_chain()
    named = {package for link in chain for package in link}
    packages = {p.parent.name for p in REPO.glob("*/__init__.py")}
    assert packages - named - set(OUTSIDE_THE_CHAIN) - {"tests", "bench"} == set()
    assert named <= packages


def test_every_import_goes_down_the_readme_chain() -> None:
    assert layer_violations(stated_chain()) == []


@pytest.mark.parametrize(
    ("chain", "expected"),
    [
        # Swapping two links makes every import between them point up.
        (
            [["contracts"], ["runtime"], ["placement", "webhooks", "playbooks"]],
            "runtime/settings.py imports contracts: not below runtime",
        ),
        # Two packages of one link may not import each other.
        (
            [["runtime", "contracts"], ["placement", "webhooks", "playbooks"]],
            "runtime/settings.py imports contracts: not below runtime",
        ),
    ],
)
def test_a_chain_the_code_does_not_follow_is_reported(
    chain: list[list[str]], expected: str
) -> None:
    assert expected in layer_violations(chain)

"""The wheel is the product: built from this tree, installed with its `lab` extra into a fresh
virtualenv outside the repository, it runs `virtflow demo` end to end with the playbooks it
carries, and without the extra `demo` says what to install."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from runtime.settings import REPO_ROOT

# Resolving and installing every dependency, then a whole spare's life.
INSTALL_SECONDS = 600
DEMO_SECONDS = 300


def _run(args: list[str], cwd: Path, timeout: float, env: dict[str, str]) -> str:
    done = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"{' '.join(args)}: {done.returncode}\n{done.stdout}{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv with nothing but the wheel and its `lab` extra; returns its bin dir."""
    root = tmp_path_factory.mktemp("wheel")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    _run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(root / "dist"), str(REPO_ROOT)],
        cwd=root,
        timeout=INSTALL_SECONDS,
        env=env,
    )
    (wheel,) = (root / "dist").glob("virtflow-*.whl")
    # uv resolves and installs the wheel's dependencies from their declared bounds, as pip
    # would, in a tenth of pip's time (about 5 s instead of 45 here); it does not byte-compile
    # them either, so the demo below compiles only what it imports.
    uv = str(Path(sys.executable).with_name("uv"))
    _run(
        [uv, "venv", "--quiet", "--python", sys.executable, str(root / "venv")],
        cwd=root,
        timeout=INSTALL_SECONDS,
        env=env,
    )
    bin_dir = root / "venv" / "bin"
    _run(
        [uv, "pip", "install", "--quiet", "--python", str(bin_dir / "python"), f"{wheel}[lab]"],
        cwd=root,
        timeout=INSTALL_SECONDS,
        env=env,
    )
    return bin_dir


def _env(bin_dir: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV") and not k.startswith("VIRTFLOW_")
    }
    # ansible-playbook comes from the same venv, as a user's activated venv has it.
    env["PATH"] = os.pathsep.join([str(bin_dir), env.get("PATH", "")])
    return env


def test_the_installed_package_finds_its_playbooks_outside_the_source_tree(
    installed: Path, tmp_path: Path
) -> None:
    code = "from runtime.settings import Settings; print(Settings().playbook_dir)"
    out = _run([str(installed / "python"), "-c", code], tmp_path, 60, _env(installed))
    playbook_dir = Path(out.strip())
    assert playbook_dir.is_relative_to(installed.parent), playbook_dir
    assert not playbook_dir.is_relative_to(REPO_ROOT)
    assert (playbook_dir / "create_vm.yml").is_file()
    hypervisors = playbook_dir.parent / "hypervisors"
    assert (hypervisors / "lab" / "create.yml").is_file()
    assert (hypervisors / "libvirt" / "templates" / "domain.xml.j2").is_file()
    # Every hypervisor's own Ansible actions, which a playbook run names by directory.
    source = REPO_ROOT / "hypervisors"
    for own in [*source.glob("*/*_plugins/*.py"), *source.glob("*/library/*.py")]:
        assert (hypervisors / own.relative_to(source)).is_file(), own


def test_virtflow_demo_runs_from_the_installed_wheel(installed: Path, tmp_path: Path) -> None:
    env = {**_env(installed), "VIRTFLOW_STATE_DIR": str(tmp_path / "state")}
    done = subprocess.run(
        [str(installed / "virtflow"), "demo"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=DEMO_SECONDS,
        check=False,
    )
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert any(line.strip().startswith("ready") for line in out.splitlines()), out
    assert "webhook spare.ready received and verified" in out
    assert "webhook spare.released received and verified" in out
    assert "demo passed" in out
    assert (tmp_path / "state" / "demo" / "temporal.db").is_file()
    # A normal run is quiet: no traceback, no warning of virtflow, the SDK or its core.
    both = out + done.stderr
    for word in ("Traceback", "WARN", "Activity not found", "Completing activity as failed"):
        assert word not in both, both

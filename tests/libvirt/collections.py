"""The community collections the libvirt and Proxmox playbook variants use, offline.

`ansible-galaxy` needs its server; the PyPI `ansible` wheel bundles every community
collection (~55 MB download, ~470 MB installed). This takes the wheel with pip and extracts
only community.libvirt and community.proxmox (under 1 MB) into a directory that
`ANSIBLE_COLLECTIONS_PATH` can point at:

    python -m tests.libvirt.collections .virtflow/collections
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from hypervisors import ansible_collections

# The `ansible` release that goes with ansible-core 2.19.
ANSIBLE_WHEEL = "ansible>=12,<13"
# What the hypervisors declare (hypervisors/<name>/__init__.py), as paths in the wheel.
COLLECTIONS = tuple(name.replace(".", "/") for name in ansible_collections())
DEFAULT_DIR = Path(".virtflow/collections")


def collections_path() -> Path:
    """Where the extracted collections are (or will be)."""
    return Path(os.environ.get("VIRTFLOW_COLLECTIONS_DIR", DEFAULT_DIR)).resolve()


def installed(root: Path) -> bool:
    return all(
        (root / "ansible_collections" / name / "MANIFEST.json").is_file() for name in COLLECTIONS
    )


def fetch(root: Path) -> None:
    """Download the `ansible` wheel (no dependencies) and extract the two collections."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "-d",
                tmp,
                ANSIBLE_WHEEL,
            ],
            check=True,
        )
        (wheel,) = Path(tmp).glob("ansible-*.whl")
        prefixes = tuple(f"ansible_collections/{name}/" for name in COLLECTIONS)
        with zipfile.ZipFile(wheel) as archive:
            members = [n for n in archive.namelist() if n.startswith(prefixes)]
            archive.extractall(root, members)


def main(argv: list[str]) -> int:
    root = Path(argv[0]).resolve() if argv else collections_path()
    if not installed(root):
        fetch(root)
    print(root)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

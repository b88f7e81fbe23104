"""The lab's bootable guest: a small Debian built from Debian's packages, cached outside the clone.

A spare on the real hypervisor path is a libvirt/qemu domain booted from this image: a
debootstrap minbase with the cloud kernel (its initrd has virtio) and cloud-init, networking
by systemd-networkd (DHCP from qemu's user-mode network), cloud-init reading only a NoCloud
seed. The kernel and initrd sit beside the root disk for direct kernel boot, so no bootloader
is installed. The build runs once per recipe: the output directory is keyed by a hash of
everything below, and a finished build is renamed into place whole, so a repeated or
interrupted run never leaves a half image behind.

    python -m lab.guest_image [--cache /var/cache/virtflow]   # prints the image directory

Needs root and Debian's debootstrap, e2fsprogs and qemu-utils.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

DEFAULT_CACHE = Path(os.environ.get("VIRTFLOW_CACHE_DIR", "/var/cache/virtflow"))
MIRROR = os.environ.get("VIRTFLOW_DEBIAN_MIRROR", "http://deb.debian.org/debian")
SUITE = "bookworm"
# debootstrap cannot resolve cloud-init's virtual dependencies itself: minbase with the
# kernel first, cloud-init with apt inside the tree afterwards.
BASE_PACKAGES = ("linux-image-cloud-amd64", "systemd-sysv", "ca-certificates")
CHROOT_PACKAGES = ("cloud-init",)
KERNEL_CMDLINE = "root=/dev/vda rw console=ttyS0 quiet"

# Files written into the tree; part of the recipe hash.
GUEST_FILES: dict[str, str] = {
    # qemu's user-mode network answers DHCP (guest 10.0.2.15, host loopback at 10.0.2.2).
    "etc/systemd/network/10-virtio.network": "[Match]\nName=en* eth*\n\n[Network]\nDHCP=ipv4\n",
    # Only the NoCloud seed: probing cloud metadata services costs minutes under TCG.
    "etc/cloud/cloud.cfg.d/90-virtflow.cfg": (
        "datasource_list: [NoCloud, None]\nnetwork: {config: disabled}\ndisable_root: false\n"
    ),
    "etc/hostname": "virtflow-guest\n",
    "etc/fstab": "/dev/vda / ext4 rw,relatime 0 1\n",
    # Services must not start inside the build tree.
    "usr/sbin/policy-rc.d": "#!/bin/sh\nexit 101\n",
}
PRUNE = ("usr/share/doc", "usr/share/man", "usr/share/locale", "usr/share/info", "var/cache/apt")


@dataclass(frozen=True)
class GuestImage:
    """A built image: boot it with `kernel`, `initrd` and `cmdline`, disk `root` (qcow2)."""

    directory: Path

    @property
    def root(self) -> Path:
        return self.directory / "root.qcow2"

    @property
    def kernel(self) -> Path:
        return self.directory / "vmlinuz"

    @property
    def initrd(self) -> Path:
        return self.directory / "initrd.img"

    @property
    def cmdline(self) -> str:
        return KERNEL_CMDLINE

    def exists(self) -> bool:
        return (self.directory / "recipe.json").is_file()


def recipe() -> dict[str, object]:
    return {
        "suite": SUITE,
        "base": BASE_PACKAGES,
        "chroot": CHROOT_PACKAGES,
        "files": GUEST_FILES,
        "prune": PRUNE,
        "cmdline": KERNEL_CMDLINE,
        "version": 1,
    }


def recipe_hash() -> str:
    return hashlib.sha256(json.dumps(recipe(), sort_keys=True).encode()).hexdigest()[:12]


def cached(cache: Path = DEFAULT_CACHE) -> GuestImage:
    """The image this recipe builds (it may not exist yet)."""
    return GuestImage(cache / f"guest-{recipe_hash()}")


def missing_tools() -> list[str]:
    needed = {"debootstrap": "debootstrap", "mkfs.ext4": "e2fsprogs", "qemu-img": "qemu-utils"}
    return [pkg for tool, pkg in needed.items() if shutil.which(tool) is None]


def _run(argv: list[str], **kwargs: object) -> None:
    subprocess.run(argv, check=True, **kwargs)  # type: ignore[call-overload]


def _chroot_install(root: Path) -> None:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive", "LC_ALL": "C"}
    _run(["mount", "-t", "proc", "proc", str(root / "proc")])
    try:
        _run(["chroot", str(root), "apt-get", "update", "-qq"], env=env)
        install = ["apt-get", "install", "-y", "-qq", "--no-install-recommends"]
        _run(["chroot", str(root), *install, *CHROOT_PACKAGES], env=env)
        _run(["chroot", str(root), "apt-get", "clean"], env=env)
    finally:
        _run(["umount", str(root / "proc")])


def _configure(root: Path) -> None:
    for rel, text in GUEST_FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "usr/sbin/policy-rc.d").chmod(0o755)
    wants = root / "etc/systemd/system/multi-user.target.wants"
    wants.mkdir(parents=True, exist_ok=True)
    unit = wants / "systemd-networkd.service"
    if not unit.exists():
        unit.symlink_to("/lib/systemd/system/systemd-networkd.service")
    # No root password: the console is for reading, cloud-init does the work.
    _run(["chroot", str(root), "passwd", "-d", "root"])


def build(cache: Path = DEFAULT_CACHE) -> GuestImage:
    """Build the image unless this recipe's build is already in the cache."""
    image = cached(cache)
    if image.exists():
        return image
    if os.geteuid() != 0:
        raise SystemExit("building the guest image needs root (debootstrap, chroot)")
    if missing := missing_tools():
        raise SystemExit(f"building the guest image needs: apt-get install {' '.join(missing)}")
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache, prefix=".build-") as tmp:
        work = Path(tmp)
        root = work / "root"
        _run(
            [
                "debootstrap",
                "--variant=minbase",
                f"--include={','.join(BASE_PACKAGES)}",
                SUITE,
                str(root),
                MIRROR,
            ]
        )
        _chroot_install(root)
        _configure(root)
        (root / "usr/sbin/policy-rc.d").unlink()
        out = work / "image"
        out.mkdir()
        shutil.copyfile(sorted((root / "boot").glob("vmlinuz-*"))[-1], out / "vmlinuz")
        shutil.copyfile(sorted((root / "boot").glob("initrd.img-*"))[-1], out / "initrd.img")
        for rel in PRUNE:
            shutil.rmtree(root / rel, ignore_errors=True)
        for lists in (root / "var/lib/apt/lists").glob("*_*"):
            lists.unlink()
        size_mb = int(subprocess.check_output(["du", "-sm", str(root)]).split()[0])
        raw = work / "root.ext4"
        # Room for cloud-init's writes and the join script's state; an overlay holds them.
        _run(["mkfs.ext4", "-q", "-d", str(root), "-L", "root", str(raw), f"{size_mb + 256}M"])
        _run(["qemu-img", "convert", "-q", "-O", "qcow2", str(raw), str(out / "root.qcow2")])
        (out / "recipe.json").write_text(json.dumps(recipe(), indent=1, sort_keys=True))
        out.rename(image.directory)
    return image


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--print-only", action="store_true", help="print where it would be")
    args = parser.parse_args()
    image = cached(args.cache) if args.print_only else build(args.cache)
    print(image.directory)


if __name__ == "__main__":
    main()

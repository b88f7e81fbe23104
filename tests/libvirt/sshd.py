"""An OpenSSH server on loopback for the session: how a site's worker reaches its libvirt hosts.

A site's libvirt hosts are reached over SSH twice per create: libvirt's own `qemu+ssh://`
transport (the `ssh` binary running `virt-ssh-helper` on the host) and Ansible's ssh
connection for the tasks delegated to the host (the disk, the seed). This server is the real
`sshd` of Debian's `openssh-server`, with everything of its own in one directory: its config,
port, host key, a client key made for it and the `known_hosts` that trusts the host key.
Only `root` may log in, by that key only. The system's sshd and its config, and root's
`~/.ssh`, are never touched.

Clients use it through one `ssh_config` and a small wrapper, `ssh -F ssh_config "$@"`, that
also notes each call's arguments (never its stdin, where Ansible pipelines its modules):
Ansible runs it as `ansible_ssh_executable`, libvirt through the URI's `command=` parameter
(libvirt's ssh transport has no parameter for a known_hosts file of its own). The notes show
that both really went over SSH.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

# The host name the tests give the hypervisor: Ansible takes it from the inventory, libvirt
# from the URI, both reach this sshd.
HOST = "127.0.0.1"
# sshd answers within a second; a loaded machine gets this long.
LISTEN_WITHIN_SECONDS = 30.0


@dataclass(frozen=True)
class LoopbackSshd:
    """A running sshd and what a client needs to reach it as root."""

    directory: Path
    port: int

    @property
    def ssh_config(self) -> Path:
        return self.directory / "ssh_config"

    @property
    def ssh_command(self) -> Path:
        """`ssh -F ssh_config "$@"`, noting the arguments in `calls()`."""
        return self.directory / "ssh"

    def calls(self) -> list[str]:
        """The argument lists `ssh_command` was run with, one line each."""
        log = self.directory / "ssh-calls.log"
        return log.read_text().splitlines() if log.exists() else []

    @property
    def control_dir(self) -> Path:
        """Where the clients' master connections live (closed when the server stops)."""
        return self.directory / "cp"

    @property
    def libvirt_uri_template(self) -> str:
        return f"qemu+ssh://root@{{host}}/system?command={self.ssh_command}"

    def inventory(self) -> dict[str, object]:
        """An Ansible inventory (YAML form) in which the host is reached over this sshd."""
        return {
            "all": {
                "hosts": {
                    HOST: {
                        "ansible_connection": "ssh",
                        "ansible_ssh_executable": str(self.ssh_command),
                        "ansible_control_path_dir": str(self.control_dir),
                        "ansible_python_interpreter": "/usr/bin/python3",
                    }
                }
            }
        }

    def run(self, *command: str) -> subprocess.CompletedProcess[str]:
        """A command on the host as root, over this sshd."""
        return subprocess.run(
            ["ssh", "-F", str(self.ssh_config), HOST, *command],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )


def why_not() -> str | None:
    """Why no sshd can run here, or None."""
    if shutil.which("sshd") is None and not Path("/usr/sbin/sshd").exists():
        return "sshd is not installed: apt-get install openssh-server (`make libvirt`)"
    for tool in ("ssh", "ssh-keygen"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed: apt-get install openssh-client"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _keygen(path: Path, comment: str) -> str:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
        check=True,
    )
    return path.with_suffix(".pub").read_text().strip()


def _listening(port: int) -> bool:
    try:
        socket.create_connection((HOST, port), timeout=1).close()
    except OSError:
        return False
    return True


def _write(path: Path, text: str, mode: int = 0o600) -> None:
    path.write_text(text)
    path.chmod(mode)


@contextmanager
def loopback_sshd(directory: Path) -> Iterator[LoopbackSshd]:
    """Start sshd in `directory` (created, 0700) and stop it, and Ansible's persistent
    connections to it, afterwards."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    server = LoopbackSshd(directory, _free_port())
    server.control_dir.mkdir(mode=0o700, exist_ok=True)
    host_key = directory / "host_ed25519"
    host_public = _keygen(host_key, "virtflow-test-host")
    client_public = _keygen(directory / "client_ed25519", "virtflow-test-client")
    _write(directory / "authorized_keys", client_public + "\n")
    _write(directory / "known_hosts", f"[{HOST}]:{server.port} {host_public}\n")
    _write(
        directory / "sshd_config",
        f"""ListenAddress {HOST}:{server.port}
HostKey {host_key}
PidFile {directory / "sshd.pid"}
AuthorizedKeysFile {directory / "authorized_keys"}
# The key file is ours (0600 in a 0700 directory), but its directory sits under the
# world-writable /tmp, which the ownership check of every path component refuses.
StrictModes no
AllowUsers root
PermitRootLogin prohibit-password
AuthenticationMethods publickey
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
X11Forwarding no
AllowTcpForwarding no
PrintMotd no
# Ansible moves files with sftp when it cannot pipeline.
Subsystem sftp internal-sftp
# A session opens many connections at once (Ansible and libvirt each per task).
MaxStartups 100
""",
    )
    _write(
        server.ssh_config,
        f"""Host {HOST}
  Port {server.port}
  User root
  IdentityFile {directory / "client_ed25519"}
  IdentitiesOnly yes
  UserKnownHostsFile {directory / "known_hosts"}
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  BatchMode yes
  # libvirt opens a connection per call: one master connection saves each its handshake.
  ControlMaster auto
  ControlPath {server.control_dir}/%C
  ControlPersist 60
""",
    )
    _write(
        server.ssh_command,
        # One line a call: a multi-line command (a shell script) is logged with spaces.
        f'#!/bin/sh\nprintf "%s\\n" "$(printf "%s" "$*" | tr "\\n" " ")"'
        f" >> {directory / 'ssh-calls.log'}\n"
        f'exec ssh -F {server.ssh_config} "$@"\n',
        0o700,
    )
    # sshd refuses to start without its privilege separation directory, which the package's
    # service (not run here) would create.
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    sshd = shutil.which("sshd") or "/usr/sbin/sshd"
    log = directory / "sshd.log"
    process = subprocess.Popen(
        [sshd, "-D", "-f", str(directory / "sshd_config"), "-E", str(log)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + LISTEN_WITHIN_SECONDS
        while not _listening(server.port):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"sshd did not start: {log.read_text(errors='replace')}")
            time.sleep(0.1)  # polling the port: sshd -D has no readiness notice
        yield server
    finally:
        for control in server.control_dir.iterdir():
            subprocess.run(
                [
                    "ssh",
                    "-F",
                    str(server.ssh_config),
                    "-o",
                    f"ControlPath={control}",
                    "-O",
                    "exit",
                    HOST,
                ],
                capture_output=True,
                timeout=30,
                check=False,
            )
        process.terminate()
        process.wait(timeout=30)

"""The lab API's own certificate authority and serving certificate, made at start.

kubectl sends a bearer token only over TLS, so the lab serves https with a CA it makes
itself and puts that CA into the kubeconfig (`certificate-authority-data`), as kubeadm does.
The serving certificate names 127.0.0.1 and localhost, and 10.0.2.2: the address at which a
qemu guest on user-mode networking reaches the host's loopback.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

SERVER_IPS = ("127.0.0.1", "10.0.2.2")
SERVER_NAMES = ("localhost", "kubernetes", "kubernetes.default.svc")
VALID_FOR = datetime.timedelta(days=365)


@dataclass(frozen=True)
class LabCertificates:
    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes

    def write(self, directory: Path) -> tuple[Path, Path]:
        """The serving certificate and its key as files (uvicorn reads paths); key 0600."""
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        cert, key = directory / "apiserver.crt", directory / "apiserver.key"
        cert.write_bytes(self.cert_pem)
        key.touch(mode=0o600)
        key.write_bytes(self.key_pem)
        return cert, key

    def client_context(self) -> ssl.SSLContext:
        """An SSL context that trusts only the lab CA (for raw HTTP clients in tests)."""
        return ssl.create_default_context(cadata=self.ca_pem.decode())


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def make_certificates() -> LabCertificates:
    """A fresh CA and a serving certificate signed by it (P-256 keys: made in milliseconds)."""
    now = datetime.datetime.now(datetime.UTC)
    start = now - datetime.timedelta(minutes=5)  # tolerate a little clock skew
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("virtflow-lab-ca")
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(now + VALID_FOR)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = [x509.DNSName(n) for n in SERVER_NAMES]
    names += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in SERVER_IPS]
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("kube-apiserver"))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(now + VALID_FOR)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    return LabCertificates(
        ca_pem=ca.public_bytes(serialization.Encoding.PEM),
        cert_pem=cert.public_bytes(serialization.Encoding.PEM),
        key_pem=key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )

"""Self-signed CA and broker certificate for the SSL listeners, made with the ``openssl`` CLI.

Kafka reads PEM key/trust stores directly (``ssl.keystore.type=PEM``), so no JKS and no
``keytool`` dance. The broker certificate carries ``IP:127.0.0.1`` and ``DNS:localhost`` as
subject alternative names so that clients with hostname verification on accept it for either
way of writing the loopback address.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class TlsMaterial:
    """Paths of the generated PEM files."""

    ca_file: Path
    """CA certificate; give it to clients as their trust anchor."""
    ca_key: Path
    keystore: Path
    """Broker private key (PKCS#8, unencrypted) followed by its certificate chain."""
    truststore: Path
    """Same CA certificate, as the broker's truststore."""


def _openssl(*args: str, cwd: Path) -> None:
    exe = shutil.which("openssl")
    if exe is None:
        raise RuntimeError("the `openssl` command is needed to make test certificates")
    proc = subprocess.run([exe, *args], cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args[:2])} failed:\n{proc.stderr}")


def make_tls_material(directory: Path, days: int = 30) -> TlsMaterial:
    """Create (or reuse, if already there) a CA and a loopback broker certificate.

    Args:
        directory: Where the PEM files go; created if missing.
        days: Validity of both certificates.

    Returns:
        The paths of the CA certificate, broker keystore and truststore.

    Raises:
        RuntimeError: if ``openssl`` is missing or fails.
    """
    directory.mkdir(parents=True, exist_ok=True)
    material = TlsMaterial(
        ca_file=directory / "ca.pem",
        ca_key=directory / "ca.key",
        keystore=directory / "broker-keystore.pem",
        truststore=directory / "broker-truststore.pem",
    )
    if material.keystore.exists() and material.truststore.exists():
        return material

    _openssl(
        "genpkey",
        "-algorithm",
        "RSA",
        "-pkeyopt",
        "rsa_keygen_bits:2048",
        "-out",
        "ca.key",
        cwd=directory,
    )
    _openssl(
        "req",
        "-x509",
        "-new",
        "-key",
        "ca.key",
        "-sha256",
        "-days",
        str(days),
        "-subj",
        "/CN=aiokafka test CA",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
        "-out",
        "ca.pem",
        cwd=directory,
    )
    _openssl(
        "genpkey",
        "-algorithm",
        "RSA",
        "-pkeyopt",
        "rsa_keygen_bits:2048",
        "-out",
        "broker.key",
        cwd=directory,
    )
    _openssl(
        "req",
        "-new",
        "-key",
        "broker.key",
        "-subj",
        "/CN=localhost",
        "-out",
        "broker.csr",
        cwd=directory,
    )
    (directory / "broker.ext").write_text(
        "basicConstraints=CA:FALSE\n"
        "keyUsage=critical,digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=serverAuth,clientAuth\n"
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
    )
    _openssl(
        "x509",
        "-req",
        "-in",
        "broker.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        str(days),
        "-sha256",
        "-extfile",
        "broker.ext",
        "-out",
        "broker.pem",
        cwd=directory,
    )

    key = (directory / "broker.key").read_text()
    cert = (directory / "broker.pem").read_text()
    ca = material.ca_file.read_text()
    material.keystore.write_text(key + cert + ca)
    material.truststore.write_text(ca)
    return material

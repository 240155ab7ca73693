"""Certificates made in the test, and TLS servers on 127.0.0.1 that present them: for the
tests of what mcpctl says about a remote server's TLS (doctor's step, its network layer, a
registry behind HTTPS)."""

from __future__ import annotations

import datetime
import ipaddress
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any


def make_key() -> Any:
    from cryptography.hazmat.primitives.asymmetric import ec

    return ec.generate_private_key(ec.SECP256R1())


def make_certificate(
    subject: str, key: Any, issuer: tuple[str, Any] | None, days: tuple[int, int], ca: bool
) -> Any:
    """A certificate for ``subject`` valid from ``days[0]`` to ``days[1]`` days from now,
    signed by ``issuer`` (its name and key) or by itself; a leaf (and a self-signed one) is
    for 127.0.0.1."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    issuer_name, issuer_key = issuer or (subject, key)
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
        .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer_name)]))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now + datetime.timedelta(days=days[0]))
        .not_valid_after(now + datetime.timedelta(days=days[1]))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if not ca or issuer is None:
        san = x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
        builder = builder.add_extension(san, critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def write_pem(cert: Any, key: Any, folder: Path, stem: str) -> tuple[Path, Path]:
    """``cert`` and ``key`` written as ``folder/stem.pem`` and ``folder/stem.key``."""
    from cryptography.hazmat.primitives import serialization

    cert_path, key_path = folder / f"{stem}.pem", folder / f"{stem}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ))  # fmt: skip
    return cert_path, key_path


@contextmanager
def tls_servers() -> Iterator[Callable[[Path, Path], int]]:
    """``start(cert, key) -> port``: TLS servers on 127.0.0.1 that complete handshakes (then
    close), all stopped when the block ends."""
    stop = threading.Event()
    threads: list[threading.Thread] = []
    with ExitStack() as stack:

        def start(cert: Path, key: Path) -> int:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(cert, key)
            listener = stack.enter_context(socket.create_server(("127.0.0.1", 0)))
            listener.settimeout(0.2)  # so the loop sees ``stop``

            def serve() -> None:
                while not stop.is_set():
                    try:
                        conn, _ = listener.accept()
                    except OSError:
                        continue
                    conn.settimeout(10)
                    try:
                        with context.wrap_socket(conn, server_side=True):
                            pass
                    except OSError:  # the client refused the certificate: expected
                        conn.close()

            thread = threading.Thread(target=serve, daemon=True)
            thread.start()
            threads.append(thread)
            return int(listener.getsockname()[1])

        try:
            yield start
        finally:
            stop.set()
            for thread in threads:
                thread.join(5)

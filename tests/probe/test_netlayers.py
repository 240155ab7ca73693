"""doctor's network layers of a remote server: a URL's host and port, the name resolved, a TCP
connection and the TLS handshake -- against sockets and TLS servers started by the test,
with certificates made here."""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpctl.probe.netlayers import (
    LayerFailed,
    TlsReport,
    check_tls,
    connect_tcp,
    host_and_port,
    is_address,
    resolve_host,
)
from tests.conftest import reserved_port
from tests.tlsserver import make_certificate, make_key, tls_servers, write_pem

DEADLINE = 30  # seconds: generous, the machine may be busy


def run(work: Callable[[], Any]) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(DEADLINE):
            return await work()

    return anyio.run(bounded)


def failure(work: Callable[[], Any]) -> LayerFailed:
    with pytest.raises(LayerFailed) as caught:
        run(work)
    return caught.value


@pytest.mark.parametrize(
    ("url", "found"),
    [
        ("https://example.com/mcp", ("example.com", 443)),
        ("HTTPS://Example.COM/mcp", ("example.com", 443)),
        ("http://example.com/mcp", ("example.com", 80)),
        ("http://example.com:8080/mcp", ("example.com", 8080)),
        ("https://[::1]:8443/", ("::1", 8443)),
        ("file:///mcp", ("", 80)),
    ],
)
def test_host_and_port(url: str, found: tuple[str, int]) -> None:
    assert host_and_port(url) == found


def test_is_address() -> None:
    assert is_address("127.0.0.1") and is_address("::1")
    assert not is_address("localhost") and not is_address("") and not is_address("1.2.3")


def test_a_name_resolves_to_its_addresses_once_each() -> None:
    found = run(lambda: resolve_host("localhost", 80, 10))
    assert "127.0.0.1" in found or "::1" in found
    assert len(found) == len(set(found))  # one per address, not per socket type
    assert run(lambda: resolve_host("127.0.0.1", 443, 10)) == ["127.0.0.1"]


def test_what_does_not_resolve() -> None:
    empty = failure(lambda: resolve_host("", 443, 10))
    assert (empty.message, empty.fix) == ("the URL has no host", "fix the entry's url")
    unknown = failure(lambda: resolve_host("no-such-host.invalid", 443, 10))
    assert unknown.message.startswith("no-such-host.invalid does not resolve: ")
    # The resolver's words, not Python's rendering of its error ("[Errno -2] ...").
    assert "[Errno" not in unknown.message and unknown.message[-1] != " "
    assert unknown.fix == "check the host name in the entry's url, and the network"


@pytest.fixture
def stuck_resolver(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """A resolver that never answers (as a DNS server that drops queries): each lookup waits
    until the test ends. The event says whether a lookup was still waiting when it ended."""
    released, returned = threading.Event(), threading.Event()

    def never(*args: object, **kwargs: object) -> list[Any]:
        released.wait(DEADLINE)
        returned.set()
        return []

    monkeypatch.setattr(socket, "getaddrinfo", never)
    yield returned
    released.set()


def test_a_name_that_does_not_resolve_in_time(stuck_resolver: threading.Event) -> None:
    late = failure(lambda: resolve_host("slow.example", 443, 0.2))
    assert (late.message, late.fix) == (
        "slow.example did not resolve within 0.2 s",
        "check the network and DNS settings",
    )
    # The answer came at the time limit, not when the lookup gave up: it is left behind.
    assert not stuck_resolver.is_set()


def test_a_name_that_resolves_to_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket, "getaddrinfo", lambda *args, **kwargs: [])
    none = failure(lambda: resolve_host("empty.example", 443, 10))
    assert (none.message, none.fix) == (
        "empty.example resolves to no address",
        "check the host name",
    )
    assert str(none) == "empty.example resolves to no address"  # the exception's own text


@pytest.fixture
def listener() -> Iterator[int]:
    """A port listening on 127.0.0.1 alone (127.0.0.2, loopback too, refuses it)."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield int(server.getsockname()[1])


def test_the_first_address_that_accepts_is_the_answer(listener: int) -> None:
    assert run(lambda: connect_tcp(["127.0.0.1", "127.0.0.2"], listener, 10)) == "127.0.0.1"
    assert run(lambda: connect_tcp(["127.0.0.2", "127.0.0.1"], listener, 10)) == "127.0.0.1"


def test_no_address_accepts() -> None:
    with reserved_port() as port:
        refused = failure(lambda: connect_tcp(["127.0.0.2", "127.0.0.1"], port, 10))
    # The last failure is said.
    assert refused.message == f"cannot connect: 127.0.0.1 port {port}: connection refused"
    assert refused.fix == "is the server running and listening on that port, and is the URL right?"
    assert failure(lambda: connect_tcp([], 443, 10)).message == "cannot connect: no address"


# --- TLS -----------------------------------------------------------------------------------


@pytest.fixture
def tls_server() -> Iterator[Callable[[Path, Path], int]]:
    """``start(cert, key) -> port``: TLS servers on 127.0.0.1 that complete handshakes."""
    with tls_servers() as start:
        yield start


@pytest.fixture
def trusted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., tuple[Path, Path]]:
    """``leaf(days)``: a certificate for 127.0.0.1 from a CA this machine trusts."""
    ca_key = make_key()
    ca = make_certificate("netlayers test CA", ca_key, None, (-30, 365), ca=True)
    ca_path, _ = write_pem(ca, ca_key, tmp_path, "ca")
    monkeypatch.setenv("SSL_CERT_FILE", str(ca_path))

    def leaf(days: tuple[int, int]) -> tuple[Path, Path]:
        key = make_key()
        cert = make_certificate("127.0.0.1", key, ("netlayers test CA", ca_key), days, ca=False)
        return write_pem(cert, key, tmp_path, "leaf")

    return leaf


def test_a_verified_handshake_says_who_and_until_when(tls_server: Any, trusted: Any) -> None:
    port = tls_server(*trusted((-1, 90)))
    report = run(lambda: check_tls("127.0.0.1", port, "127.0.0.1", 10))
    assert isinstance(report, TlsReport)
    assert report.version is not None and report.version.startswith("TLS")
    assert (report.subject, report.issuer) == ("127.0.0.1", "netlayers test CA")
    assert report.not_after is not None and report.not_after.endswith("+00:00")
    assert report.days_left in (88, 89)  # whole days left, rounded down


def test_an_expired_certificate(tls_server: Any, trusted: Any) -> None:
    port = tls_server(*trusted((-10, -1)))
    failed = failure(lambda: check_tls("127.0.0.1", port, "127.0.0.1", 10))
    assert failed.message.startswith("the certificate is not trusted: ")
    assert "expired" in failed.message
    assert failed.fix == "the server's certificate has expired: renew it on the server"


def test_a_certificate_for_another_name(tls_server: Any, trusted: Any) -> None:
    port = tls_server(*trusted((-1, 90)))
    failed = failure(lambda: check_tls("localhost", port, "127.0.0.1", 10))
    assert failed.fix is not None and failed.fix.startswith("the certificate is for another name")


@pytest.mark.parametrize(
    ("said", "fix"),
    [
        ("self-signed certificate", "the server's certificate is self-signed"),
        ("self signed certificate in certificate chain", "the server's certificate is self-signed"),
        ("certificate has expired", "the server's certificate has expired"),
        ("certificate is not yet valid", "the server's certificate is not valid yet"),
        ("Hostname mismatch, certificate is not valid for 'x'.", "the certificate is for another"),
        ("IP address mismatch, certificate is not valid for '::1'.", "the certificate is for"),
        ("unable to get local issuer certificate", "the certificate's issuer is not trusted"),
    ],
)
def test_each_verification_failure_has_its_fix(said: str, fix: str) -> None:
    from mcpctl.probe.netlayers import _tls_problem

    exc = ssl.SSLCertVerificationError(1, f"[SSL: CERTIFICATE_VERIFY_FAILED] {said}")
    exc.verify_message = said
    message, given = _tls_problem(exc)
    assert message == f"the certificate is not trusted: {said}"
    assert given.startswith(fix)
    bare = ssl.SSLCertVerificationError(1, said)  # no verify_message: its own words
    assert _tls_problem(bare)[1] == given


def test_a_port_that_speaks_no_tls(listener: int) -> None:
    """It accepts, then answers nothing: the handshake times out."""
    failed = failure(lambda: check_tls("127.0.0.1", listener, "127.0.0.1", 0.5))
    assert failed.message == "no TLS handshake within 0.5 s"
    assert failed.fix == "does the server speak HTTPS on that port?"


def test_a_port_that_answers_plain_http() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = int(server.getsockname()[1])

        def answer() -> None:
            conn, _ = server.accept()
            with conn:
                conn.recv(4096)
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

        thread = threading.Thread(target=answer, daemon=True)
        thread.start()
        failed = failure(lambda: check_tls("127.0.0.1", port, "127.0.0.1", 10))
        thread.join(10)
    # OpenSSL's reason alone, not the whole "[SSL: ...] ... (_ssl.c:NNN)" line.
    assert failed.message.startswith("the TLS handshake failed: ")
    assert "[SSL" not in failed.message and "_ssl.c" not in failed.message
    assert failed.fix == "does the server speak HTTPS on that port? (http:// instead?)"


def test_a_handshake_that_times_out_lets_go_of_the_connection() -> None:
    """The handshake's own time limit closes the connection: the server sees it end, it is
    not left open behind the failure."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = int(server.getsockname()[1])
        ended = threading.Event()

        def silent() -> None:
            conn, _ = server.accept()
            with conn:
                conn.settimeout(DEADLINE)
                try:
                    while conn.recv(4096):  # the client's hello, then nothing until it closes
                        pass
                    ended.set()
                except OSError:
                    pass

        thread = threading.Thread(target=silent, daemon=True)
        thread.start()
        failed = failure(lambda: check_tls("127.0.0.1", port, "127.0.0.1", 0.3))
        thread.join(DEADLINE)
    assert failed.message == "no TLS handshake within 0.3 s"
    assert ended.is_set()


def test_a_port_that_refuses() -> None:
    with reserved_port() as port:
        failed = failure(lambda: check_tls("127.0.0.1", port, "127.0.0.1", 10))
    assert failed.message == "the TLS connection failed: Connection refused"
    assert failed.fix is None


# --- what mutation testing found unpinned: connections that time out or fail otherwise --------
# 127.0.0.1 only refuses or accepts: anyio.connect_tcp is stood in for by one that hangs or
# fails as a port that drops SYNs or an unreachable network would (TEST-NET addresses).

HANGS, UNREACHABLE, WORDLESS = "192.0.2.1", "192.0.2.2", "192.0.2.3"


class Accepted:
    async def aclose(self) -> None:
        pass


@pytest.fixture
def network(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    tried: list[str] = []

    async def connect(address: str, port: int) -> Accepted:
        tried.append(address)
        if address == HANGS:
            await anyio.sleep_forever()
        if address == UNREACHABLE:  # as anyio says it: its own words, the system's as the cause
            raise OSError("All connection attempts failed") from OSError(113, "No route to host")
        if address == WORDLESS:
            raise OSError("the network said nothing")
        return Accepted()

    monkeypatch.setattr(anyio, "connect_tcp", connect)
    return tried


def test_an_address_that_does_not_answer_or_cannot_be_reached_is_passed_over(
    network: list[str],
) -> None:
    addresses = [HANGS, UNREACHABLE, WORDLESS, "198.51.100.1"]
    assert run(lambda: connect_tcp(addresses, 443, 0.2)) == "198.51.100.1"
    assert network == addresses


@pytest.mark.parametrize(
    ("addresses", "said"),
    [
        ([HANGS], f"{HANGS} port 443: no answer within 0.2 s"),
        ([UNREACHABLE], f"{UNREACHABLE} port 443: No route to host"),
        ([WORDLESS], f"{WORDLESS} port 443: the network said nothing"),
        ([UNREACHABLE, HANGS], f"{HANGS} port 443: no answer within 0.2 s"),
        ([HANGS, WORDLESS], f"{WORDLESS} port 443: the network said nothing"),
    ],
)
def test_a_connection_that_times_out_or_fails_says_why(
    network: list[str], addresses: list[str], said: str
) -> None:
    refused = failure(lambda: connect_tcp(addresses, 443, 0.2))
    assert refused.message == f"cannot connect: {said}"

"""doctor's HTTP layers of a remote server, against a real HTTP server started by the test:
the first answer to ``initialize`` (or to the event stream's GET) and the OAuth metadata
found from it."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import pytest

from mcpctl.config.model import AuthConfig, ServerEntry
from mcpctl.config.placeholders import ResolvedEntry
from mcpctl.probe.httplayers import AuthMetadata, HttpAnswer, auth_metadata, check_http
from mcpctl.probe.netlayers import LayerFailed
from tests.conftest import reserved_port

DEADLINE = 30  # seconds: generous, the machine may be busy


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Site:
    """What the server answers, by path: (status, headers, body); 404 for the rest."""

    url: str = ""
    routes: dict[str, tuple[int, dict[str, str], bytes]] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)
    hang: threading.Event | None = None  # set: every request waits for it before answering
    # Paths whose body never ends: the headers sent, the stream held open until the test ends.
    endless: set[str] = field(default_factory=set)
    ended: threading.Event = field(default_factory=threading.Event)

    def json(self, path: str, data: Any, status: int = 200) -> None:
        body = json.dumps(data).encode()
        self.routes[path] = (status, {"Content-Type": "application/json"}, body)

    def paths(self) -> list[str]:
        return [s.path for s in self.seen]


@pytest.fixture
def site() -> Iterator[Site]:
    found = Site()

    class Handler(BaseHTTPRequestHandler):
        def answer(self) -> None:
            size = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(size) if size else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            found.seen.append(Seen(self.command, self.path, headers, body))
            if found.hang is not None:
                found.hang.wait(DEADLINE)
                return
            status, extra, content = found.routes.get(self.path, (404, {}, b""))
            self.send_response(status)
            for name, value in extra.items():
                self.send_header(name, value)
            if self.path in found.endless:
                self.end_headers()
                self.wfile.write(content)
                self.wfile.flush()
                found.ended.wait(DEADLINE)
                return
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

        do_GET = do_POST = answer

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    # a short poll: shutdown() waits for the next one (0.5 s by default, at every test's end)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    found.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield found
    finally:
        found.ended.set()
        if found.hang is not None:
            found.hang.set()
        server.shutdown()
        server.server_close()
        thread.join(10)


def http(entry: ServerEntry, transport: str | None = None, timeout: float = 10.0) -> HttpAnswer:
    resolved = ResolvedEntry("remote", entry)

    async def go() -> HttpAnswer:
        with anyio.fail_after(DEADLINE):
            return await check_http(resolved, transport, timeout)

    return anyio.run(go)


def metadata(url: str, named: str | None = None, timeout: float = 10.0) -> AuthMetadata:
    async def go() -> AuthMetadata:
        with anyio.fail_after(DEADLINE):
            return await auth_metadata(url, named, timeout)

    return anyio.run(go)


# --- the first answer -------------------------------------------------------------------


def test_the_first_request_is_an_initialize_post_with_the_entrys_headers(site: Site) -> None:
    challenge = 'Bearer realm="mcp", resource_metadata="https://auth.example/prm"'
    site.routes["/mcp"] = (
        401, {"Content-Type": "Application/JSON; charset=utf-8", "WWW-Authenticate": challenge},
        b"{}",
    )  # fmt: skip
    entry = ServerEntry(
        url=f"{site.url}/mcp", headers={"X-Team": "blue"}, auth=AuthConfig("bearer", token="t0k")
    )
    answer = http(entry)
    assert answer == HttpAnswer(
        "POST", 401, "application/json", "Bearer", "https://auth.example/prm"
    )
    [seen] = site.seen
    assert (seen.method, seen.path) == ("POST", "/mcp")
    assert seen.headers["accept"] == "application/json, text/event-stream"
    assert seen.headers["mcp-protocol-version"] == "2025-11-25"
    assert seen.headers["x-team"] == "blue"
    assert seen.headers["authorization"] == "Bearer t0k"  # the entry's credentials
    assert json.loads(seen.body) == {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "mcpctl-doctor", "version": "1"},
        },
    }


def test_the_older_transport_is_asked_for_its_event_stream(site: Site) -> None:
    site.routes["/sse"] = (200, {"Content-Type": "text/event-stream"}, b"")
    answer = http(ServerEntry(url=f"{site.url}/sse"), "sse")
    assert answer == HttpAnswer("GET", 200, "text/event-stream", None, None)
    [seen] = site.seen
    assert (seen.method, seen.path, seen.body) == ("GET", "/sse", b"")
    assert seen.headers["accept"] == "text/event-stream"


def test_an_entry_that_signs_in_with_oauth_sends_its_headers_without_a_sign_in(
    site: Site,
) -> None:
    """The sign-in is the next layer's: this one never reads the keyring."""
    site.routes["/mcp"] = (200, {"Content-Type": "application/json"}, b"{}")
    entry = ServerEntry(url=f"{site.url}/mcp", headers={"X-Team": "blue"}, auth=AuthConfig("oauth"))
    answer = http(entry)
    assert (answer.status, answer.content_type, answer.challenge) == (200, "application/json", None)
    [seen] = site.seen
    assert seen.headers["x-team"] == "blue" and "authorization" not in seen.headers


def test_an_entry_that_signs_in_with_oauth_gets_the_challenge_not_a_sign_in(site: Site) -> None:
    challenge = 'Bearer resource_metadata="https://auth.example/prm"'
    site.routes["/mcp"] = (401, {"WWW-Authenticate": challenge}, b"")
    answer = http(ServerEntry(url=f"{site.url}/mcp", auth=AuthConfig("oauth")))
    assert answer == HttpAnswer("POST", 401, "", "Bearer", "https://auth.example/prm")
    assert site.paths() == ["/mcp"]  # asked once: nothing signed in, nothing retried


def test_an_entry_with_a_user_and_password_sends_them(site: Site) -> None:
    import base64

    site.routes["/mcp"] = (200, {}, b"")
    entry = ServerEntry(
        url=f"{site.url}/mcp", auth=AuthConfig("basic", username="ann", password="pw")
    )
    assert http(entry).status == 200
    [seen] = site.seen
    assert seen.headers["authorization"] == "Basic " + base64.b64encode(b"ann:pw").decode()


def test_only_the_headers_of_an_event_stream_are_read(site: Site) -> None:
    """An event stream does not end: its answer is its status and headers."""
    site.routes["/sse"] = (200, {"Content-Type": "text/event-stream"}, b": hello\n\n")
    site.endless.add("/sse")
    answer = http(ServerEntry(url=f"{site.url}/sse"), "sse", timeout=DEADLINE / 2)
    assert answer == HttpAnswer("GET", 200, "text/event-stream", None, None)


@pytest.mark.parametrize(
    ("header", "scheme", "where"),
    [
        ("", None, None),
        ("   ", None, None),
        ("Bearer", "Bearer", None),
        ("Bearer, Basic", "Bearer", None),
        ("Bearer resource_metadata=https://a.example/m", "Bearer", "https://a.example/m"),
        (
            'Bearer resource_metadata = "https://a.example/m", x="y"',
            "Bearer",
            "https://a.example/m",
        ),
        ("B" * 60, "B" * 39 + "…", None),
        ("NTLMX, Basic", "NTLMX", None),  # only the comma taken off
    ],
)
def test_the_challenge_read(site: Site, header: str, scheme: str | None, where: str | None) -> None:
    headers = {"WWW-Authenticate": header} if header else {}
    site.routes["/mcp"] = (401, headers, b"")
    answer = http(ServerEntry(url=f"{site.url}/mcp"))
    assert (answer.challenge, answer.resource_metadata) == (scheme, where)
    assert answer.content_type == ""  # none said


def test_an_endpoint_that_never_answers(site: Site) -> None:
    site.hang = threading.Event()
    with pytest.raises(LayerFailed) as caught:
        http(ServerEntry(url=f"{site.url}/mcp"), timeout=0.5)
    assert caught.value.message == "no HTTP answer within 0.5 s"
    assert caught.value.fix == "the server accepted the connection but did not answer"


def test_the_request_is_given_the_checks_whole_time(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not httpx's own 5 s: an endpoint slower than that is waited for as long as the check
    allows (the client's timeouts are read, not waited out)."""
    import httpx2

    made: list[Any] = []

    class Recording(httpx2.AsyncClient):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            made.append(self.timeout)

    monkeypatch.setattr(httpx2, "AsyncClient", Recording)
    site.routes["/mcp"] = (200, {"Content-Type": "application/json"}, b"{}")
    assert http(ServerEntry(url=f"{site.url}/mcp"), timeout=30).status == 200
    [timeouts] = made
    for limit in (timeouts.connect, timeouts.read, timeouts.write, timeouts.pool):
        assert limit is None or limit >= 30


def test_a_refused_connection_is_no_http_answer() -> None:
    with reserved_port() as port, pytest.raises(LayerFailed) as caught:
        http(ServerEntry(url=f"http://127.0.0.1:{port}/mcp"))
    assert caught.value.message.startswith("no HTTP answer: ConnectError: ")
    assert "\n" not in caught.value.message
    assert caught.value.fix == "does the server speak HTTP on that port?"


# --- the OAuth metadata -----------------------------------------------------------------


def test_the_metadata_found_from_the_challenges_url(site: Site) -> None:
    issuer = f"{site.url}/tenant"
    site.json("/prm", {"resource": f"{site.url}/mcp", "authorization_servers": ["", issuer]})
    site.json("/.well-known/oauth-authorization-server/tenant", {"issuer": "https://as.example"})
    found = metadata(f"{site.url}/mcp", "/prm")
    assert found == AuthMetadata(
        resource_url=f"{site.url}/prm",
        resource=f"{site.url}/mcp",
        authorization_servers=[issuer],  # empty names left out
        issuer="https://as.example",
        issuer_metadata_url=f"{site.url}/.well-known/oauth-authorization-server/tenant",
    )
    assert site.paths() == ["/prm", "/.well-known/oauth-authorization-server/tenant"]
    assert all(s.headers["accept"] == "application/json" for s in site.seen)


def test_the_well_known_urls_are_tried_path_first(site: Site) -> None:
    site.json("/.well-known/oauth-protected-resource", {"authorization_servers": [site.url]})
    site.json("/.well-known/openid-configuration", {})  # no issuer: the server's URL
    found = metadata(f"{site.url}/v1/mcp/")
    assert found.resource_url == f"{site.url}/.well-known/oauth-protected-resource"
    assert found.resource is None
    assert (found.issuer, found.issuer_metadata_url) == (
        site.url,
        f"{site.url}/.well-known/openid-configuration",
    )
    assert found.problems == []
    assert site.paths() == [
        "/.well-known/oauth-protected-resource/v1/mcp",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
    ]


def test_a_challenges_url_that_fails_falls_back_to_the_well_known_ones(site: Site) -> None:
    site.json("/prm", {"authorization_servers": [site.url]}, status=500)
    site.json("/.well-known/oauth-protected-resource/mcp", {"authorization_servers": [site.url]})
    found = metadata(f"{site.url}/mcp", f"{site.url}/prm")
    assert found.resource_url == f"{site.url}/.well-known/oauth-protected-resource/mcp"


@pytest.mark.parametrize(
    "body",
    [b"not json", b"[1, 2]", json.dumps({"pad": "x" * (256 * 1024)}).encode()],
    ids=["not-json", "not-an-object", "too-large"],
)
def test_metadata_that_cannot_be_read_is_none(site: Site, body: bytes) -> None:
    for path in (
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ):
        site.routes[path] = (200, {"Content-Type": "application/json"}, body)
    found = metadata(f"{site.url}/mcp")
    assert found == AuthMetadata(problems=["no protected-resource metadata"])


def test_a_document_just_under_the_cap_is_read(site: Site) -> None:
    pad = 256 * 1024 - len(json.dumps({"authorization_servers": [], "pad": ""}))
    document = {"authorization_servers": [], "pad": "x" * pad}
    assert len(json.dumps(document)) == 256 * 1024
    site.json("/.well-known/oauth-protected-resource/mcp", document)
    found = metadata(f"{site.url}/mcp")
    assert found.resource_url == f"{site.url}/.well-known/oauth-protected-resource/mcp"


def test_metadata_naming_no_authorization_server(site: Site) -> None:
    site.json(
        "/.well-known/oauth-protected-resource", {"resource": "", "authorization_servers": "x"}
    )
    found = metadata(f"{site.url}/mcp")
    assert found.resource is None and found.authorization_servers == []
    assert found.problems == ["its protected-resource metadata names no authorization server"]
    assert len(site.seen) == 2  # no authorization server looked for


def test_an_authorization_server_without_metadata(site: Site) -> None:
    issuer = f"{site.url}/as"
    site.json(
        "/.well-known/oauth-protected-resource", {"authorization_servers": [issuer, site.url]}
    )
    found = metadata(f"{site.url}/mcp")
    assert found.issuer is None and found.issuer_metadata_url is None
    assert found.problems == [f"the authorization server {issuer} publishes no metadata"]
    assert site.paths()[2:] == [  # the first server only, each well-known URL once
        "/.well-known/oauth-authorization-server/as",
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration/as",
        "/.well-known/openid-configuration",
    ]


def test_metadata_that_does_not_arrive_in_time(site: Site) -> None:
    site.hang = threading.Event()
    found = metadata(f"{site.url}/mcp", timeout=0.5)
    assert found.problems == ["the metadata did not arrive within 0.5 s"]


def test_only_slashes_are_taken_off_the_path(site: Site) -> None:
    site.json("/.well-known/oauth-protected-resource/api/X", {"authorization_servers": []})
    found = metadata(f"{site.url}/api/X//")
    assert found.resource_url == f"{site.url}/.well-known/oauth-protected-resource/api/X"

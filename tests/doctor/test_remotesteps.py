"""The steps only a remote server has in ``mcpctl doctor NAME`` -- ``resolve``, ``connect``,
``http``, ``auth`` and the probe's failure -- each run on its own against a small HTTP server
on 127.0.0.1 that answers as told (no MCP server): their words and fixes, and a sign-in
reported by its state, never by a token; and with the network's layers and the probe stood in
for, what this machine's network cannot show (many addresses, a certificate near expiry, a
time limit)."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from mcpctl.auth.records import OAuthRecord, save_record
from mcpctl.auth.secrets import SecretStore
from mcpctl.config.model import AuthConfig, ServerEntry
from mcpctl.config.placeholders import resolve_entry
from mcpctl.doctor.remotesteps import RemoteSteps, _sign_in_text
from mcpctl.doctor.steps import StepDone, StepFailed
from mcpctl.probe.childenv import ProbeError
from mcpctl.probe.healthstatus import ProbeResult
from mcpctl.probe.httplayers import HttpAnswer
from tests.conftest import MemoryKeyring, reserved_port
from tests.doctor.stepruns import done, failed, prepared
from tests.httpthread import reply, serving_http

TOKEN = "remotesteps-token-canary-7d21"


class Site:
    """What the server answers: ``routes[(method, path)] = (status, headers, body)``."""

    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], tuple[int, dict[str, str], bytes]] = {}
        self.lock = threading.Lock()

    def json(self, path: str, data: Any) -> None:
        self.routes[("GET", path)] = (200, {"Content-Type": "application/json"},
                                      json.dumps(data).encode())  # fmt: skip


@contextlib.contextmanager
def serving(site: Site) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def answer(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            with site.lock:
                found = site.routes.get((method, self.path.split("?")[0]))
            status, headers, body = found or (404, {"Content-Type": "text/plain"}, b"no")
            reply(self, status, body, headers)

        def do_GET(self) -> None:
            self.answer("GET")

        def do_POST(self) -> None:
            self.answer("POST")

    with serving_http(Handler) as base:
        yield base


@pytest.fixture
def site() -> Iterator[tuple[Site, str]]:
    s = Site()
    with serving(s) as base:
        yield s, base


def steps(entry: ServerEntry, *, store: SecretStore | None = None, name: str = "demo") -> Any:
    run = prepared(RemoteSteps, entry, store=store, name=name, path=Path("servers.json"))
    run.resolved = resolve_entry(name, entry, policy="error")
    return run


OAUTH = AuthConfig(type="oauth")


# --- resolve and connect ----------------------------------------------------------------------


def test_an_address_needs_no_resolving() -> None:
    run = steps(ServerEntry(url="http://127.0.0.1:8000/mcp"))
    assert done(run._resolve) == StepDone("127.0.0.1 is an address (nothing to resolve)")
    assert run.addresses == ["127.0.0.1"]
    run = steps(ServerEntry(url="http://[::1]:8000/mcp"))
    assert done(run._resolve).detail == "::1 is an address (nothing to resolve)"
    assert run.addresses == ["::1"]


def test_a_name_is_resolved_to_its_addresses() -> None:
    run = steps(ServerEntry(url="http://localhost:8000/mcp"))
    got = done(run._resolve)
    assert "127.0.0.1" in run.addresses
    assert got.detail == "localhost: " + ", ".join(run.addresses)


def test_a_name_that_does_not_resolve_fails_with_a_fix() -> None:
    run = steps(ServerEntry(url="http://no-such-host.invalid/mcp"))
    exc = failed(run._resolve)
    assert "no-such-host.invalid" in exc.detail and exc.fix


def test_a_listening_port_connects_and_a_closed_one_fails(site: tuple[Site, str]) -> None:
    _, base = site
    port = int(base.rsplit(":", 1)[1])
    run = steps(ServerEntry(url=f"{base}/mcp"))
    done(run._resolve)
    assert done(run._connect) == StepDone(f"connected to 127.0.0.1 port {port}")
    assert run.address == "127.0.0.1"
    with reserved_port() as closed:
        run = steps(ServerEntry(url=f"http://127.0.0.1:{closed}/mcp"))
        done(run._resolve)
        exc = failed(run._connect)
    assert f"127.0.0.1 port {closed}" in exc.detail and exc.fix


# --- http -------------------------------------------------------------------------------------


def test_the_first_answer_of_a_streamable_http_server(site: tuple[Site, str]) -> None:
    s, base = site
    s.routes[("POST", "/mcp")] = (200, {"Content-Type": "application/json"}, b"{}")
    run = steps(ServerEntry(url=f"{base}/mcp"))
    assert done(run._http) == StepDone("POST initialize: HTTP 200, application/json")
    assert run.answer is not None and run.answer.status == 200


def test_a_server_that_asks_for_credentials_passes_http(site: tuple[Site, str]) -> None:
    s, base = site
    challenge = {"Content-Type": "application/json", "WWW-Authenticate": 'Bearer realm="x"'}
    s.routes[("POST", "/mcp")] = (401, challenge, b"{}")
    run = steps(ServerEntry(url=f"{base}/mcp"))
    assert done(run._http).detail == (
        "POST initialize: HTTP 401, application/json; it asks for credentials (Bearer)"
    )
    s.routes[("POST", "/mcp")] = (403, {}, b"")
    assert done(run._http).detail == (
        "POST initialize: HTTP 403, no content type; it asks for credentials"
    )


def test_an_sse_server_is_found_when_the_post_is_refused(site: tuple[Site, str]) -> None:
    s, base = site
    s.routes[("POST", "/sse")] = (405, {"Content-Type": "text/plain"}, b"")
    s.routes[("GET", "/sse")] = (200, {"Content-Type": "text/event-stream"}, b"")
    run = steps(ServerEntry(url=f"{base}/sse"))
    assert done(run._http).detail == "GET (event stream): HTTP 200, text/event-stream"
    # not when the entry says which transport it speaks
    run = steps(ServerEntry(url=f"{base}/sse", transport="streamable-http"))
    exc = failed(run._http)
    assert exc.detail.startswith("POST initialize: HTTP 405, text/plain: ")
    # nor when the GET is no event stream
    s.routes[("POST", "/x")] = (404, {"Content-Type": "text/plain"}, b"")
    s.routes[("GET", "/x")] = (200, {"Content-Type": "text/html"}, b"")
    run = steps(ServerEntry(url=f"{base}/x"))
    assert failed(run._http).detail.startswith("POST initialize: HTTP 404, text/plain: ")
    s.routes[("POST", "/y")] = (404, {"Content-Type": "text/plain"}, b"")
    s.routes[("GET", "/y")] = (500, {"Content-Type": "text/event-stream"}, b"")
    run = steps(ServerEntry(url=f"{base}/y"))
    assert failed(run._http).detail.startswith("POST initialize: HTTP 404, text/plain: ")


def test_an_html_page_or_an_error_status_fails_http(site: tuple[Site, str]) -> None:
    from mcpctl.probe.failures import http_error

    s, base = site
    s.routes[("POST", "/page")] = (200, {"Content-Type": "text/html; charset=utf-8"}, b"<p>")
    run = steps(ServerEntry(url=f"{base}/page"))
    exc = failed(run._http)
    assert exc.detail == "POST initialize: HTTP 200, text/html: an HTML page, not MCP"
    assert exc.fix == "check the URL's path (often /mcp or /sse)"
    s.routes[("POST", "/err")] = (500, {"Content-Type": "application/json"}, b"{}")
    run = steps(ServerEntry(url=f"{base}/err"))
    exc = failed(run._http)
    error = http_error(500, "demo")
    assert exc.detail == f"POST initialize: HTTP 500, application/json: {error.message}"
    assert exc.fix == (error.hint or "check the URL's path (often /mcp or /sse)")
    s.routes[("POST", "/gone")] = (410, {"Content-Type": "application/json"}, b"{}")
    run = steps(ServerEntry(url=f"{base}/gone"))
    exc = failed(run._http)
    error = http_error(410, "demo")
    assert exc.fix == (error.hint or "check the URL's path (often /mcp or /sse)")


def test_no_http_answer_fails_http() -> None:
    with reserved_port() as closed:
        run = steps(ServerEntry(url=f"http://127.0.0.1:{closed}/mcp"))
        exc = failed(run._http)
    assert exc.detail and exc.fix


# --- auth -------------------------------------------------------------------------------------


def answered(run: Any, status: int, challenge: str | None = None) -> Any:
    run.answer = HttpAnswer("POST", status, "application/json", challenge)
    return run


def test_no_sign_in_asked_for(site: tuple[Site, str]) -> None:
    _, base = site
    run = answered(steps(ServerEntry(url=f"{base}/mcp")), 200)
    assert done(run._auth) == StepDone("no sign-in asked for")


def test_a_403_fails_auth() -> None:
    run = answered(steps(ServerEntry(url="http://127.0.0.1:9/mcp")), 403)
    exc = failed(run._auth)
    assert exc.detail == "the server answered 403 Forbidden"
    assert exc.fix == "the credentials lack the needed permissions"


def test_a_401_without_a_challenge_to_an_entry_without_oauth(site: tuple[Site, str]) -> None:
    _, base = site
    run = answered(steps(ServerEntry(url=f"{base}/mcp")), 401)
    exc = failed(run._auth)
    assert exc.detail == (
        "the server answered 401 and refuses the request; no protected-resource metadata; "
        "the entry does not sign in with OAuth"
    )
    assert exc.fix == (
        "set the credentials of 'demo' (its headers), or sign in with 'mcpctl auth demo' "
        '(its entry needs "auth": {"type": "oauth"})'
    )


def protected(s: Site, base: str) -> None:
    s.json("/.well-known/oauth-protected-resource/mcp",
           {"resource": f"{base}/mcp", "authorization_servers": [base]})  # fmt: skip
    s.json("/.well-known/oauth-authorization-server",
           {"issuer": base, "authorization_endpoint": f"{base}/authorize",
            "token_endpoint": f"{base}/token"})  # fmt: skip


def test_a_401_with_a_challenge_names_the_metadata_found(site: tuple[Site, str]) -> None:
    s, base = site
    protected(s, base)
    run = answered(steps(ServerEntry(url=f"{base}/mcp")), 401, "Bearer")
    exc = failed(run._auth)
    assert exc.detail == (
        "the server answered 401 (Bearer) and asks for a sign-in; protected-resource metadata "
        f"at {base}/.well-known/oauth-protected-resource/mcp; authorization server {base}; "
        "the entry does not sign in with OAuth"
    )
    assert exc.fix == (
        'sign in with \'mcpctl auth demo\' (its entry needs "auth": {"type": "oauth"})'
    )


def test_an_entry_that_signs_in_but_has_not(site: tuple[Site, str]) -> None:
    s, base = site
    protected(s, base)
    store = SecretStore(MemoryKeyring())
    run = answered(steps(ServerEntry(url=f"{base}/mcp", auth=OAUTH), store=store), 401, "Bearer")
    exc = failed(run._auth)
    assert exc.detail.startswith("the server answered 401 (Bearer) and asks for a sign-in; ")
    assert exc.detail.endswith(f"; authorization server {base}; not signed in")
    assert exc.fix == "sign in with 'mcpctl auth demo'"


def test_a_sign_in_is_reported_by_its_state_never_its_token(site: tuple[Site, str]) -> None:
    s, base = site
    protected(s, base)
    store = SecretStore(MemoryKeyring())
    url = f"{base}/mcp"
    expires = time.time() + 3600
    save_record("demo", OAuthRecord(url, access_token=TOKEN, expires_at=expires), store)
    run = answered(steps(ServerEntry(url=url, auth=OAUTH), store=store), 401, "Bearer")
    got = done(run._auth)
    assert got.detail.startswith(f"protected-resource metadata at {base}/.well-known/")
    assert "; signed in (expires " in got.detail
    assert TOKEN not in got.detail
    # answered without a challenge: the metadata is still looked up for a sign-in
    run = answered(steps(ServerEntry(url=url, auth=OAUTH), store=store), 200)
    assert done(run._auth).detail == got.detail


def test_a_sign_in_for_another_url_fails_auth_though_the_server_let_us_in(
    site: tuple[Site, str],
) -> None:
    s, base = site
    protected(s, base)
    store = SecretStore(MemoryKeyring())
    save_record("demo", OAuthRecord("https://elsewhere.example/mcp", access_token=TOKEN), store)
    run = answered(steps(ServerEntry(url=f"{base}/mcp", auth=OAUTH), store=store), 200)
    exc = failed(run._auth)
    assert exc.detail.endswith("; sign-in: signed in for another URL")
    assert exc.fix == "sign in with 'mcpctl auth demo'"


def test_a_keyring_that_cannot_be_read_is_the_sign_in_s_problem(
    site: tuple[Site, str], no_keyring: None
) -> None:
    s, base = site
    protected(s, base)
    run = answered(steps(ServerEntry(url=f"{base}/mcp", auth=OAUTH)), 200)
    exc = failed(run._auth)
    assert run.keyring is not None and run.keyring.problem
    assert exc.detail.endswith(f"; sign-in: the keyring is unusable ({run.keyring.problem})")
    assert exc.fix == "sign in with 'mcpctl auth demo'"


class SignInsUnreadable(MemoryKeyring):
    """A keyring that answers, but fails to read any sign-in."""

    def get_password(self, service: str, username: str) -> str | None:
        if username.startswith("oauth:"):
            raise OSError("the item cannot be decrypted")
        return super().get_password(service, username)


def test_a_sign_in_that_cannot_be_read_is_the_sign_in_s_problem(site: tuple[Site, str]) -> None:
    s, base = site
    protected(s, base)
    store = SecretStore(SignInsUnreadable())
    run = answered(steps(ServerEntry(url=f"{base}/mcp", auth=OAUTH), store=store), 200)
    exc = failed(run._auth)
    assert "; sign-in: " in exc.detail and "the item cannot be decrypted" in exc.detail
    assert exc.fix == "sign in with 'mcpctl auth demo'"


@pytest.mark.parametrize(
    ("status", "text"),
    [
        ({"problem": "expired", "signed_in": True}, "sign-in: expired"),
        ({"problem": None, "signed_in": False}, "not signed in"),
        ({"problem": None, "signed_in": True, "expires_at": "2030-01-01T00:00:00Z"},
         "signed in (expires 2030-01-01T00:00:00Z)"),
        ({"problem": None, "signed_in": True, "expires_at": None}, "signed in"),
        ({"problem": None, "signed_in": True, "expires_at": "T", "expired": True,
          "refreshable": True}, "signed in (the access token expired T; renewed on use)"),
        ({"problem": None, "signed_in": True, "expires_at": "T", "expired": True,
          "refreshable": False}, "signed in (the access token expired T; not renewable)"),
        ({"problem": None, "signed_in": True, "expires_at": "T", "expired": False},
         "signed in (expires T)"),
    ],
)  # fmt: skip
def test_a_sign_in_in_words(status: dict[str, Any], text: str) -> None:
    assert _sign_in_text(status) == text


# --- the probe ------------------------------------------------------------------------------


def test_a_failed_probe_is_the_protocol_step_s_failure() -> None:
    result = ProbeResult(
        name="demo", error=ProbeError("auth_required", "401", "sign in"), latency_ms={"total": 9.0}
    )
    with pytest.raises(StepFailed) as caught:
        RemoteSteps._remote_failed(result)
    exc = caught.value
    assert (exc.detail, exc.fix, exc.ms) == ("auth_required: 401", "sign in", 9.0)


def test_an_entry_that_speaks_sse_is_asked_with_a_get(site: tuple[Site, str]) -> None:
    s, base = site
    s.routes[("GET", "/events")] = (200, {"Content-Type": "text/event-stream"}, b"")
    run = steps(ServerEntry(url=f"{base}/events", transport="sse"))
    assert done(run._http).detail == "GET (event stream): HTTP 200, text/event-stream"
    s.routes[("POST", "/e404")] = (404, {"Content-Type": "text/plain"}, b"")
    s.routes[("GET", "/e404")] = (200, {"Content-Type": "text/event-stream"}, b"")
    run = steps(ServerEntry(url=f"{base}/e404"))  # a 404 to the POST: perhaps SSE too
    assert done(run._http).detail == "GET (event stream): HTTP 200, text/event-stream"


def test_the_metadata_named_by_the_challenge_is_read(site: tuple[Site, str]) -> None:
    s, base = site
    s.json("/elsewhere/meta", {"resource": f"{base}/mcp", "authorization_servers": [base]})
    s.json("/.well-known/oauth-authorization-server", {"issuer": base})
    run = steps(ServerEntry(url=f"{base}/mcp"))
    run.answer = HttpAnswer("POST", 401, "application/json", "Bearer", f"{base}/elsewhere/meta")
    exc = failed(run._auth)
    assert f"protected-resource metadata at {base}/elsewhere/meta" in exc.detail


def test_a_400_is_an_error_status(site: tuple[Site, str]) -> None:
    from mcpctl.probe.failures import http_error

    s, base = site
    s.routes[("POST", "/bad")] = (400, {"Content-Type": "application/json"}, b"{}")
    run = steps(ServerEntry(url=f"{base}/bad"))
    exc = failed(run._http)
    assert (
        exc.detail
        == f"POST initialize: HTTP 400, application/json: {http_error(400, 'demo').message}"
    )
    # nor is a 400 to the GET an event stream
    s.routes[("POST", "/b2")] = (404, {"Content-Type": "text/plain"}, b"")
    s.routes[("GET", "/b2")] = (400, {"Content-Type": "text/event-stream"}, b"")
    run = steps(ServerEntry(url=f"{base}/b2"))
    assert failed(run._http).detail.startswith("POST initialize: HTTP 404, text/plain: ")


# --- each layer as the steps call it --------------------------------------------------------
#
# The layers of ``mcpctl.probe.layers`` replaced by stand-ins that record how they were
# called and answer as told: what a real network here cannot show (a name with many
# addresses, a certificate near expiry, a layer that would hang).


class Layers:
    """Stand-ins for the layers, each recording its arguments."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from mcpctl.probe import layers

        self.calls: dict[str, list[tuple[Any, ...]]] = {}
        self.addresses = ["192.0.2.1"]
        self.tls: Any = None
        self.http: list[HttpAnswer] = []
        for name in ("resolve_host", "connect_tcp", "check_tls", "check_http", "auth_metadata"):
            monkeypatch.setattr(layers, name, self._recorder(name))

    def _recorder(self, name: str) -> Any:
        from mcpctl.probe.httplayers import AuthMetadata

        async def layer(*args: Any) -> Any:
            self.calls.setdefault(name, []).append(args)
            return {
                "resolve_host": lambda: self.addresses,
                "connect_tcp": lambda: self.addresses[0],
                "check_tls": lambda: self.tls,
                "check_http": lambda: self.http.pop(0),
                "auth_metadata": AuthMetadata,
            }[name]()

        return layer


def test_each_layer_is_given_the_steps_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A layer that hangs fails its step after ``--timeout``, not after its own default."""
    from mcpctl.probe.netlayers import TlsReport

    layers = Layers(monkeypatch)
    layers.tls = TlsReport("TLSv1.3", "mcp.example", None, None, None)
    layers.http = [HttpAnswer("POST", 404, "text/plain"), HttpAnswer("GET", 404, "text/plain")]
    entry = ServerEntry(url="https://mcp.example:8443/mcp", auth=OAUTH)
    run = steps(entry, store=SecretStore(MemoryKeyring()))
    run.seconds = 7.5
    done(run._resolve)
    done(run._connect)
    done(run._tls)
    failed(run._http)
    run.answer = HttpAnswer("POST", 200, "application/json")
    done(run._auth)
    assert layers.calls == {
        "resolve_host": [("mcp.example", 8443, 7.5)],
        "connect_tcp": [(["192.0.2.1"], 8443, 7.5)],
        # the address connected to, verified for the name of the entry's URL
        "check_tls": [("mcp.example", 8443, "192.0.2.1", 7.5)],
        "check_http": [(run.resolved, None, 7.5), (run.resolved, "sse", 7.5)],
        "auth_metadata": [("https://mcp.example:8443/mcp", None, 7.5)],
    }


@pytest.mark.parametrize(
    ("count", "shown"),
    [(1, "192.0.2.1"), (4, "192.0.2.1, 192.0.2.2, 192.0.2.3, 192.0.2.4"),
     (5, "192.0.2.1, 192.0.2.2, 192.0.2.3, 192.0.2.4, ...")],
)  # fmt: skip
def test_a_name_s_addresses_are_shown_four_at_most(
    monkeypatch: pytest.MonkeyPatch, count: int, shown: str
) -> None:
    layers = Layers(monkeypatch)
    layers.addresses = [f"192.0.2.{n}" for n in range(1, count + 1)]
    run = steps(ServerEntry(url="https://mcp.example/mcp"))
    assert done(run._resolve) == StepDone(f"mcp.example: {shown}")
    assert run.addresses == layers.addresses  # all of them tried by the connect step


@pytest.mark.parametrize(
    ("report", "detail"),
    [
        (("TLSv1.3", "mcp.example", "Example CA", "2027-03-01T00:00:00+00:00", 90),
         "TLSv1.3; certificate for mcp.example from Example CA, valid until "
         "2027-03-01T00:00:00+00:00 (90 days left)"),
        ((None, None, None, None, None), "TLS; certificate for mcp.example"),
        (("TLSv1.2", "*.example", None, "2026-12-15T00:00:00+00:00", 14),
         "TLSv1.2; certificate for *.example, valid until 2026-12-15T00:00:00+00:00 "
         "(14 days left)"),
        (("TLSv1.3", "mcp.example", "Example CA", "2026-12-14T00:00:00+00:00", 13),
         "TLSv1.3; certificate for mcp.example from Example CA, valid until "
         "2026-12-14T00:00:00+00:00 (13 days left); it expires soon: renew it"),
        (("TLSv1.3", "mcp.example", None, "2026-12-03T00:00:00+00:00", 1),
         "TLSv1.3; certificate for mcp.example, valid until 2026-12-03T00:00:00+00:00 "
         "(1 day left); it expires soon: renew it"),
        (("TLSv1.3", "mcp.example", None, "2026-12-02T12:00:00+00:00", 0),
         "TLSv1.3; certificate for mcp.example, valid until 2026-12-02T12:00:00+00:00 "
         "(0 days left); it expires soon: renew it"),
        (("TLSv1.3", "mcp.example", None, "2027-01-01T00:00:00+00:00", None),
         "TLSv1.3; certificate for mcp.example, valid until 2027-01-01T00:00:00+00:00 "
         "(0 days left)"),
    ],
)  # fmt: skip
def test_the_tls_step_in_words(
    monkeypatch: pytest.MonkeyPatch, report: tuple[Any, ...], detail: str
) -> None:
    """The version, whom the certificate is for and from, its expiry and the days left
    (a warning under two weeks): each said when the handshake knows it."""
    from mcpctl.probe.netlayers import TlsReport

    layers = Layers(monkeypatch)
    layers.tls = TlsReport(*report)
    run = steps(ServerEntry(url="https://mcp.example/mcp"))
    run.address = "192.0.2.1"
    assert done(run._tls) == StepDone(detail)


def test_a_tls_failure_is_the_step_s_with_its_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpctl.probe import layers

    async def refused(*_: Any) -> Any:
        raise layers.LayerFailed("the certificate has expired", "renew it on the server")

    monkeypatch.setattr(layers, "check_tls", refused)
    run = steps(ServerEntry(url="https://mcp.example/mcp"))
    run.address = "192.0.2.1"
    exc = failed(run._tls)
    assert (exc.detail, exc.fix) == ("the certificate has expired", "renew it on the server")


def probed(
    monkeypatch: pytest.MonkeyPatch, result: ProbeResult
) -> tuple[Any, list[tuple[Any, ...]]]:
    """A run whose probe answers ``result``, and how the probe was called."""
    from mcpctl.probe import health

    calls: list[tuple[Any, ...]] = []

    async def probe(*args: Any, **options: Any) -> ProbeResult:
        calls.append((*args, options))
        return result

    monkeypatch.setattr(health, "probe", probe)
    run = steps(ServerEntry(url="https://mcp.example/mcp"))
    return run, calls


def test_the_probe_is_asked_as_the_run_was(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its name, entry, time limit, secrets, protocol and era memory; a probe that answered
    is the protocol step's, with the era spoken."""
    from mcpctl.probe.eras import Era, EraMemory

    era = Era("modern", "2026-07-28")
    result = ProbeResult(
        name="demo", transport="streamable-http", available=True, healthy=True, era=era,
        server_name="peer", server_version="2.0", latency_ms={"connect": 2.0, "discover": 3.0},
    )  # fmt: skip
    run, calls = probed(monkeypatch, result)
    run.seconds, run.secrets, run.protocol, run.eras = 7.5, {}.get, "modern", EraMemory()
    got = done(run._remote)
    assert calls == [("demo", run.entry, {"timeout": 7.5, "secrets": run.secrets,
                                          "protocol": "modern", "eras": run.eras})]  # fmt: skip
    assert got == StepDone(
        "MCP 2026-07-28 (stateless era, server/discover) over streamable-http; server peer 2.0",
        5.0,
    )
    assert run.result is result


def test_a_probe_that_failed_fails_the_step(monkeypatch: pytest.MonkeyPatch) -> None:
    result = ProbeResult(
        name="demo", transport="streamable-http", available=False,
        error=ProbeError("auth_required", "401 Unauthorized", "sign in"),
        latency_ms={"total": 9.0},
    )  # fmt: skip
    run, _ = probed(monkeypatch, result)
    exc = failed(run._remote)
    assert (exc.detail, exc.fix, exc.ms) == ("auth_required: 401 Unauthorized", "sign in", 9.0)

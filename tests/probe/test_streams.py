"""The streams of a connection (mcpctl.probe.streams): what a stdio server's stdout is read
as (messages, garbage, lines too long or too deep), what is kept of its stderr (the last
lines, redacted, cut), what is written to its stdin; and the headers and credentials a
remote server is sent. The stdio servers here are a few lines of Python without the SDK
(quick to start), the remote ones a local HTTP server (tests/httpthread.py)."""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler
from typing import Any, ClassVar

import anyio
import httpx2
import pytest
from mcp_types.jsonrpc import JSONRPCError, JSONRPCRequest, JSONRPCResponse

from mcpctl.auth.connecting import ConnectingAuth
from mcpctl.config.model import AuthConfig, ServerEntry
from mcpctl.config.placeholders import ResolvedEntry
from mcpctl.errors import ProbeFailed
from mcpctl.probe.failures import exception_leaves
from mcpctl.probe.spawn import StdioDiagnostics, spawn_server
from mcpctl.probe.streams import (
    LINE_WINDOW,
    STDERR_LINE_MAX,
    STDOUT_LINE_MAX,
    _auth_headers,
    open_sse,
    open_stdio,
    open_streamable_http,
)
from mcpctl.sdk import ClientSession, SessionMessage
from tests.httpthread import reply, serving_http

DEADLINE = 60  # seconds for one test's exchange; the servers answer at once

# A server that follows a plan: ["out", text] and ["err", text] write (and flush) text;
# ["many", c, n] writes c n times to stdout; ["echo"] waits for one line on stdin and writes it to stderr as it came; ["exit"] ends.
PLAYER = """
import json, sys
for step in json.loads(sys.argv[1]):
    if step[0] == "out":
        sys.stdout.write(step[1]); sys.stdout.flush()
    elif step[0] == "err":
        sys.stderr.write(step[1]); sys.stderr.flush()
    elif step[0] == "echo":
        line = sys.stdin.readline()
        sys.stderr.write("got " + line); sys.stderr.flush()
    elif step[0] == "many":
        sys.stdout.write(step[1] * step[2]); sys.stdout.flush()
    elif step[0] == "exit":
        sys.exit(0)
sys.stdin.read()
"""


def msg(n: int) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": n, "result": {}}) + "\n"


def player(*steps: list[Any], secrets: frozenset[str] = frozenset()) -> ResolvedEntry:
    entry = ServerEntry(command=sys.executable, args=("-c", PLAYER, json.dumps(steps)))
    return ResolvedEntry("srv", entry, secret_values=secrets)


def play(
    resolved: ResolvedEntry, *, read: int = 0, send: list[Any] = (), until_closed: bool = False
) -> tuple[list[Any], StdioDiagnostics]:
    """Open the server's streams, send ``send``, read ``read`` messages (or all of them up
    to the end of its stdout), close: what was read, and the diagnostics."""
    diag = StdioDiagnostics()
    got: list[Any] = []

    async def main() -> None:
        with anyio.fail_after(DEADLINE):
            async with open_stdio(resolved, 10, diag) as (reads, writes):
                for message in send:
                    await writes.send(SessionMessage(message))
                if until_closed:
                    async for item in reads:
                        got.append(item)
                for _ in range(read):
                    got.append(await reads.receive())

    anyio.run(main)
    return got, diag


def ids(got: list[Any]) -> list[Any]:
    return [item.message.id for item in got]


# --- stdout ----------------------------------------------------------------------------------


def test_each_line_of_stdout_is_a_message_and_the_rest_is_counted_as_garbage() -> None:
    got, diag = play(
        player(
            ["out", msg(1) + "\n   \nnot json\n" + msg(2) + '{"also": "not"}\n' + msg(3)],
            ["exit"],
        ),
        until_closed=True,
    )
    assert ids(got) == [1, 2, 3]
    assert all(isinstance(item.message, JSONRPCResponse) for item in got)
    assert diag.garbage_lines == 2 and diag.first_garbage == "not json"
    assert diag.stdout_closed and diag.pid is not None and diag.started_at is not None


def test_a_message_written_in_parts_is_read_whole() -> None:
    first, rest = msg(1)[:10], msg(1)[10:]
    ping = JSONRPCRequest(jsonrpc="2.0", id=9, method="ping")
    got, diag = play(
        player(["out", first], ["echo"], ["out", rest + msg(2)[:5]], ["out", msg(2)[5:]]),
        send=[ping],
        read=2,
    )
    assert ids(got) == [1, 2] and diag.garbage_lines == 0


def test_what_is_sent_is_one_line_of_json_without_unset_fields() -> None:
    ping = JSONRPCRequest(jsonrpc="2.0", id=9, method="ping")
    _, diag = play(player(["echo"], ["exit"]), send=[ping], until_closed=True)
    assert diag.tail() == ['got {"jsonrpc":"2.0","id":9,"method":"ping"}']


def test_a_line_longer_than_any_message_is_one_garbage_line_and_reading_goes_on() -> None:
    got, diag = play(
        player(["many", "x", STDOUT_LINE_MAX + 100], ["out", "\n" + msg(1) + "y" * 9 + "\n"],
               ["exit"]),
        until_closed=True,
    )  # fmt: skip
    assert ids(got) == [1]
    assert diag.garbage_lines == 2  # the long line once, and the short one after it
    assert diag.first_garbage == "x" * (STDERR_LINE_MAX - 1) + "…"


def test_a_message_too_deep_to_read_fails_its_request_at_once() -> None:
    deep = '{"jsonrpc": "2.0", "id": 7, "result": ' + "[" * 5000 + "]" * 5000 + "}\n"
    anonymous = "[" * 5000 + "]" * 5000 + "\n"
    got, diag = play(player(["out", deep + anonymous + msg(8)], ["exit"]), until_closed=True)
    assert isinstance(got[0].message, JSONRPCError) and got[0].message.id == 7
    assert "nested too deeply" in got[0].message.error.message
    assert ids(got[1:]) == [8]
    assert diag.garbage_lines == 1 and (diag.first_garbage or "").startswith("[[[")


# --- stderr ------------------------------------------------------------------------------------


def test_stderr_keeps_its_lines_the_last_without_a_line_end_too() -> None:
    _, diag = play(player(["err", "one\ntw"], ["err", "o\n\nthree"], ["exit"]), until_closed=True)
    assert diag.tail() == ["one", "two", "", "three"]
    assert diag.stderr_bytes == len("one\ntwo\n\nthree")


def test_stderr_ending_in_blanks_adds_no_line() -> None:
    _, diag = play(player(["err", "one\n  "], ["exit"]), until_closed=True)
    assert diag.tail() == ["one"]


def test_stderr_lines_are_redacted_then_cut() -> None:
    secret = "s3cr3t-value-of-the-entry"
    long = "a" * (STDERR_LINE_MAX + 50)
    _, diag = play(
        player(["err", f"token {secret} used\n{long}\n" + "b" * STDERR_LINE_MAX + "\n"], ["exit"],
               secrets=frozenset({secret})),
        until_closed=True,
    )  # fmt: skip
    assert diag.tail() == [
        "token **** used",
        "a" * (STDERR_LINE_MAX - 1) + "…",
        "b" * STDERR_LINE_MAX,
    ]


def test_a_stderr_line_without_end_is_kept_cut() -> None:
    _, diag = play(player(["err", "c" * (LINE_WINDOW + 10)], ["exit"]), until_closed=True)
    assert diag.tail() == ["c" * (STDERR_LINE_MAX - 1) + "…"]
    assert diag.stderr_bytes == LINE_WINDOW + 10


def test_only_the_last_stderr_lines_are_kept() -> None:
    text = "".join(f"line {n}\n" for n in range(50))
    _, diag = play(player(["err", text], ["exit"]), until_closed=True)
    assert diag.tail() == [f"line {n}" for n in range(30, 50)]


# --- the process -------------------------------------------------------------------------------


def test_a_server_that_cannot_be_started_is_a_probe_failure() -> None:
    resolved = ResolvedEntry("gone", ServerEntry(command="/nonexistent/mcp-x"))
    with pytest.raises(ProbeFailed) as caught:
        play(resolved)
    assert caught.value.server == "gone" and caught.value.reason == "command_not_found"
    assert "/nonexistent/mcp-x" in str(caught.value) and caught.value.hint


def test_a_started_process_is_used_and_stopped() -> None:
    resolved = player(["out", msg(4)])
    diag = StdioDiagnostics()
    got: list[Any] = []

    async def main() -> Any:
        with anyio.fail_after(DEADLINE):
            process = await spawn_server(resolved.entry)
            async with open_stdio(resolved, 10, diag, process) as (reads, _):
                got.append(await reads.receive())
            return process

    process = anyio.run(main)
    assert ids(got) == [4] and diag.pid == process.pid
    assert diag.started_at is None  # the caller's to set, when it started the process
    assert process.returncode is not None and diag.returncode is not None


def test_the_time_the_server_started_is_kept_when_already_set() -> None:
    diag = StdioDiagnostics(started_at=12.5)

    async def main() -> None:
        with anyio.fail_after(DEADLINE):
            async with open_stdio(player(["exit"]), 10, diag):
                pass

    anyio.run(main)
    assert diag.started_at == 12.5


# --- remote: headers and credentials -------------------------------------------------------------


def remote(auth: AuthConfig | None, **headers: str) -> ServerEntry:
    return ServerEntry(url="https://example.com/mcp", headers=headers, auth=auth)


def test_an_entry_without_auth_sends_its_headers() -> None:
    entry = remote(None, X_Team="t")
    headers, auth = _auth_headers(entry, "srv")
    assert headers == {"X_Team": "t"} and auth is None
    headers["new"] = "1"
    assert dict(entry.headers) == {"X_Team": "t"}  # the entry's are not changed
    assert _auth_headers(remote(AuthConfig("none", token="t")), "srv") == ({}, None)


def test_bearer_and_header_credentials_are_headers() -> None:
    bearer = _auth_headers(remote(AuthConfig("bearer", token="tok"), A="1"), "srv")
    assert bearer == ({"A": "1", "Authorization": "Bearer tok"}, None)
    named = _auth_headers(remote(AuthConfig("header", name="X-Key", value="v")), "srv")
    assert named == ({"X-Key": "v"}, None)
    plain = _auth_headers(remote(AuthConfig("header", value="v")), "srv")
    assert plain == ({"Authorization": "v"}, None)
    assert _auth_headers(remote(AuthConfig("bearer")), "srv") == ({}, None)
    assert _auth_headers(remote(AuthConfig("header", name="X")), "srv") == ({}, None)


def test_basic_credentials_are_httpx_basic_auth() -> None:
    headers, auth = _auth_headers(remote(AuthConfig("basic", username="u", password="p")), "s")
    assert headers == {} and isinstance(auth, httpx2.BasicAuth)
    assert auth._auth_header == httpx2.BasicAuth("u", "p")._auth_header
    _, empty = _auth_headers(remote(AuthConfig("basic")), "s")
    assert isinstance(empty, httpx2.BasicAuth)
    assert empty._auth_header == httpx2.BasicAuth("", "")._auth_header


def test_oauth_is_the_stored_sign_in_of_this_server() -> None:
    config = AuthConfig("oauth", scopes=("read",))
    headers, auth = _auth_headers(remote(config, A="1"), "srv")
    assert headers == {"A": "1"} and isinstance(auth, ConnectingAuth)
    assert (auth.name, auth.url, auth.auth) == ("srv", "https://example.com/mcp", config)


def test_a_sign_in_needed_is_raised_as_such_not_as_the_401(memory_keyring: Any) -> None:
    Recording.seen = []
    with serving_http(Recording) as base:
        entry = ServerEntry(url=f"{base}/mcp", auth=AuthConfig("oauth"))
        failure = opened(open_streamable_http, entry)
    leaves = exception_leaves(failure) if failure is not None else []
    assert any(isinstance(leaf, ProbeFailed) for leaf in leaves), repr(failure)
    assert not isinstance(failure, httpx2.HTTPStatusError)
    assert next(leaf for leaf in leaves if isinstance(leaf, ProbeFailed)).reason == (
        "auth_required"
    )


class Recording(BaseHTTPRequestHandler):
    """Answers every request with 401 and a challenge, noting the headers it got."""

    seen: ClassVar[list[dict[str, str]]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def answer(self) -> None:
        Recording.seen.append({k.lower(): v for k, v in self.headers.items()})
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        reply(self, 401, b"no", {"WWW-Authenticate": 'Bearer realm="mcp"'})

    do_GET = do_POST = do_DELETE = answer


def opened(opener: Any, entry: ServerEntry) -> BaseException | None:
    async def main() -> None:
        with anyio.fail_after(DEADLINE):
            async with (
                opener(ResolvedEntry("srv", entry), 5) as (reads, writes),
                ClientSession(reads, writes) as session,
            ):
                await session.initialize()

    try:
        anyio.run(main)
    except BaseException as exc:
        return exc
    return None


def test_streamable_http_sends_the_credentials_and_a_401_is_raised_as_such() -> None:
    Recording.seen = []
    with serving_http(Recording) as base:
        entry = ServerEntry(url=f"{base}/mcp", headers={"X-Team": "t"},
                            auth=AuthConfig("bearer", token="tok"))  # fmt: skip
        failure = opened(open_streamable_http, entry)
    assert isinstance(failure, httpx2.HTTPStatusError), repr(failure)
    assert failure.response.status_code == 401
    assert failure.response.headers["www-authenticate"] == 'Bearer realm="mcp"'
    assert Recording.seen and Recording.seen[0]["authorization"] == "Bearer tok"
    assert Recording.seen[0]["x-team"] == "t"


def test_sse_sends_the_credentials() -> None:
    Recording.seen = []
    with serving_http(Recording) as base:
        entry = ServerEntry(url=f"{base}/sse", transport="sse",
                            auth=AuthConfig("basic", username="u", password="p"))  # fmt: skip
        failure = opened(open_sse, entry)
    assert failure is not None
    assert Recording.seen and Recording.seen[0]["authorization"] == "Basic dTpw"

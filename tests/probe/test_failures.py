"""Why a server failed, without a server: the checks made before a spawn, each exception
turned into its stable code, message and hint, and those into the errors the CLI shows
(tests/probe/test_probe.py and tests/cli/test_health.py meet them with real servers)."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pydantic
import pytest

from mcpctl.config import redaction
from mcpctl.config.model import ServerEntry
from mcpctl.errors import (
    CommandNotFoundError,
    InvalidEntryError,
    PlaceholderError,
    ProbeFailed,
    SecretUnreachableError,
)
from mcpctl.probe.childenv import ProbeError
from mcpctl.probe.failures import (
    MESSAGE_MAX,
    as_exception,
    classify,
    exception_leaves,
    http_error,
    list_failed,
    one_line,
    precheck,
    timeout_error,
)
from mcpctl.probe.spawn import StdioDiagnostics
from mcpctl.sdk import MCPError

PY = sys.executable
REMOTE = ServerEntry(url="https://mcp.example.com/mcp", timeout=7500)
STDIO = ServerEntry(command=PY)
NOT_JSON_RPC = "a stdio server must write only protocol messages on stdout; logs go to stderr"
NOT_MCP = "check the URL's path (often /mcp or /sse)"
PROBE_FAILED_HINT = (
    "run with -v to see the exchange; if the server works elsewhere, report it to mcpctl"
)


@pytest.fixture(autouse=True)
def forget_secrets() -> Iterator[None]:
    redaction.forget()
    yield
    redaction.forget()


# --- one line ---------------------------------------------------------------------------


def test_one_line_flattens_whitespace() -> None:
    assert one_line("  first\n\tsecond  line \r\n") == "first second line"
    assert one_line(ValueError("a\nb")) == "a b"  # type: ignore[arg-type]


def test_one_line_cuts_at_the_limit_with_an_ellipsis() -> None:
    assert MESSAGE_MAX == 300
    assert one_line("x" * 300) == "x" * 300
    assert one_line("x" * 301) == "x" * 299 + "…"
    assert one_line("abcdef", 5) == "abcd…" and one_line("abcde", 5) == "abcde"


def test_one_line_hides_secrets_before_it_cuts() -> None:
    redaction.register(["hunter2-secret"])
    assert one_line("the password hunter2-secret was refused") == ("the password **** was refused")
    assert one_line("x" * 10 + " hunter2-secret", 14) == "x" * 10 + " **…"


# --- before a spawn ---------------------------------------------------------------------


def test_a_remote_entry_or_one_without_a_command_is_not_checked() -> None:
    assert precheck(REMOTE) is None


def test_a_program_that_is_found_passes() -> None:
    assert precheck(STDIO) is None
    assert precheck(ServerEntry(command="sh")) is None


def test_a_value_no_process_can_be_given_is_an_invalid_entry() -> None:
    found = precheck(ServerEntry(command=PY, args=("ok", "a\x00b")))
    assert found == ProbeError(
        "invalid_entry", "args[1] holds a NUL character (\\x00), which no process can be given"
    )


def test_a_missing_program_is_named_with_where_it_was_looked_for() -> None:
    assert precheck(ServerEntry(command="mcpctl-no-such-program")) == ProbeError(
        "command_not_found",
        "command 'mcpctl-no-such-program' not found on PATH",
        "install 'mcpctl-no-such-program' or fix the path",
    )
    own = precheck(ServerEntry(command="npx", env={"PATH": "/mcpctl/nowhere"}))
    assert own is not None and own.message == "command 'npx' not found on the entry's PATH"
    assert own.hint == "install Node.js (it provides npx)"


def test_the_entrys_own_path_is_searched(tmp_path: Path) -> None:
    program = tmp_path / "srv"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    assert precheck(ServerEntry(command="srv", env={"PATH": str(tmp_path)})) is None


def test_what_is_only_known_once_resolved_is_left_to_the_spawn(tmp_path: Path) -> None:
    for entry in [
        ServerEntry(command="${MCPCTL_NO_SUCH_VAR}"),
        ServerEntry(command="srv", cwd="${MCPCTL_NO_SUCH_VAR}"),
        ServerEntry(command="srv", env={"PATH": "${MCPCTL_NO_SUCH_VAR}/bin"}),
    ]:
        assert precheck(entry) is None, entry


def test_a_missing_working_directory_is_left_to_the_spawn(tmp_path: Path) -> None:
    assert precheck(ServerEntry(command="srv", cwd=str(tmp_path / "gone"))) is None


def test_a_path_to_a_file_that_is_not_executable_says_so(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    script = tmp_path / "bin" / "srv"
    script.write_text("#!/bin/sh\n")
    script.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert precheck(ServerEntry(command=str(script))) == ProbeError(
        "spawn_failed", f"{str(script)!r} is not executable", f"chmod +x {script}"
    )
    # Relative to the working directory, as the spawn runs it.
    assert precheck(ServerEntry(command="bin/srv", cwd=str(tmp_path))) == ProbeError(
        "spawn_failed", "'bin/srv' is not executable", "chmod +x bin/srv"
    )


def test_a_relative_path_without_a_working_directory_is_from_ours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "srv").write_text("")
    monkeypatch.chdir(tmp_path)
    found = precheck(ServerEntry(command="bin/srv"))
    assert found is not None and found.message == "'bin/srv' is not executable"


def test_a_path_to_nothing_or_a_folder_is_not_found(tmp_path: Path) -> None:
    gone = precheck(ServerEntry(command=str(tmp_path / "gone")))
    assert gone is not None and gone.code == "command_not_found"
    assert gone.message == f"command {str(tmp_path / 'gone')!r} not found at {tmp_path / 'gone'}"
    folder = precheck(ServerEntry(command=str(tmp_path)))
    assert folder is not None and folder.code == "command_not_found"


# --- timeouts and garbage ---------------------------------------------------------------


def test_a_server_that_did_not_answer_in_time() -> None:
    assert timeout_error(10.0) == ProbeError(
        "timeout",
        "no answer within 10 s",
        "the server may be slow to start (raise its timeout) or be waiting for input",
    )
    assert timeout_error(2.5, StdioDiagnostics()).message == "no answer within 2.5 s"


def test_a_tool_that_did_not_answer_in_time() -> None:
    assert timeout_error(30, calling="slow") == ProbeError(
        "timeout",
        "the tool 'slow' did not answer within 30 s",
        "the tool may need longer: raise --timeout",
    )


def test_a_timeout_after_garbage_on_stdout_blames_the_garbage() -> None:
    diag = StdioDiagnostics(garbage_lines=2, first_garbage="Starting server...\n")
    expected = ProbeError(
        "protocol_error",
        "no valid answer within 5 s; the server wrote 2 line(s) that are not JSON-RPC on "
        "stdout, first: 'Starting server...'",
        NOT_JSON_RPC,
    )
    assert timeout_error(5, diag) == expected
    assert timeout_error(5, diag, calling="t") == expected


def test_the_garbage_shown_is_cut_to_120_characters() -> None:
    diag = StdioDiagnostics(garbage_lines=1, first_garbage="y" * 200)
    error = classify(RuntimeError("x"), STDIO, diag, "s")
    assert error.message == (
        f"the server wrote 1 line(s) that are not JSON-RPC on stdout, first: {'y' * 119 + '…'!r}"
    )
    unknown = classify(RuntimeError("x"), STDIO, StdioDiagnostics(garbage_lines=3), "s")
    assert unknown.message.endswith("first: ''")


# --- exceptions to codes ----------------------------------------------------------------


def group(*excs: BaseException) -> BaseExceptionGroup:
    return BaseExceptionGroup("tasks", list(excs))


def test_exception_leaves_flattens_nested_groups_in_order() -> None:
    a, b, c = ValueError("a"), KeyError("b"), OSError("c")
    assert exception_leaves(group(a, group(b, group(c)))) == [a, b, c]
    assert exception_leaves(a) == [a]
    assert exception_leaves(ExceptionGroup("e", [a])) == [a]


def test_a_probe_failure_keeps_its_reason_message_and_hint() -> None:
    failed = ProbeFailed("gh", "auth_required", "sign in first\n  please", hint="h")
    assert classify(group(ValueError("x"), failed), REMOTE, None, "gh") == ProbeError(
        "auth_required", "sign in first please", "h"
    )
    long = ProbeFailed("gh", "r", "z" * 400)
    assert classify(long, REMOTE, None, "gh").message == "z" * 299 + "…"


def test_placeholder_and_entry_errors_keep_their_words() -> None:
    unreachable = SecretUnreachableError(
        "variable X: the keyring could not be asked", variable="X", reason="no D-Bus", hint="h1"
    )
    assert classify(unreachable, STDIO, None, "s") == ProbeError(
        "variable_unreachable", "variable X: the keyring could not be asked", "h1"
    )
    missing = PlaceholderError("variable Y is not set", variable="Y", hint="h2")
    assert classify(group(missing), STDIO, None, "s") == ProbeError(
        "missing_variable", "variable Y is not set", "h2"
    )
    invalid = InvalidEntryError("bad entry", hint="h3")
    assert classify(invalid, STDIO, None, "s") == ProbeError("invalid_entry", "bad entry", "h3")


def test_the_entrys_errors_come_before_how_the_server_ended() -> None:
    exited = StdioDiagnostics(exited_by_itself=True, returncode=1)
    missing = PlaceholderError("variable Y is not set", variable="Y")
    assert classify(missing, STDIO, exited, "s").code == "missing_variable"


@pytest.mark.parametrize(
    ("returncode", "how"),
    [(1, "with code 1"), (0, "with code 0"), (-9, "on signal 9"), (None, "on signal 0")],
)
def test_a_server_that_exited_by_itself(returncode: int | None, how: str) -> None:
    diag = StdioDiagnostics(exited_by_itself=True, returncode=returncode, garbage_lines=4)
    assert classify(RuntimeError("closed"), STDIO, diag, "s") == ProbeError(
        "server_exited",
        f"the server exited {how} before the handshake finished",
        "its last lines of stderr are shown; run the command by hand to see more",
    )


def test_a_server_that_exited_after_the_handshake_says_so() -> None:
    diag = StdioDiagnostics(exited_by_itself=True, returncode=2, handshake_done=True)
    error = classify(RuntimeError("closed"), STDIO, diag, "s")
    assert (error.code, error.message) == (
        "server_exited",
        "the server exited with code 2 after the handshake",
    )


def test_a_server_that_was_stopped_is_not_one_that_exited() -> None:
    diag = StdioDiagnostics(returncode=-15)
    assert classify(TimeoutError(), STDIO, diag, "s").code == "timeout"


def request() -> httpx2.Request:
    return httpx2.Request("POST", "https://mcp.example.com/mcp")


def status_error(status: int, **headers: str) -> httpx2.HTTPStatusError:
    response = httpx2.Response(status, headers=headers, request=request())
    return httpx2.HTTPStatusError(f"HTTP {status}", request=request(), response=response)


def test_an_http_error_status_is_read_from_the_response() -> None:
    challenge = status_error(401, **{"WWW-Authenticate": 'Bearer realm="x"'})
    found = classify(group(ValueError("x"), challenge), REMOTE, None, "gh")
    assert (found.code, found.message) == (
        "auth_required",
        "the server answered 401 Unauthorized and asks for a sign-in (Bearer)",
    )
    html = classify(status_error(404, **{"content-type": "text/html"}), REMOTE, None, "gh")
    assert html.code == "not_mcp"


def test_a_refused_connection_names_the_url() -> None:
    expected = ProbeError(
        "connection_refused",
        "cannot connect to https://mcp.example.com/mcp: All connection attempts failed",
        "is the server running, and is the URL right?",
    )
    refused = httpx2.ConnectError("All connection attempts failed", request=request())
    assert classify(refused, REMOTE, None, "r") == expected
    plain = ConnectionRefusedError("All connection attempts failed")
    assert classify(group(plain), REMOTE, None, "r") == expected


def test_a_timeout_is_the_entrys() -> None:
    expected = timeout_error(7.5)
    assert classify(httpx2.ReadTimeout("t", request=request()), REMOTE, None, "r") == expected
    assert classify(TimeoutError(), REMOTE, None, "r") == expected


def test_an_mcp_error_is_read_by_its_message() -> None:
    found = classify(MCPError(-32601, "Method not found"), REMOTE, None, "r")
    assert found == ProbeError("mcp_error", "Method not found")


def test_an_html_page_over_sse_is_not_mcp() -> None:
    html = httpx2.SSEError("Expected response header Content-Type to contain 'text/html'")
    assert classify(html, REMOTE, None, "r") == ProbeError(
        "not_mcp", "https://mcp.example.com/mcp answered with an HTML page, not MCP", NOT_MCP
    )
    other = classify(httpx2.SSEError("bad event"), REMOTE, None, "r")
    assert other == ProbeError("network_error", "SSEError: bad event")


def test_another_network_failure_names_its_kind() -> None:
    error = httpx2.RemoteProtocolError("peer closed\n connection", request=request())
    assert classify(error, REMOTE, None, "r") == ProbeError(
        "network_error", "RemoteProtocolError: peer closed connection"
    )


def test_anything_else_is_a_failed_probe_with_its_first_line() -> None:
    error = RuntimeError("  something broke\nTraceback...\n")
    assert classify(group(error, KeyError("k")), STDIO, StdioDiagnostics(), "s") == ProbeError(
        "probe_failed", "RuntimeError: something broke", PROBE_FAILED_HINT
    )
    assert classify(RuntimeError(""), STDIO, None, "s").message == "RuntimeError:"


class Model(pydantic.BaseModel):
    count: int
    inner: dict[str, int] = {}


def validation_error(data: object) -> pydantic.ValidationError:
    try:
        Model.model_validate(data)
    except pydantic.ValidationError as exc:
        return exc
    raise AssertionError("valid")


def test_a_validation_error_is_its_first_error_not_a_dump() -> None:
    error = validation_error({"count": "x", "inner": {"a": "b"}})
    found = classify(error, STDIO, None, "s")
    assert found.message == (
        "ValidationError: count: Input should be a valid integer, unable to parse string as "
        "an integer"
    )
    nested = classify(validation_error({"count": 1, "inner": {"a": "b"}}), STDIO, None, "s")
    assert nested.message.startswith("ValidationError: inner.a: Input should be a valid")


def test_an_error_list_without_a_location_is_its_message() -> None:
    class Located(Exception):
        def __init__(self, errors: list[dict[str, object]]) -> None:
            super().__init__("first\nsecond")
            self._errors = errors

        def errors(self) -> list[dict[str, object]]:
            return self._errors

    assert classify(Located([{"msg": "bad"}]), STDIO, None, "s").message == "Located: bad"
    assert classify(Located([{"loc": ()}]), STDIO, None, "s").message == "Located:"
    assert classify(Located([]), STDIO, None, "s").message == "Located: first"


# --- HTTP statuses and MCP errors -------------------------------------------------------


def test_a_401_with_a_challenge_asks_for_a_sign_in() -> None:
    response = httpx2.Response(401, headers={"www-authenticate": "  Bearer, realm=x"})
    assert http_error(401, "gh", response) == ProbeError(
        "auth_required",
        "the server answered 401 Unauthorized and asks for a sign-in (Bearer)",
        'sign in with \'mcpctl auth gh\' (its entry needs "auth": {"type": "oauth"}), '
        "or fix the credentials in its headers",
    )


def test_a_401_without_a_challenge_refuses_the_credentials() -> None:
    expected = ProbeError(
        "unauthorized",
        "the server answered 401 Unauthorized",
        "set the credentials of 'gh' (its headers); if it uses OAuth, sign in with "
        "'mcpctl auth gh'",
    )
    assert http_error(401, "gh") == expected
    assert http_error(401, "gh", httpx2.Response(401, headers={"www-authenticate": " "})) == (
        expected
    )


def test_other_statuses() -> None:
    assert http_error(403, "gh") == ProbeError(
        "forbidden",
        "the server answered 403 Forbidden",
        "the credentials lack the needed permissions",
    )
    page = httpx2.Response(404, headers={"content-type": "text/html; charset=utf-8"})
    assert http_error(404, "gh", page) == ProbeError(
        "not_mcp", "HTTP 404 with an HTML page: not an MCP endpoint", NOT_MCP
    )
    assert http_error(500, "gh") == ProbeError("http_error", "the server answered HTTP 500")
    json_page = httpx2.Response(502, headers={"content-type": "application/json"})
    assert http_error(502, "gh", json_page) == ProbeError(
        "http_error", "the server answered HTTP 502"
    )


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("Unauthorized", http_error(401, "gh")),
        ("HTTP 401 from the server", http_error(401, "gh")),
        ("got an HTML page", ProbeError("not_mcp", "got an HTML page", NOT_MCP)),
        (
            "Connection closed",
            ProbeError(
                "connection_closed", "Connection closed", "the server closed the connection"
            ),
        ),
        ("Server error '503 Service Unavailable'", http_error(503, "gh")),
        ("error 404", http_error(404, "gh")),
        ("code 12345 and 4000", ProbeError("mcp_error", "code 12345 and 4000")),
        ("x 600 y", ProbeError("mcp_error", "x 600 y")),
        (
            "recursion limit exceeded",
            ProbeError(
                "mcp_error",
                "the server's answer is nested too deeply to be read (the MCP SDK's JSON "
                "parser stops at 200 levels)",
            ),
        ),
    ],
)
def test_an_mcp_errors_message_says_what_failed(message: str, expected: ProbeError) -> None:
    assert classify(MCPError(-1, message), REMOTE, None, "gh") == expected


def test_a_listing_the_server_refused_is_list_failed() -> None:
    error = group(MCPError(-32603, "Internal error:\n database down"))
    assert list_failed("prompts", error, STDIO, None, "s") == ProbeError(
        "list_failed",
        "prompts/list failed: Internal error: database down",
        "the server answered, but could not list its prompts; its logs may say why",
    )
    deep = list_failed("tools", MCPError(-1, "recursion limit exceeded"), STDIO, None, "s")
    assert deep is not None and deep.message == (
        "tools/list failed: the server's answer is nested too deeply to be read (the MCP "
        "SDK's JSON parser stops at 200 levels)"
    )


def test_any_other_failure_of_a_listing_fails_the_probe() -> None:
    assert list_failed("tools", RuntimeError("x"), STDIO, None, "s") is None
    assert list_failed("tools", MCPError(-1, "Connection closed"), STDIO, None, "s") is None
    exited = StdioDiagnostics(exited_by_itself=True, returncode=1)
    assert list_failed("tools", MCPError(-1, "Method not found"), STDIO, exited, "s") is None


# --- errors for the CLI -----------------------------------------------------------------


def test_each_code_becomes_its_exception() -> None:
    missing = as_exception("s", ProbeError("command_not_found", "command 'x' not found", "h"))
    assert type(missing) is CommandNotFoundError
    assert (missing.message, missing.hint) == ("s: command 'x' not found", "h")
    unset = as_exception("s", ProbeError("missing_variable", "variable Y is not set", "h"))
    assert type(unset) is PlaceholderError
    assert (unset.message, unset.hint, unset.variable) == ("s: variable Y is not set", "h", "")
    away = as_exception("s", ProbeError("variable_unreachable", "no keyring", "h"))
    assert type(away) is SecretUnreachableError
    assert (away.message, away.reason, away.hint) == ("s: no keyring", "no keyring", "h")
    assert away.variable == ""
    bad = as_exception("s", ProbeError("invalid_entry", "args[0] holds NUL", "h"))
    assert type(bad) is InvalidEntryError and (bad.message, bad.hint) == (
        "s: args[0] holds NUL",
        "h",
    )


def test_any_other_code_is_a_failed_probe_with_the_servers_stderr() -> None:
    failed = as_exception("s", ProbeError("timeout", "no answer", "wait"), ["line 1", "line 2"])
    assert type(failed) is ProbeFailed
    assert (failed.server, failed.reason, failed.message, failed.hint) == (
        "s",
        "timeout",
        "s: no answer",
        "wait",
    )
    assert failed.stderr == ["line 1", "line 2"]
    assert as_exception("s", ProbeError("timeout", "m")).stderr == []  # type: ignore[attr-defined]


def test_precheck_runs_without_our_environment_having_the_program(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The server's environment (the entry's PATH), not ours, is where it is looked for.
    program = tmp_path / "srv"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    entry = ServerEntry(command="srv", env={"PATH": os.defpath})
    assert precheck(entry) is not None


def test_an_error_without_a_message_at_a_location_names_the_location() -> None:
    class Located(Exception):
        def errors(self) -> list[dict[str, object]]:
            return [{"loc": ("params", 0)}]

    assert classify(Located("x"), STDIO, None, "s").message == "Located: params.0:"


def test_a_sign_in_asked_over_http_names_the_server_in_its_hint() -> None:
    challenge = status_error(401, **{"WWW-Authenticate": "Bearer"})
    assert (
        classify(challenge, REMOTE, None, "gh").hint
        == http_error(401, "gh", challenge.response).hint
    )
    assert "'mcpctl auth gh'" in (classify(challenge, REMOTE, None, "gh").hint or "")


def test_a_long_challenge_scheme_is_cut_to_40_characters() -> None:
    response = httpx2.Response(401, headers={"www-authenticate": "S" * 50 + " realm=x"})
    assert http_error(401, "gh", response).message == (
        f"the server answered 401 Unauthorized and asks for a sign-in ({'S' * 39}…)"
    )
    exact = httpx2.Response(401, headers={"www-authenticate": "S" * 40})
    assert http_error(401, "gh", exact).message.endswith(f"({'S' * 40})")


def test_a_status_without_a_content_type() -> None:
    assert http_error(500, "gh", httpx2.Response(500)) == ProbeError(
        "http_error", "the server answered HTTP 500"
    )


def test_a_401_inside_a_word_still_asks_for_credentials() -> None:
    assert classify(MCPError(-1, "got HTTP401"), REMOTE, None, "gh") == http_error(401, "gh")


def test_a_relative_program_in_the_working_directory_passes(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    script = tmp_path / "bin" / "srv"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    assert precheck(ServerEntry(command="bin/srv", cwd=str(tmp_path))) is None

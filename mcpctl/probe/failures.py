"""Why a server failed: cheap checks before connecting, and exceptions -> stable codes.

Every failure of a probe becomes a :class:`~mcpctl.probe.childenv.ProbeError` (a stable
``code``, one line of message, a hint), never a traceback or a validation dump; the codes
are listed in docs/health.md. Functions that raise (``list_tools``, ``call_tool``) turn it
into an exception of the :mod:`mcpctl.errors` tree with :func:`as_exception`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcpctl.config.placeholders import find_placeholders, unspawnable
from mcpctl.errors import (
    CommandNotFoundError,
    InvalidEntryError,
    McpctlError,
    PlaceholderError,
    ProbeFailed,
    SecretUnreachableError,
)
from mcpctl.probe.childenv import ProbeError, child_env, command_not_found
from mcpctl.probe.serverenv import find_program

if TYPE_CHECKING:
    from mcpctl.config.model import ServerEntry
    from mcpctl.probe.spawn import StdioDiagnostics

__all__ = [
    "MESSAGE_MAX",
    "as_exception",
    "classify",
    "exception_leaves",
    "list_failed",
    "one_line",
    "precheck",
    "timeout_error",
]

MESSAGE_MAX = 300
_NOT_JSON_RPC_HINT = "a stdio server must write only protocol messages on stdout; logs go to stderr"
_NOT_MCP_HINT = "check the URL's path (often /mcp or /sse)"


def one_line(text: str, limit: int = MESSAGE_MAX) -> str:
    """``text`` as one line of at most ``limit`` characters (errors are never a dump).

    Secrets are redacted first: a cut must not leave half of one behind.
    """
    from mcpctl.config.redaction import redact

    flat = " ".join(redact(str(text)).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def precheck(entry: ServerEntry) -> ProbeError | None:
    """Cheap checks that spare a doomed probe the SDK import and the spawn: the program is
    looked for as the spawn looks for it (:func:`~mcpctl.probe.serverenv.find_program`)."""
    if entry.is_remote or entry.command is None:
        return None
    problem = unspawnable(entry)
    if problem is not None:
        return ProbeError("invalid_entry", problem)
    command = entry.command
    own_path = entry.env.get("PATH")
    unknown = (command, entry.cwd or "", own_path or "")
    if any(find_placeholders(text) for text in unknown):
        return None  # known once resolved: the spawn tells
    if find_program(command, child_env(entry), entry.cwd) is not None:
        return None
    if entry.cwd and not Path(entry.cwd).is_dir():
        return None  # the spawn says which folder is missing
    if os.sep in command:
        path = Path(entry.cwd or "") / command
        if path.is_file() and not os.access(path, os.X_OK):
            return ProbeError("spawn_failed", f"{command!r} is not executable",
                              f"chmod +x {command}")  # fmt: skip
    return command_not_found(command, own_path=own_path is not None)


def timeout_error(
    seconds: float, diag: StdioDiagnostics | None = None, *, calling: str | None = None
) -> ProbeError:
    """The error for a server (or, with ``calling``, a tool) that did not answer in time."""
    if diag is not None and diag.garbage_lines:
        return _garbage(diag, f"no valid answer within {seconds:g} s; ")
    if calling is not None:
        return ProbeError(
            "timeout",
            f"the tool {calling!r} did not answer within {seconds:g} s",
            "the tool may need longer: raise --timeout",
        )
    return ProbeError(
        "timeout",
        f"no answer within {seconds:g} s",
        "the server may be slow to start (raise its timeout) or be waiting for input",
    )


def _garbage(diag: StdioDiagnostics, prefix: str = "") -> ProbeError:
    first = one_line(diag.first_garbage or "", 120)
    return ProbeError(
        "protocol_error",
        f"{prefix}the server wrote {diag.garbage_lines} line(s) that are not JSON-RPC on "
        f"stdout, first: {first!r}",
        _NOT_JSON_RPC_HINT,
    )


def classify(
    exc: BaseException, entry: ServerEntry, diag: StdioDiagnostics | None, name: str
) -> ProbeError:
    """The :class:`ProbeError` for an exception raised while connecting or probing."""
    import httpx2

    from mcpctl.sdk import MCPError

    leaves = exception_leaves(exc)
    for leaf in leaves:
        if isinstance(leaf, ProbeFailed):  # its message may quote the server: cut it too
            return ProbeError(leaf.reason, one_line(leaf.message.removeprefix(f"{leaf.server}: ")),
                              leaf.hint)  # fmt: skip
        if isinstance(leaf, SecretUnreachableError):  # stored, maybe: not "missing"
            return ProbeError(leaf.code, leaf.message, leaf.hint)
        if isinstance(leaf, PlaceholderError):
            return ProbeError("missing_variable", leaf.message, leaf.hint)
        if isinstance(leaf, InvalidEntryError):
            return ProbeError("invalid_entry", leaf.message, leaf.hint)
    if diag is not None:
        if diag.exited_by_itself:
            code = diag.returncode
            how = (
                f"with code {code}"
                if code is not None and code >= 0
                else f"on signal {-(code or 0)}"
            )
            when = "after the handshake" if diag.handshake_done else "before the handshake finished"
            return ProbeError(
                "server_exited",
                f"the server exited {how} {when}",
                "its last lines of stderr are shown; run the command by hand to see more",
            )
        if diag.garbage_lines:
            return _garbage(diag)
    for leaf in leaves:
        if isinstance(leaf, httpx2.HTTPStatusError):
            return http_error(leaf.response.status_code, name, leaf.response)
        if isinstance(leaf, httpx2.ConnectError | ConnectionRefusedError):
            return ProbeError("connection_refused",
                              one_line(f"cannot connect to {entry.url}: {leaf}"),
                              "is the server running, and is the URL right?")  # fmt: skip
        if isinstance(leaf, httpx2.TimeoutException | TimeoutError):
            return timeout_error(entry.timeout_ms / 1000)
        if isinstance(leaf, MCPError):
            return _mcp_error(leaf, name)
        if isinstance(leaf, httpx2.SSEError) and "html" in str(leaf):
            return ProbeError("not_mcp", f"{entry.url} answered with an HTML page, not MCP",
                              _NOT_MCP_HINT)  # fmt: skip
        if isinstance(leaf, httpx2.HTTPError):
            return ProbeError("network_error", one_line(f"{type(leaf).__name__}: {leaf}"))
    return ProbeError(
        "probe_failed",
        one_line(f"{type(leaves[0]).__name__}: {_first_line(leaves[0])}"),
        "run with -v to see the exchange; if the server works elsewhere, report it to mcpctl",
    )


def list_failed(
    what: str, exc: BaseException, entry: ServerEntry, diag: StdioDiagnostics | None, name: str
) -> ProbeError | None:
    """The error of a ``{what}/list`` the server answered with an error (``list_failed``: it
    answered, so it is degraded, not down); ``None`` when ``exc`` is another failure (the
    connection closed, an HTTP error status...), which fails the probe as usual."""
    from mcpctl.sdk import MCPError

    answer = next((leaf for leaf in exception_leaves(exc) if isinstance(leaf, MCPError)), None)
    if answer is None or classify(exc, entry, diag, name).code != "mcp_error":
        return None
    message = one_line(f"{what}/list failed: {_said(str(getattr(answer, 'message', answer)))}")
    hint = f"the server answered, but could not list its {what}; its logs may say why"
    return ProbeError("list_failed", message, hint)


def _first_line(exc: BaseException) -> str:
    # A pydantic ValidationError's str() is a multi-line dump: its first error says enough.
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            return f"{where}: {first.get('msg', '')}" if where else str(first.get("msg", ""))
        except Exception:  # noqa: S110 -- any other errors() shape: fall back to the text
            pass
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


def http_error(status: int, name: str, response: Any = None) -> ProbeError:
    """The error for an HTTP error status of a remote server.

    A 401 with a ``WWW-Authenticate`` challenge asks for a sign-in (``auth_required``); one
    without refuses the credentials the entry sent, if any (``unauthorized``).
    """
    if status == 401:
        headers = response.headers if response is not None else {}
        challenge = str(headers.get("www-authenticate", "")).strip()
        if challenge:
            scheme = one_line(challenge.split()[0].rstrip(","), 40)
            return ProbeError("auth_required",
                              f"the server answered 401 Unauthorized and asks for a sign-in "
                              f"({scheme})", _challenge_hint(name))  # fmt: skip
        return ProbeError("unauthorized", "the server answered 401 Unauthorized",
                          f"set the credentials of {name!r} (its headers); if it uses OAuth, "
                          f"sign in with 'mcpctl auth {name}'")  # fmt: skip
    if status == 403:
        return ProbeError("forbidden", "the server answered 403 Forbidden",
                          "the credentials lack the needed permissions")  # fmt: skip
    ctype = response.headers.get("content-type", "") if response is not None else ""
    if "html" in ctype:
        return ProbeError("not_mcp", f"HTTP {status} with an HTML page: not an MCP endpoint",
                          _NOT_MCP_HINT)  # fmt: skip
    return ProbeError("http_error", f"the server answered HTTP {status}")


def _challenge_hint(name: str) -> str:
    """The hint of a server that asks for a sign-in (the entry may not use OAuth yet)."""
    return (
        f'sign in with \'mcpctl auth {name}\' (its entry needs "auth": {{"type": "oauth"}}), '
        "or fix the credentials in its headers"
    )


def _said(message: str) -> str:
    """An error's message, or what it means when it is a transport's failure to parse the
    server's answer (a validation dump otherwise)."""
    if "recursion limit exceeded" in message:
        return (
            "the server's answer is nested too deeply to be read (the MCP SDK's JSON parser "
            "stops at 200 levels)"
        )
    return message


def _mcp_error(exc: Any, name: str) -> ProbeError:
    message = one_line(_said(str(getattr(exc, "message", exc))))
    lowered = message.lower()
    if "401" in lowered or "unauthorized" in lowered:
        return http_error(401, name)
    if "html" in lowered:
        return ProbeError("not_mcp", message, _NOT_MCP_HINT)
    if "connection closed" in lowered:
        return ProbeError("connection_closed", message, "the server closed the connection")
    status = re.search(r"\b([45]\d\d)\b", message)
    if status:
        return http_error(int(status.group(1)), name)
    return ProbeError("mcp_error", message)


def as_exception(name: str, error: ProbeError, stderr: Sequence[str] = ()) -> McpctlError:
    """The exception for a failed server: the user's to fix (exit 2) or an outside one (3)."""
    if error.code == "command_not_found":
        return CommandNotFoundError(f"{name}: {error.message}", hint=error.hint)
    if error.code == "missing_variable":
        return PlaceholderError(f"{name}: {error.message}", variable="", hint=error.hint)
    if error.code == SecretUnreachableError.code:
        return SecretUnreachableError(
            f"{name}: {error.message}", variable="", reason=error.message, hint=error.hint
        )
    if error.code == "invalid_entry":
        return InvalidEntryError(f"{name}: {error.message}", hint=error.hint)
    return ProbeFailed(name, error.code, error.message, hint=error.hint, stderr=stderr)


def exception_leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, or ``[exc]`` itself.

    Task groups (anyio, the MCP SDK) wrap a failure in groups; the cause is a leaf.
    """
    if isinstance(exc, BaseExceptionGroup):
        out: list[BaseException] = []
        for sub in exc.exceptions:
            out.extend(exception_leaves(sub))
        return out
    return [exc]

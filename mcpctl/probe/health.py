"""Health probes, tool listing and tool calls, built on :mod:`mcpctl.probe.connect`.

A probe is: connect (spawn or HTTP), ``initialize``, ``tools/list`` through every page, and
``ping``, all inside the server's timeout. Failures become a :class:`ProbeError` with a stable
code and a hint, never an exception: one bad server never breaks the report of the others.

This module imports the MCP SDK only inside the functions that connect, so that a missing
command is reported in milliseconds, before the SDK's second of imports.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from mcpctl.errors import McpctlError, PlaceholderError, exception_leaves
from mcpctl.config.model import ServerEntry
from mcpctl.config.placeholders import MissingPolicy, SecretSource, find_placeholders
from mcpctl.probe.spawn import ProbeError, command_not_found

if TYPE_CHECKING:
    from anyio.abc import Process

    from mcpctl.probe.connect import Connection
    from mcpctl.config.placeholders import ResolvedEntry
    from mcpctl.probe.spawn import StdioDiagnostics

__all__ = [
    "ProbeError",
    "ProbeFailed",
    "ProbeResult",
    "ServerKind",
    "ToolCallResult",
    "ToolInfo",
    "ToolNotFound",
    "call_tool",
    "default_concurrency",
    "list_tools",
    "probe",
    "probe_all",
]

ServerKind = Literal["internal", "external"]
MAX_TOOL_PAGES = 100


@dataclass(frozen=True)
class ToolInfo:
    """One tool of a server."""

    name: str
    description: str
    input_schema: dict[str, Any]
    title: str | None = None

    def params_summary(self, limit: int = 6) -> str:
        """``city*: string, days: integer`` (``*`` = required)."""
        props = self.input_schema.get("properties") or {}
        required = set(self.input_schema.get("required") or [])
        parts = []
        for pname, spec in list(props.items())[:limit]:
            kind = spec.get("type", "any") if isinstance(spec, dict) else "any"
            if isinstance(kind, list):
                kind = "|".join(str(k) for k in kind)
            parts.append(f"{pname}{'*' if pname in required else ''}: {kind}")
        if len(props) > limit:
            parts.append(f"+{len(props) - limit} more")
        return ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "input_schema": self.input_schema,
        }


@dataclass
class ProbeResult:
    """The health of one server (the shape the seeds' orchestrator reports, and more)."""

    name: str
    type: ServerKind = "external"
    transport: str = "stdio"
    available: bool = False
    healthy: bool = False
    latency_ms: dict[str, float] = field(default_factory=dict)
    server_name: str | None = None
    server_version: str | None = None
    protocol_version: str | None = None
    capabilities: list[str] = field(default_factory=list)
    tool_count: int | None = None
    tools: list[ToolInfo] = field(default_factory=list)
    error: ProbeError | None = None
    stderr: list[str] = field(default_factory=list)

    def to_dict(self, *, with_tools: bool = False) -> dict[str, Any]:
        """JSON form: ``name, available, healthy, type`` first, as the seeds report."""
        data: dict[str, Any] = {
            "name": self.name,
            "available": self.available,
            "healthy": self.healthy,
            "type": self.type,
            "transport": self.transport,
            "latency_ms": {k: round(v, 1) for k, v in self.latency_ms.items()},
            "server": {"name": self.server_name, "version": self.server_version},
            "protocol_version": self.protocol_version,
            "capabilities": self.capabilities,
            "tool_count": self.tool_count,
            "error": self.error.to_dict() if self.error else None,
        }
        if self.stderr:
            data["stderr"] = self.stderr
        if with_tools:
            data["tools"] = [t.to_dict() for t in self.tools]
        return data


@dataclass(frozen=True)
class ToolCallResult:
    """What a tool call returned."""

    is_error: bool
    text: str
    structured: Any = None
    content: list[dict[str, Any]] = field(default_factory=list)


def default_concurrency(transport: str = "stdio") -> int:
    """How many servers to probe at once.

    Spawned servers spend their start-up on the CPU (a Python server imports for over a
    second): more of them at once than CPUs only adds contention -- measured here, 20
    mcp-server-time probes cost 10-15 % more CPU at 4-8 at a time than at 3 on 2 cores.
    So stdio gets one more than the CPU count; remote probes mostly wait on the network
    and get 4 per CPU (8 to 32).
    """
    cpus = os.cpu_count() or 1
    if transport == "stdio":
        return max(2, cpus + 1)
    return max(8, min(32, 4 * cpus))


# --- failures before any connection -----------------------------------------------------


def _precheck(entry: ServerEntry) -> ProbeError | None:
    """Cheap checks that spare a doomed probe the SDK import and the spawn."""
    if entry.effective_transport != "stdio" or entry.command is None:
        return None
    command = entry.command
    if find_placeholders(command):
        return None
    if os.sep in command:
        base = Path(entry.cwd) if entry.cwd and not find_placeholders(entry.cwd) else Path()
        path = base / Path(command).expanduser()
        if not path.exists():
            return command_not_found(command)
        if not os.access(path, os.X_OK):
            return ProbeError("spawn_failed", f"{command!r} is not executable",
                              f"chmod +x {command}")  # fmt: skip
        return None
    if shutil.which(command) is None:
        return command_not_found(command)
    return None


# --- classification ---------------------------------------------------------------------


def _classify(
    exc: BaseException, entry: ServerEntry, diag: StdioDiagnostics | None, name: str
) -> ProbeError:
    import httpx2

    from mcpctl.probe.connect import MCPError, TransportFailure

    leaves = exception_leaves(exc)
    for leaf in leaves:
        if isinstance(leaf, TransportFailure):
            return leaf.error
        if isinstance(leaf, PlaceholderError):
            return ProbeError("missing_variable", leaf.message, leaf.hint)
    if diag is not None:
        if diag.exited_by_itself:
            code = diag.returncode
            how = (
                f"with code {code}"
                if code is not None and code >= 0
                else f"on signal {-(code or 0)}"
            )
            return ProbeError(
                "server_exited",
                f"the server exited {how} before the handshake finished",
                "its last lines of stderr are shown; run the command by hand to see more",
            )
        if diag.garbage_lines:
            return ProbeError(
                "protocol_error",
                f"the server wrote {diag.garbage_lines} line(s) that are not JSON-RPC on stdout, "
                f"first: {diag.first_garbage!r}",
                "a stdio server must write only protocol messages on stdout; logs go to stderr",
            )
    for leaf in leaves:
        if isinstance(leaf, httpx2.HTTPStatusError):
            return _http_error(leaf.response.status_code, name, leaf.response)
        if isinstance(leaf, httpx2.ConnectError | ConnectionRefusedError):
            return ProbeError("connection_refused", f"cannot connect to {entry.url}: {leaf}",
                              "is the server running, and is the URL right?")  # fmt: skip
        if isinstance(leaf, httpx2.TimeoutException | TimeoutError):
            return _timeout(entry)
        if isinstance(leaf, MCPError):
            return _mcp_error(leaf, name)
        if isinstance(leaf, httpx2.SSEError) and "html" in str(leaf):
            return ProbeError("not_mcp", f"{entry.url} answered with an HTML page, not MCP",
                              "check the URL's path (often /mcp or /sse)")  # fmt: skip
        if isinstance(leaf, httpx2.HTTPError):
            return ProbeError("network_error", f"{type(leaf).__name__}: {leaf}")
    leaf = leaves[0]
    return ProbeError("probe_failed", f"{type(leaf).__name__}: {leaf}")


def _http_error(status: int, name: str, response: Any = None) -> ProbeError:
    if status == 401:
        return ProbeError("auth_required", "the server answered 401 Unauthorized",
                          f"sign in with 'mcpctl auth {name}', or set its token")  # fmt: skip
    if status == 403:
        return ProbeError("forbidden", "the server answered 403 Forbidden",
                          "the credentials lack the needed permissions")  # fmt: skip
    ctype = ""
    if response is not None:
        ctype = response.headers.get("content-type", "")
    if "html" in ctype:
        return ProbeError("not_mcp", f"HTTP {status} with an HTML page: not an MCP endpoint",
                          "check the URL's path (often /mcp or /sse)")  # fmt: skip
    return ProbeError("http_error", f"the server answered HTTP {status}")


def _mcp_error(exc: Any, name: str) -> ProbeError:
    message = str(getattr(exc, "message", exc))
    lowered = message.lower()
    if "401" in lowered or "unauthorized" in lowered:
        return _http_error(401, name)
    if "html" in lowered:
        return ProbeError("not_mcp", message, "check the URL's path (often /mcp or /sse)")
    if "connection closed" in lowered:
        return ProbeError("connection_closed", message, "the server closed the connection")
    import re

    status = re.search(r"\b([45]\d\d)\b", message)
    if status:
        return _http_error(int(status.group(1)), name)
    return ProbeError("mcp_error", message)


def _timeout(entry: ServerEntry) -> ProbeError:
    return ProbeError(
        "timeout",
        f"no answer within {entry.timeout_ms / 1000:g} s",
        "the server may be slow to start (raise its timeout) or waiting for input it never gets",
    )


# --- probing -------------------------------------------------------------------------------


async def _list_all_tools(conn: Connection) -> list[ToolInfo]:
    import mcp_types as types

    tools: list[ToolInfo] = []
    cursor: str | None = None
    for _ in range(MAX_TOOL_PAGES):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await conn.session.list_tools(params=params)
        for tool in page.tools:
            tools.append(
                ToolInfo(
                    tool.name,
                    tool.description or "",
                    dict(tool.input_schema or {}),
                    getattr(tool, "title", None),
                )
            )
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _capabilities(result: Any) -> list[str]:
    caps = result.capabilities
    names = ("tools", "resources", "prompts", "logging", "completions", "experimental")
    return [n for n in names if getattr(caps, n, None) is not None]


async def probe(
    name: str,
    entry: ServerEntry,
    *,
    kind: ServerKind = "external",
    timeout: float | None = None,
    policy: MissingPolicy = "error",
    secrets: SecretSource | None = None,
) -> ProbeResult:
    """Probe one server: connect, initialize, list every page of tools, ping.

    Never raises for a failing server: the result says what failed. The whole probe,
    server shutdown included, ends within ``timeout`` (default: the entry's) plus a second.
    """
    return await _probe(name, entry, kind, timeout, policy, secrets)


async def _probe(
    name: str,
    entry: ServerEntry,
    kind: ServerKind,
    timeout: float | None,
    policy: MissingPolicy,
    secrets: SecretSource | None,
    started_server: tuple[Process, ResolvedEntry] | None = None,
    done: Callable[[], None] | None = None,
) -> ProbeResult:
    result = ProbeResult(name=name, type=kind, transport=entry.effective_transport)
    started = time.perf_counter()
    early = _precheck(entry)
    if early is not None:
        result.error = early
        result.latency_ms["total"] = (time.perf_counter() - started) * 1000
        return result
    import anyio

    from mcpctl.probe.connect import connect
    from mcpctl.probe.spawn import StdioDiagnostics

    seconds = timeout if timeout is not None else entry.timeout_ms / 1000
    diag = StdioDiagnostics() if entry.effective_transport == "stdio" else None
    process, resolved = started_server if started_server else (None, None)
    try:
        with anyio.fail_after(seconds):
            async with connect(
                name, entry, timeout=seconds, policy=policy, secrets=secrets,
                diagnostics=diag, process=process, resolved=resolved,
            ) as conn:  # fmt: skip
                result.transport = conn.transport
                result.available = True
                result.latency_ms["connect"] = conn.connect_ms
                result.latency_ms["initialize"] = conn.initialize_ms
                info = conn.initialize_result
                result.server_name = info.server_info.name
                result.server_version = info.server_info.version
                result.protocol_version = str(info.protocol_version)
                result.capabilities = _capabilities(info)
                t0 = time.perf_counter()
                if "tools" in result.capabilities:
                    result.tools = await _list_all_tools(conn)
                result.tool_count = len(result.tools)
                t1 = time.perf_counter()
                await conn.session.send_ping()
                t2 = time.perf_counter()
                result.latency_ms["list_tools"] = (t1 - t0) * 1000
                result.latency_ms["ping"] = (t2 - t1) * 1000
                result.healthy = True
                if done is not None:
                    done()  # the answer is in: the shutdown need not hold a slot
    except TimeoutError:
        result.error = _timeout_error(entry, diag, seconds)
    except Exception as exc:  # classified below: one server's failure is data, not a crash
        result.error = _classify(exc, entry, diag, name)
    if diag is not None and (result.error is not None or not result.healthy):
        result.stderr = diag.tail()
    if result.error is not None:
        result.healthy = False
    result.latency_ms["total"] = (time.perf_counter() - started) * 1000
    return result


def _timeout_error(entry: ServerEntry, diag: StdioDiagnostics | None, seconds: float) -> ProbeError:
    if diag is not None and diag.garbage_lines:
        return ProbeError(
            "protocol_error",
            f"no valid answer within {seconds:g} s; the server wrote {diag.garbage_lines} "
            f"line(s) that are not JSON-RPC on stdout, first: {diag.first_garbage!r}",
            "a stdio server must write only protocol messages on stdout; logs go to stderr",
        )
    return ProbeError(
        "timeout",
        f"no answer within {seconds:g} s",
        "the server may be slow to start (raise its timeout) or be waiting for input",
    )


async def probe_all(
    entries: Mapping[str, ServerEntry] | Iterable[tuple[str, ServerEntry, ServerKind]],
    *,
    concurrency: int | None = None,
    timeout: float | None = None,
    policy: MissingPolicy = "error",
    secrets: SecretSource | None = None,
) -> list[ProbeResult]:
    """Probe many servers at once, in input order.

    At most ``concurrency`` at a time (default: :func:`default_concurrency`, separately for
    spawned and remote servers).

    ``entries`` is a name -> entry mapping (all external) or (name, entry, kind) triples.
    The first stdio servers are started before the MCP SDK is imported, so that they boot
    while mcpctl loads it; a server's slot is freed as soon as its answer is in.
    """
    import anyio

    items: list[tuple[str, ServerEntry, ServerKind]] = (
        [(n, e, "external") for n, e in entries.items()]
        if isinstance(entries, Mapping)
        else list(entries)
    )
    stdio_limit = concurrency or default_concurrency("stdio")
    results: list[ProbeResult | None] = [None] * len(items)
    started = await _start_first(items, stdio_limit, policy, secrets)
    if started or any(entry.is_remote for _, entry, _ in items):
        import mcpctl.probe.connect  # noqa: F401 -- the SDK's import, while those servers boot

    limiters = {
        "stdio": anyio.CapacityLimiter(stdio_limit),
        "remote": anyio.CapacityLimiter(concurrency or default_concurrency("remote")),
    }

    async def one(i: int, name: str, entry: ServerEntry, kind: ServerKind) -> None:
        limiter = limiters["remote" if entry.is_remote else "stdio"]
        await limiter.acquire()
        held = True

        def release() -> None:
            nonlocal held
            if held:
                held = False
                limiter.release()

        try:
            results[i] = await _probe(
                name, entry, kind, timeout, policy, secrets, started.pop(i, None), release
            )
        finally:
            release()

    try:
        async with anyio.create_task_group() as tg:
            for i, (name, entry, kind) in enumerate(items):
                tg.start_soon(one, i, name, entry, kind)
    finally:
        from mcpctl.probe.spawn import stop_server

        for process, _ in started.values():  # never handed over (cancelled early)
            await stop_server(process)
    return [r for r in results if r is not None]


async def _start_first(
    items: list[tuple[str, ServerEntry, ServerKind]],
    limit: int,
    policy: MissingPolicy,
    secrets: SecretSource | None,
) -> dict[int, tuple[Process, ResolvedEntry]]:
    """Start up to ``limit`` stdio servers that look startable; failures are left to _probe."""
    from mcpctl.config.placeholders import resolve_entry
    from mcpctl.probe.spawn import spawn_server

    started: dict[int, tuple[Process, ResolvedEntry]] = {}
    for i, (name, entry, _) in enumerate(items):
        if len(started) >= limit:
            break
        if entry.effective_transport != "stdio" or _precheck(entry) is not None:
            continue
        try:
            resolved = resolve_entry(name, entry, policy=policy, secrets=secrets)
            if resolved is None:
                continue
            started[i] = (await spawn_server(resolved.entry), resolved)
        except (PlaceholderError, OSError):
            continue  # _probe reports it, with the right code
    return started


async def list_tools(
    name: str, entry: ServerEntry, *, timeout: float | None = None, policy: MissingPolicy = "error"
) -> list[ToolInfo]:
    """Every tool of one server (all pages).

    Raises:
        ProbeFailed: the server could not be reached or listed.
    """
    result = await probe(name, entry, timeout=timeout, policy=policy)
    if result.error is not None:
        raise ProbeFailed(name, result.error, result.stderr)
    return result.tools


class ProbeFailed(Exception):
    """A server could not be used; ``error`` says why."""

    def __init__(self, name: str, error: ProbeError, stderr: list[str] | None = None) -> None:
        super().__init__(f"{name}: {error.message}")
        self.name = name
        self.error = error
        self.stderr = stderr or []


class ToolNotFound(Exception):
    """The server has no tool of that name; ``available`` lists the ones it has."""

    def __init__(self, server: str, tool: str, available: list[str]) -> None:
        super().__init__(f"server {server!r} has no tool {tool!r}")
        self.server = server
        self.tool = tool
        self.available = available


async def call_tool(
    name: str,
    entry: ServerEntry,
    tool: str,
    arguments: dict[str, Any] | Callable[[ToolInfo], dict[str, Any]] | None = None,
    *,
    timeout: float | None = None,
    policy: MissingPolicy = "error",
) -> ToolCallResult:
    """Call one tool over one connection and return its result.

    ``arguments`` may be a function of the tool's :class:`ToolInfo` (its input schema), to
    build typed arguments from strings. A tool that reports an error returns
    ``is_error=True``; it does not raise.

    Raises:
        ToolNotFound: the server has no such tool.
        ProbeFailed: the server could not be reached, or the call failed at the protocol level.
    """
    early = _precheck(entry)
    if early is not None:
        raise ProbeFailed(name, early)
    import anyio

    from mcpctl.probe.connect import connect
    from mcpctl.probe.spawn import StdioDiagnostics

    seconds = timeout if timeout is not None else max(entry.timeout_ms / 1000, 60.0)
    diag = StdioDiagnostics() if entry.effective_transport == "stdio" else None
    try:
        with anyio.fail_after(seconds):
            async with connect(
                name, entry, timeout=seconds, policy=policy, diagnostics=diag
            ) as conn:
                if callable(arguments):
                    found = {t.name: t for t in await _list_all_tools(conn)}
                    if tool not in found:
                        raise ToolNotFound(name, tool, sorted(found))
                    arguments = arguments(found[tool])
                res = await conn.session.call_tool(tool, arguments or {})
                texts: list[str] = []
                content: list[dict[str, Any]] = []
                for block in res.content:
                    data = block.model_dump(mode="json", exclude_none=True)
                    content.append(data)
                    if data.get("type") == "text":
                        texts.append(str(data.get("text", "")))
                text = conn.resolved.redact("\n".join(texts))
                return ToolCallResult(bool(res.is_error), text, res.structured_content, content)
    except TimeoutError:
        raise ProbeFailed(name, _timeout_error(entry, diag, seconds)) from None
    except ToolNotFound:
        raise
    except Exception as exc:
        tool_missing = [
            e for e in exception_leaves(exc) if isinstance(e, ToolNotFound | McpctlError)
        ]
        if tool_missing:
            raise tool_missing[0] from None
        raise ProbeFailed(
            name, _classify(exc, entry, diag, name), diag.tail() if diag else None
        ) from None

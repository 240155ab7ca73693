"""The start-up report: what is configured, what answered, what changed since the last snapshot.

Built from the config's entries, the current snapshot (probed or not) and its diff against
the previous one (with what servers sent that held a secret, recorded redacted); rendered as
plain text that fits a chat message (short lines, no colour, no box drawing), as Markdown
(Slack, GitHub), or as data for JSON. Pure: no files, no
servers. Everything is in a fixed order (servers by name), so a report is reproducible.

    report = build_report(loaded.config.entries, snapshot, diff, since=previous.timestamp)
    print(render_text(report))
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcpctl.config.model import ServerEntry
from mcpctl.snapshot.diff import RedactedSecret, ServerChange, SnapshotDiff
from mcpctl.snapshot.model import McpRecord, Snapshot, tools_tokens
from mcpctl.text import escape_controls
from mcpctl.tokencount import ENCODING

__all__ = [
    "MAX_NAMES",
    "Report",
    "ServerSummary",
    "build_report",
    "render_changes",
    "render_markdown",
    "render_text",
]

#: How many names a line lists before "+N more".
MAX_NAMES = 5
#: Descriptions are cut to this many characters in text and Markdown (JSON has them whole).
MAX_DESCRIPTION = 60

_KIND_WORDS = {
    "tools": ("tool", "tools"),
    "prompts": ("prompt", "prompts"),
    "resource_templates": ("resource template", "resource templates"),
}


@dataclass(frozen=True)
class ServerSummary:
    """One server as the report shows it.

    ``status`` is ``healthy``, ``degraded`` (probed, but mcpctl had to repair what it sent
    or could not list something it offers), ``needs_auth`` (it asks for a sign-in: ``error``
    is ``auth_required``), ``failed`` (``error`` holds the probe's failure code) or ``not
    probed``; ``tools`` are all its tool names, sorted (empty unless it was listed).
    """

    name: str
    type: str
    transport: str | None
    description: str | None
    status: str
    error: str | None = None
    tools: tuple[str, ...] = ()
    prompt_count: int | None = None
    resource_template_count: int | None = None
    protocol: dict[str, str] | None = None  # the era and version spoken, when probed
    degraded: tuple[str, ...] = ()  # why it is degraded
    tokens: int | None = None  # what its tools' definitions cost the model, when known

    @property
    def listed(self) -> bool:
        """Whether its tools were listed (healthy or degraded)."""
        return self.status in ("healthy", "degraded")

    @property
    def tool_count(self) -> int | None:
        """How many tools it offers; ``None`` when that is unknown (not probed, failed)."""
        return len(self.tools) if self.listed else None

    def to_data(self) -> dict[str, Any]:
        """The JSON view."""
        return {
            "name": self.name,
            "type": self.type,
            "transport": self.transport,
            "description": self.description,
            "status": self.status,
            "error": self.error,
            "degraded": list(self.degraded),
            "tool_count": self.tool_count,
            "tools": list(self.tools),
            "prompt_count": self.prompt_count,
            "resource_template_count": self.resource_template_count,
            "protocol_version": (self.protocol or {}).get("version"),
            "protocol": self.protocol,
            "tokens": None if self.tokens is None else {"encoding": ENCODING, "total": self.tokens},
        }


@dataclass
class Report:
    """The start-up summary of one snapshot (see :func:`build_report`)."""

    timestamp: str
    servers: list[ServerSummary] = field(default_factory=list)
    changes: SnapshotDiff = field(default_factory=lambda: SnapshotDiff(first=True))
    since: str | None = None  # the previous snapshot's timestamp
    disabled: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def count(self, *, type: str | None = None, status: str | None = None) -> int:
        """How many servers are of ``type`` and/or in ``status``."""
        return sum(
            (type is None or s.type == type) and (status is None or s.status == status)
            for s in self.servers
        )

    @property
    def probed(self) -> bool:
        """Whether any server was probed."""
        return any(s.status != "not probed" for s in self.servers)

    @property
    def failed(self) -> list[ServerSummary]:
        """The servers whose probe failed (``needs_auth`` ones included)."""
        return [s for s in self.servers if s.status in ("failed", "needs_auth")]

    @property
    def unhealthy(self) -> list[ServerSummary]:
        """The probed servers that are not healthy (as ``mcpctl health`` fails on them)."""
        return [s for s in self.servers if s.status not in ("healthy", "not probed")]

    @property
    def headline(self) -> str:
        """``MCP servers: 5 (2 internal, 3 external), 2 healthy, 1 degraded, 2 failed (1 needs a
        sign-in)``."""
        total = len(self.servers)
        line = f"MCP servers: {total}"
        if total:
            line += f" ({self.count(type='internal')} internal, "
            line += f"{self.count(type='external')} external)"
        if not self.probed:
            return line + (", not probed" if total else "")
        line += f", {self.count(status='healthy')} healthy"
        degraded, signing = self.count(status="degraded"), self.count(status="needs_auth")
        line += f", {degraded} degraded" if degraded else ""
        line += f", {len(self.failed)} failed"
        line += f" ({signing} need{'s' if signing == 1 else ''} a sign-in)" if signing else ""
        unprobed = self.count(status="not probed")
        return line + (f", {unprobed} not probed" if unprobed else "")

    def to_data(self) -> dict[str, Any]:
        """The JSON view: every name in full (the renderers shorten lists)."""
        return {
            "timestamp": self.timestamp,
            "probed": self.probed,
            "summary": {
                "total": len(self.servers),
                "internal": self.count(type="internal"),
                "external": self.count(type="external"),
                "healthy": self.count(status="healthy") if self.probed else None,
                "degraded": self.count(status="degraded") if self.probed else None,
                "needs_auth": self.count(status="needs_auth") if self.probed else None,
                "failed": len(self.failed) if self.probed else None,
                "not_probed": self.count(status="not probed"),
            },
            "headline": self.headline,
            "servers": [s.to_data() for s in self.servers],
            "disabled": self.disabled,
            "since": self.since,
            "changes": self.changes.to_data(),
            "failed": [{"name": s.name, "type": s.type, "error": s.error} for s in self.failed],
            "problems": self.problems,
        }


def build_report(
    entries: Mapping[str, ServerEntry],
    snapshot: Snapshot,
    diff: SnapshotDiff | None = None,
    *,
    internal: Mapping[str, ServerEntry] | None = None,
    since: str | None = None,
    problems: Iterable[str] = (),
) -> Report:
    """The report of ``snapshot`` (servers by name) with the changes of ``diff``.

    ``entries`` (and ``internal``, the orchestrator's own servers) give the descriptions and
    the disabled servers; ``diff`` is :func:`~mcpctl.snapshot.diff.diff_snapshots` of the
    previous snapshot and this one (``None``: there was none, as on the first boot);
    ``since`` is the previous snapshot's timestamp; ``problems`` are lines about the config
    worth saying (the loader's warnings, say). Never raises.
    """
    described = {**(internal or {}), **entries}
    servers = [_summary(snapshot.mcps[name], described.get(name)) for name in sorted(snapshot.mcps)]
    disabled = sorted(n for n, e in described.items() if not e.enabled and n not in snapshot.mcps)
    return Report(
        snapshot.timestamp,
        servers,
        diff if diff is not None else SnapshotDiff(first=True),
        since,
        disabled,
        list(problems),
    )


def _summary(record: McpRecord, entry: ServerEntry | None) -> ServerSummary:
    description = entry.description if entry is not None else None
    state = record.probe
    if state is None:
        return ServerSummary(record.name, record.type, record.transport, description, "not probed")
    if state.error is not None:
        status = "needs_auth" if state.error == "auth_required" else "failed"
        return ServerSummary(
            record.name, record.type, record.transport, description, status, state.error
        )
    return ServerSummary(
        record.name,
        record.type,
        record.transport,
        description,
        "degraded" if state.warnings else "healthy",
        tools=tuple(sorted(state.tools)),
        prompt_count=len(state.prompts),
        resource_template_count=len(state.resource_templates),
        protocol=state.protocol,
        degraded=tuple(state.warnings),
        tokens=tools_tokens(state),
    )


# --- rendering ---------------------------------------------------------------------------


def render_text(report: Report, *, max_names: int = MAX_NAMES) -> str:
    """The report as plain text: short lines, no colour, no box drawing (a chat message)."""
    return "\n".join(_lines(report, _Plain(), max_names)) + "\n"


def render_markdown(report: Report, *, max_names: int = MAX_NAMES) -> str:
    """The report as Markdown: headers and bullets (Slack, GitHub)."""
    return "\n".join(_lines(report, _Markdown(), max_names)) + "\n"


def render_changes(
    diff: SnapshotDiff, *, markdown: bool = False, max_names: int = MAX_NAMES
) -> list[str]:
    """The lines of a diff as the report shows them (``+ time: added``, ``! github: tool
    create_branch changed (description)``), for a daemon that prints each change set; empty
    when nothing changed."""
    return _change_lines(diff, _Markdown() if markdown else _Plain(), max_names)


class _Plain:
    """How plain text writes each part of a line."""

    bullet = "- "
    sub = "  "
    change = ""  # a change line starts with its marker

    def code(self, text: str) -> str:
        return _one_line(text)

    def words(self, text: str) -> str:
        return _one_line(text)

    def name(self, text: str) -> str:
        return _one_line(text)

    def marker(self, mark: str) -> str:
        return mark

    def heading(self, text: str, *, top: bool = False) -> list[str]:
        return [text] if top else ["", text + ":"]

    def label(self, text: str) -> str:
        return text + ":"


class _Markdown(_Plain):
    """Markdown: names in code spans, servers in bold, headers for the sections."""

    sub = "  - "
    change = "- "

    def code(self, text: str) -> str:
        text = _one_line(text)
        longest = max((len(run) for run in re.findall("`+", text)), default=0)
        fence, pad = "`" * (longest + 1), " " if longest else ""  # CommonMark code spans
        return f"{fence}{pad}{text}{pad}{fence}"

    def words(self, text: str) -> str:
        out = _one_line(text)
        for char in "\\`*_[]<>#|~":
            out = out.replace(char, "\\" + char)
        return out

    def name(self, text: str) -> str:
        return f"**{self.words(text)}**"

    def marker(self, mark: str) -> str:
        return f"`{mark}`"

    def heading(self, text: str, *, top: bool = False) -> list[str]:
        return [f"## {text}", ""] if top else ["", f"### {text}", ""]

    def label(self, text: str) -> str:
        return f"**{text}:**"


def _one_line(text: str) -> str:
    return escape_controls(" ".join(text.split()), keep_newlines=False)


def _names(names: Sequence[str], fmt: _Plain, limit: int) -> str:
    shown = [fmt.code(n) for n in names[:limit]]
    if len(names) > limit:
        shown.append(f"+{len(names) - limit} more")
    return ", ".join(shown)


def _plural(count: int, kind: str = "tools") -> str:
    one, many = _KIND_WORDS[kind]
    return f"{count} {one if count == 1 else many}"


def _lines(report: Report, fmt: _Plain, limit: int) -> list[str]:
    lines = fmt.heading(report.headline, top=True)
    if report.timestamp:
        lines.append(f"Snapshot {fmt.code(report.timestamp)}")
    internal = [s.name for s in report.servers if s.type == "internal"]
    external = [s for s in report.servers if s.type != "internal"]
    if internal:
        lines += ["", f"{fmt.label('Internal')} {_names(internal, fmt, len(internal))}"]
    if external:
        lines += fmt.heading("External servers")
        for server in external:
            lines += _server_lines(server, fmt, limit)
    if report.disabled:
        lines += [
            "",
            f"{fmt.label('Disabled')} {_names(report.disabled, fmt, len(report.disabled))}",
        ]
    lines += _change_section(report, fmt, limit)
    degraded = [s for s in report.servers if s.status == "degraded"]
    if degraded:
        lines += fmt.heading("Degraded")
        for s in degraded:
            more = f" (+{len(s.degraded) - 1} more)" if len(s.degraded) > 1 else ""
            lines.append(f"{fmt.bullet}{fmt.name(s.name)}: {fmt.words(s.degraded[0])}{more}")
    if report.changes.redacted:
        lines += fmt.heading("Secrets redacted")
        lines += [f"{fmt.bullet}{_redacted_line(r, fmt)}" for r in report.changes.redacted]
    if report.failed:
        lines += fmt.heading("Failed")
        lines += [
            f"{fmt.bullet}{fmt.name(s.name)}: {fmt.code(s.error or '')}" for s in report.failed
        ]
    if report.problems:
        lines += fmt.heading("Config problems")
        lines += [f"{fmt.bullet}{fmt.words(p)}" for p in report.problems]
    return lines


def _redacted_line(item: RedactedSecret, fmt: _Plain) -> str:
    """``github: tool create_issue: definition contained a secret: redacted``."""
    what = ""
    if item.name is not None:
        what = f"{_KIND_WORDS.get(item.kind, (item.kind,))[0]} {fmt.code(item.name)}: "
    return f"{fmt.name(item.server)}: {what}{item.message}"


def _server_lines(server: ServerSummary, fmt: _Plain, limit: int) -> list[str]:
    head = f"{fmt.bullet}{fmt.name(server.name)}"
    cost = f", {server.tokens:,} tokens" if server.tokens is not None else ""
    if server.status == "healthy":
        head += f" ({_plural(len(server.tools))}{cost})"
    elif server.status == "degraded":
        head += f" ({_plural(len(server.tools))}{cost}, degraded)"
    elif server.status == "needs_auth":
        head += f" (needs a sign-in: {fmt.code('mcpctl auth ' + server.name)})"
    elif server.status == "failed":
        head += f" (failed: {fmt.code(server.error or '')})"
    if server.description:
        text = " ".join(server.description.split())
        if len(text) > MAX_DESCRIPTION:
            text = text[:MAX_DESCRIPTION].rsplit(" ", 1)[0].rstrip(" ,;:.") + "…"
        head += f": {fmt.words(text)}"
    lines = [head]
    if server.tools:
        lines.append(fmt.sub + _names(server.tools, fmt, limit))
    return lines


def _change_section(report: Report, fmt: _Plain, limit: int) -> list[str]:
    changes = report.changes
    if changes.first:
        return ["", "First snapshot: nothing to compare with."]
    since = f" since {fmt.code(report.since)}" if report.since else " since the last snapshot"
    if changes.empty:
        return ["", f"No changes{since}."]
    return fmt.heading(f"Changes{since}") + _change_lines(changes, fmt, limit)


def _change_lines(changes: SnapshotDiff, fmt: _Plain, limit: int) -> list[str]:
    items = [("+", name, "added") for name in changes.added]
    items += [("-", name, "removed") for name in changes.removed]
    for change in changes.changed:
        items += [(mark, change.name, text) for mark, text in _server_change(change, fmt, limit)]
    return [
        f"{fmt.change}{fmt.marker(mark)} {fmt.name(name)}: {text}" for mark, name, text in items
    ]


def _server_change(change: ServerChange, fmt: _Plain, limit: int) -> list[tuple[str, str]]:
    """``(marker, text)`` for each thing that differs: ``~`` changed, ``!`` a definition."""
    out: list[tuple[str, str]] = []
    if change.fields:
        out.append(("~", f"config changed ({', '.join(fmt.code(f) for f in change.fields)})"))
    if change.server_info is not None:
        old, new = (_server_info(info) for info in change.server_info)
        out.append(("~", f"server changed: {fmt.code(old)} -> {fmt.code(new)}"))
    if change.probe_failed is not None:
        out.append(("~", f"probe failed ({fmt.code(change.probe_failed)}), its tools are unknown"))
    for kind, names in change.added.items():
        out.append(("~", f"{_KIND_WORDS[kind][1]} added: {_names(names, fmt, limit)}"))
    for kind, names in change.removed.items():
        out.append(("~", f"{_KIND_WORDS[kind][1]} removed: {_names(names, fmt, limit)}"))
    for kind, pairs in change.renamed.items():
        shown = [f"{fmt.code(a)} -> {fmt.code(b)}" for a, b in pairs[:limit]]
        more = [f"+{len(pairs) - limit} more"] if len(pairs) > limit else []
        out.append(("~", f"{_KIND_WORDS[kind][1]} renamed: {', '.join(shown + more)}"))
    for definition in change.changed:
        fields = ", ".join(fmt.code(f) for f in definition.fields)
        word = _KIND_WORDS.get(definition.kind, (definition.kind,))[0]
        out.append(("!", f"{word} {fmt.code(definition.name)} changed ({fields})"))
    if change.instructions:
        out.append(("!", "instructions changed"))
    if change.tokens_line is not None:
        out.append(("~", change.tokens_line))
    return out


def _server_info(info: Any) -> str:
    if not isinstance(info, dict):
        return "unknown"
    return " ".join(str(info[k]) for k in ("name", "version") if info.get(k)) or "unknown"

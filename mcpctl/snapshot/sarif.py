"""SARIF 2.1.0 logs of what mcpctl found: config problems (``validate``) and snapshot
changes (``snapshot diff``), for code scanning (GitHub's ``upload-sarif``) and other viewers.

One run per log; ``tool.driver`` is mcpctl with one rule per problem code or change kind;
each result has a level, a message and, where known, the file and the line and column it is
about. The documents are plain JSON values: the caller prints them (redacted).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from mcpctl.config.loader import LoadResult
    from mcpctl.config.model import Problem
    from mcpctl.snapshot.diff import ServerChange, SnapshotDiff

__all__ = [
    "DIFF_RULES",
    "SCHEMA_URI",
    "Finding",
    "Rule",
    "artifact_uri",
    "config_positions",
    "diff_sarif",
    "diff_sarif_of",
    "sarif_log",
    "server_changes",
    "snapshot_positions",
    "validation_sarif",
]

SCHEMA_URI = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
Level = Literal["error", "warning", "note"]
Position = tuple[int, int]


@dataclass(frozen=True)
class Rule:
    """One kind of finding: its id, a name, one sentence, and its usual level."""

    id: str
    name: str
    text: str
    level: Level = "warning"


@dataclass
class Finding:
    """One result: which rule, how bad, what, and where (a file, perhaps a line)."""

    rule: str
    level: Level
    message: str
    uri: str | None = None
    position: Position | None = None
    properties: dict[str, Any] = field(default_factory=dict)


#: The kinds of change ``snapshot diff`` reports.
DIFF_RULES = {
    rule.id: rule
    for rule in (
        Rule("server-added", "ServerAdded", "A server was added to the configuration."),
        Rule("server-removed", "ServerRemoved", "A server was removed.", "note"),
        Rule("server-changed", "ServerConfigurationChanged", "A server's configuration changed."),
        Rule("definition-added", "DefinitionAdded",
             "A server offers a new tool, prompt or resource template."),
        Rule("definition-removed", "DefinitionRemoved",
             "A server no longer offers a tool, prompt or resource template.", "note"),
        Rule("definition-renamed", "DefinitionRenamed",
             "A tool, prompt or resource template is offered under another name."),
        Rule("definition-changed", "DefinitionChanged",
             "A tool, prompt or resource template changed in place: what it says or does is not "
             "what was approved (how tool poisoning shows).", "error"),
        Rule("instructions-changed", "InstructionsChanged",
             "A server's instructions to the model changed.", "error"),
        Rule("server-info-changed", "ServerInfoChanged",
             "A server reports another name or version.", "note"),
        Rule("probe-failed", "ProbeFailed",
             "A server could not be probed: what it offers now is unknown."),
    )
}  # fmt: skip

_NOUN = {"tools": "tool", "prompts": "prompt", "resource_templates": "resource template"}


def artifact_uri(path: Path, base: Path | None = None) -> str:
    """``path`` as a SARIF artifact URI: relative to ``base`` (default: the working
    directory) when it is inside it -- code scanning wants paths from the repository's
    root -- else an absolute ``file:`` URI."""
    from urllib.parse import quote

    absolute = path.absolute()
    try:
        rel = absolute.relative_to((base or Path.cwd()).absolute())
    except ValueError:
        return absolute.as_uri()
    return quote(rel.as_posix() or ".")


def sarif_log(
    findings: Iterable[Finding],
    rules: Mapping[str, Rule],
    *,
    notes: Sequence[str] = (),
    properties: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A SARIF log of one run of mcpctl: the rules used (a rule not in ``rules`` is made
    up from its id), the findings in order, ``notes`` as tool notifications."""
    from mcpctl._version import __version__

    results: list[dict[str, Any]] = []
    used: dict[str, int] = {}
    driver_rules: list[dict[str, Any]] = []
    for found in findings:
        if found.rule not in used:
            rule = rules.get(found.rule) or _made_up(found.rule, found.level)
            used[found.rule] = len(driver_rules)
            driver_rules.append(_rule_data(rule))
        results.append(_result_data(found, used[found.rule]))
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "mcpctl",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": driver_rules,
            }
        },
        "invocations": [_invocation(notes)],
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    if properties:
        run["properties"] = dict(properties)
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def _made_up(rule_id: str, level: Level) -> Rule:
    words = rule_id.replace("-", "_").split("_")
    return Rule(
        rule_id, "".join(w.capitalize() for w in words), " ".join(words).capitalize(), level
    )


def _rule_data(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": rule.text},
        "defaultConfiguration": {"level": rule.level},
    }


def _result_data(found: Finding, index: int) -> dict[str, Any]:
    out: dict[str, Any] = {
        "ruleId": found.rule,
        "ruleIndex": index,
        "level": found.level,
        "message": {"text": found.message},
    }
    if found.uri is not None:
        physical: dict[str, Any] = {"artifactLocation": {"uri": found.uri}}
        if found.position is not None:
            line, column = found.position
            physical["region"] = {"startLine": max(1, line), "startColumn": max(1, column)}
        out["locations"] = [{"physicalLocation": physical}]
    if found.properties:
        out["properties"] = found.properties
    return out


def _invocation(notes: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"executionSuccessful": True}
    if notes:
        out["toolExecutionNotifications"] = [
            {"level": "note", "message": {"text": note}} for note in notes
        ]
    return out


# --- validate --------------------------------------------------------------------------------


def validation_sarif(problems: Iterable[Problem], uri: str, *, omitted: int = 0) -> dict[str, Any]:
    """The SARIF log of ``validate``'s problems in the file at ``uri``: one rule per
    problem code, the line and column of each problem where known."""
    findings = []
    for p in problems:
        text = f"{p.path}: {p.message}" if p.path and p.path != "$" else p.message
        if p.hint:
            text += f" (hint: {p.hint})"
        position = (p.line, p.column or 1) if p.line is not None else None
        level: Level = "error" if p.severity == "error" else "warning"
        findings.append(Finding(p.code, level, text, uri, position, {"path": p.path}))
    more = f"... and {omitted} more problem{'s' if omitted != 1 else ''}" if omitted else ""
    return sarif_log(findings, {}, notes=[more] if more else [])


# --- snapshot diff ---------------------------------------------------------------------------


@dataclass
class _Where:
    """Where the servers of a diff are written: the config and the earlier snapshot."""

    config_uri: str | None
    config: Mapping[str, Position]
    against_uri: str | None
    against: Mapping[str, Position]

    def now(self, name: str) -> tuple[str | None, Position | None]:
        """The server as configured now (else as recorded)."""
        if self.config_uri is not None and (name in self.config or self.against_uri is None):
            return self.config_uri, self.config.get(name)
        return self.before(name)

    def before(self, name: str) -> tuple[str | None, Position | None]:
        """The server as recorded in the earlier snapshot (else as configured)."""
        if self.against_uri is not None:
            return self.against_uri, self.against.get(name)
        return self.config_uri, self.config.get(name)


def diff_sarif(
    diff: SnapshotDiff,
    *,
    config_uri: str | None = None,
    config_positions: Mapping[str, Position] | None = None,
    against_uri: str | None = None,
    against_positions: Mapping[str, Position] | None = None,
    notes: Sequence[str] = (),
) -> dict[str, Any]:
    """The SARIF log of a snapshot diff: one result per server added, removed or
    reconfigured and per definition added, removed, renamed or changed. A result points at
    the server's entry in the config (``config_positions``: name -> line, column), or, for a
    removed server, at its record in the earlier snapshot."""
    where = _Where(config_uri, config_positions or {}, against_uri, against_positions or {})
    findings: list[Finding] = []

    def add(name: str, at: tuple[str | None, Position | None], found: list[_Change]) -> None:
        for rule_id, message, props in found:
            level = DIFF_RULES[rule_id].level
            findings.append(Finding(rule_id, level, message, *at, {"server": name, **props}))

    for name in diff.added:
        add(name, where.now(name), [("server-added", f"server {name} was added", {})])
    for name in diff.removed:
        add(name, where.before(name), [("server-removed", f"server {name} was removed", {})])
    for change in diff.changed:
        add(change.name, where.now(change.name), server_changes(change))
    return sarif_log(findings, DIFF_RULES, notes=notes)


def diff_sarif_of(
    diff: SnapshotDiff, loaded: LoadResult, against: Path, *, read: bool, notes: Sequence[str]
) -> dict[str, Any]:
    """:func:`diff_sarif` with positions in the config ``loaded`` and in the earlier snapshot
    ``against`` (``read``: there is one; read it before a save replaces it)."""
    config_uri = artifact_uri(loaded.path) if loaded.exists else None
    raw = loaded.document.raw if loaded.document is not None else b""
    against_text = ""
    if read:
        from mcpctl.config.safefile import read_file
        from mcpctl.errors import McpctlError

        try:
            against_text = (read_file(against) or b"").decode("utf-8-sig")
        except (McpctlError, UnicodeDecodeError):
            against_text = ""  # read a moment ago: without positions then
    return diff_sarif(
        diff,
        config_uri=config_uri,
        config_positions=config_positions(raw.decode("utf-8-sig", "replace")) if raw else {},
        against_uri=artifact_uri(against) if read else None,
        against_positions=snapshot_positions(against_text) if against_text else {},
        notes=notes,
    )


_Change = tuple[str, str, dict[str, Any]]


def server_changes(change: ServerChange) -> list[_Change]:
    """Each change of one server as (rule id, message, properties), most severe last."""
    name = change.name
    out: list[_Change] = []
    if change.fields:
        message = f"server {name}: configuration changed ({', '.join(change.fields)})"
        out.append(("server-changed", message, {"fields": change.fields}))
    if change.probe_failed is not None:
        message = f"server {name}: probe failed ({change.probe_failed}); what it offers is unknown"
        out.append(("probe-failed", message, {"code": change.probe_failed}))
    if change.server_info is not None:
        old, new = change.server_info
        message = f"server {name}: serverInfo changed ({_info(old)} -> {_info(new)})"
        out.append(("server-info-changed", message, {}))
    for kind, names in change.added.items():
        for item in names:
            props = {"kind": kind, "definition": item}
            out.append(("definition-added", f"server {name}: new {_NOUN[kind]} {item}", props))
    for kind, names in change.removed.items():
        for item in names:
            props = {"kind": kind, "definition": item}
            message = f"server {name}: {_NOUN[kind]} {item} was removed"
            out.append(("definition-removed", message, props))
    for kind, pairs in change.renamed.items():
        for old_name, new_name in pairs:
            props = {"kind": kind, "old": old_name, "new": new_name}
            message = f"server {name}: {_NOUN[kind]} renamed {old_name} -> {new_name}"
            out.append(("definition-renamed", message, props))
    if change.instructions:
        out.append(("instructions-changed", f"server {name}: its instructions changed", {}))
    for changed in change.changed:
        fields = list(changed.fields)
        about = {"kind": changed.kind, "definition": changed.name, "fields": fields}
        message = (
            f"server {name}: {_NOUN[changed.kind]} {changed.name} changed ({', '.join(fields)})"
        )
        out.append(("definition-changed", message, about))
    return out


def _info(info: Any) -> str:
    if not isinstance(info, dict):
        return "unknown"
    return f"{info.get('name', '?')} {info.get('version', '?')}".strip()


def snapshot_positions(text: str) -> dict[str, Position]:
    """Where each server's record starts in a snapshot file's text (name -> line, column);
    empty when the text is not a snapshot."""
    from mcpctl.config.jsonindex import index_document
    from mcpctl.config.jsontext import JsonPosError

    try:
        doc = index_document(text)
    except JsonPosError:  # not JSON: nothing to point at
        return {}
    items = doc.value.get("mcps") if isinstance(doc.value, dict) else None
    out: dict[str, Position] = {}
    for i, item in enumerate(items if isinstance(items, list) else []):
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            pos = doc.position(("mcps", i))
            if pos is not None:
                out[item["name"]] = pos
    return out


def config_positions(text: str) -> dict[str, Position]:
    """Where each entry's name is written in a config file's text (name -> line, column)."""
    from mcpctl.config.jsonindex import index_document
    from mcpctl.config.jsontext import JsonPosError

    try:
        doc = index_document(text)
    except JsonPosError:  # not JSON: nothing to point at
        return {}
    out: dict[str, Position] = {}
    for name in doc.value if isinstance(doc.value, dict) else {}:
        pos = doc.member_position(name)
        if pos is not None:
            out[name] = pos
    return out

"""What changed between two snapshots: servers added, removed, reconfigured, and -- when both
were probed -- tools, prompts and resource templates added, removed, renamed or changed.

A changed definition is the signal to look at: a server that silently changes what a tool
says or does is how tool poisoning ("rug pulls") shows up. The diff is pure: no files, no
servers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcpctl.snapshot.model import KINDS, Definition, McpRecord, ServerState, Snapshot

__all__ = [
    "REDACTION_NOTE",
    "DefinitionChange",
    "RedactedSecret",
    "ServerChange",
    "SnapshotDiff",
    "diff_server_states",
    "diff_snapshots",
    "secrets_redacted",
]

#: How a definition that held a secret mcpctl resolved is flagged.
REDACTION_NOTE = "definition contained a secret: redacted"


@dataclass(frozen=True)
class RedactedSecret:
    """Something a server sent that held a secret mcpctl resolved for it (it echoed one):
    recorded with ``****`` in its place.

    ``kind`` is one of the snapshot's kinds (``tools``...) with the definition's ``name``, or
    ``serverInfo`` or ``instructions`` (no name).
    """

    server: str
    kind: str
    name: str | None = None

    @property
    def message(self) -> str:
        """``definition contained a secret: redacted`` (``instructions contained...``)."""
        if self.name is not None:
            return REDACTION_NOTE
        return f"{self.kind} contained a secret: redacted"

    def to_data(self) -> dict[str, Any]:
        """The JSON view."""
        return {"server": self.server, "kind": self.kind, "name": self.name,
                "message": self.message}  # fmt: skip


def secrets_redacted(snapshot: Snapshot) -> list[RedactedSecret]:
    """What the servers of ``snapshot`` sent that held a secret, by server name."""
    return [
        RedactedSecret(name, kind, item)
        for name in sorted(snapshot.mcps)
        if (state := snapshot.mcps[name].probe) is not None
        for kind, item in state.secrets_redacted()
    ]


@dataclass
class DefinitionChange:
    """A tool (prompt, resource template) whose definition changed: each top-level field
    that differs, old and new value."""

    kind: str
    name: str
    fields: dict[str, tuple[Any, Any]]

    def to_data(self) -> dict[str, Any]:
        """The JSON view."""
        return {
            "kind": self.kind,
            "name": self.name,
            "fields": {k: {"old": old, "new": new} for k, (old, new) in self.fields.items()},
        }


@dataclass
class ServerChange:
    """How one server differs: its configuration's fields, and what it offers."""

    name: str
    fields: list[str] = field(default_factory=list)
    server_info: tuple[Any, Any] | None = None
    instructions: bool = False
    added: dict[str, list[str]] = field(default_factory=dict)
    removed: dict[str, list[str]] = field(default_factory=dict)
    renamed: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    changed: list[DefinitionChange] = field(default_factory=list)
    probe_failed: str | None = None  # the new probe failed: what it offers is unknown
    tokens: tuple[int, int] | None = None  # its tools' tokens before and after, when they differ

    @property
    def definitions_changed(self) -> bool:
        """Whether a definition the server offered before now says or does something else."""
        return bool(self.changed or self.instructions)

    @property
    def empty(self) -> bool:
        """Whether nothing differs."""
        return not (
            self.fields or self.server_info or self.instructions or self.added
            or self.removed or self.renamed or self.changed or self.probe_failed
        )  # fmt: skip

    def to_data(self) -> dict[str, Any]:
        """The JSON view."""
        out: dict[str, Any] = {"name": self.name, "fields": self.fields}
        if self.server_info is not None:
            out["serverInfo"] = {"old": self.server_info[0], "new": self.server_info[1]}
        out["instructions_changed"] = self.instructions
        out["added"] = self.added
        out["removed"] = self.removed
        out["renamed"] = {k: [{"old": a, "new": b} for a, b in v] for k, v in self.renamed.items()}
        out["changed"] = [c.to_data() for c in self.changed]
        out["definitions_changed"] = self.definitions_changed
        if self.probe_failed is not None:
            out["probe_failed"] = self.probe_failed
        if self.tokens is not None:
            from mcpctl.tokencount import ENCODING

            old, new = self.tokens
            out["tokens"] = {"encoding": ENCODING, "old": old, "new": new, "change": new - old}
        return out

    @property
    def tokens_line(self) -> str | None:
        """``tokens 1,234 → 1,410 (+176)``, when its tools' tokens changed."""
        if self.tokens is None:
            return None
        old, new = self.tokens
        return f"tokens {old:,} → {new:,} ({new - old:+,})"


@dataclass
class SnapshotDiff:
    """Servers added, removed and changed; ``first`` when there was no earlier snapshot.

    ``redacted``: what the servers of the new snapshot sent that held a secret (flagged
    whether or not it changed; not a change itself).
    """

    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[ServerChange] = field(default_factory=list)
    first: bool = False
    redacted: list[RedactedSecret] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        """Whether nothing changed."""
        return not (self.added or self.removed or self.changed)

    @property
    def definitions_changed(self) -> list[ServerChange]:
        """The servers whose tools (prompts, templates, instructions) changed in place."""
        return [c for c in self.changed if c.definitions_changed]

    def to_data(self) -> dict[str, Any]:
        """The JSON view."""
        return {
            "first": self.first,
            "empty": self.empty,
            "added": self.added,
            "removed": self.removed,
            "changed": [c.to_data() for c in self.changed],
            "definitions_changed": [c.name for c in self.definitions_changed],
            "secrets_redacted": [r.to_data() for r in self.redacted],
        }


def diff_snapshots(old: Snapshot | None, new: Snapshot) -> SnapshotDiff:
    """What changed from ``old`` to ``new``. With no ``old`` (the first boot) the diff is
    empty, never "everything added"."""
    if old is None:
        return SnapshotDiff(first=True, redacted=secrets_redacted(new))
    out = SnapshotDiff(
        added=sorted(set(new.mcps) - set(old.mcps)),
        removed=sorted(set(old.mcps) - set(new.mcps)),
        redacted=secrets_redacted(new),
    )
    for name in sorted(set(old.mcps) & set(new.mcps)):
        change = _server(old.mcps[name], new.mcps[name])
        if not change.empty:
            out.changed.append(change)
    return out


def _server(old: McpRecord, new: McpRecord) -> ServerChange:
    change = ServerChange(old.name)
    if old.type != new.type:
        change.fields.append("type")
    # A plain snapshot (names and types only) tells nothing of the configuration.
    known = old.fingerprint is not None and new.fingerprint is not None
    if known and old.fingerprint != new.fingerprint:
        keys = sorted(set(old.fields) | set(new.fields))
        fields = [k for k in keys if old.fields.get(k) != new.fields.get(k)]
        change.fields += fields or ["configuration"]
    if old.probe is not None and new.probe is not None:
        _offered(change, old.probe, new.probe)
    return change


def diff_server_states(name: str, old: ServerState, new: ServerState) -> ServerChange:
    """What one server offers that changed between two probes of it (tools, prompts and
    resource templates added, removed, renamed or changed in place; instructions)."""
    change = ServerChange(name)
    _offered(change, old, new)
    return change


def _offered(change: ServerChange, old: ServerState, new: ServerState) -> None:
    if new.error is not None:
        if old.error is None:
            change.probe_failed = new.error
        return
    if old.error is not None:
        return  # nothing was known before: no basis for a diff of what it offers
    # A stateless server need not say who it is: silence is not a change of identity.
    if None not in (old.server_info, new.server_info) and old.server_info != new.server_info:
        change.server_info = (old.server_info, new.server_info)
    change.instructions = old.instructions_sha256 != new.instructions_sha256
    for kind in KINDS:
        before, after = old.of_kind(kind), new.of_kind(kind)
        gone = sorted(set(before) - set(after))
        came = sorted(set(after) - set(before))
        for old_name, new_name in _renames(before, after, gone, came):
            change.renamed.setdefault(kind, []).append((old_name, new_name))
            gone.remove(old_name)
            came.remove(new_name)
        if gone:
            change.removed[kind] = gone
        if came:
            change.added[kind] = came
        for name in sorted(set(before) & set(after)):
            if before[name].fingerprint != after[name].fingerprint:
                fields = _fields(before[name], after[name])
                change.changed.append(DefinitionChange(kind, name, fields))
    tools_changed = any(
        "tools" in part for part in (change.added, change.removed, change.renamed)
    ) or any(c.kind == "tools" for c in change.changed)
    if tools_changed:
        from mcpctl.snapshot.model import tools_tokens

        before_tokens, after_tokens = tools_tokens(old), tools_tokens(new)
        if None not in (before_tokens, after_tokens) and before_tokens != after_tokens:
            assert before_tokens is not None and after_tokens is not None
            change.tokens = (before_tokens, after_tokens)


def _renames(
    before: dict[str, Definition], after: dict[str, Definition], gone: list[str], came: list[str]
) -> list[tuple[str, str]]:
    """Removed and added definitions that are the same but for their name."""
    from mcpctl.snapshot.fingerprints import fingerprint

    def unnamed(d: Definition) -> str:
        return fingerprint({k: v for k, v in d.data.items() if k != "name"})

    by_body = {unnamed(after[n]): n for n in came}
    pairs = []
    for name in gone:
        twin = by_body.pop(unnamed(before[name]), None)
        if twin is not None:
            pairs.append((name, twin))
    return pairs


def _fields(old: Definition, new: Definition) -> dict[str, tuple[Any, Any]]:
    keys = list(dict.fromkeys([*old.data, *new.data]))
    fields = {k: (old.data.get(k), new.data.get(k)) for k in keys}
    changed = {k: pair for k, pair in fields.items() if pair[0] != pair[1]}
    # A fingerprint from elsewhere (no stored definition): still a change, fields unknown.
    return changed or {"definition": (old.fingerprint, new.fingerprint)}

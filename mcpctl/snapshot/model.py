"""The snapshot: what was configured (and, probed, what each server offered) at one moment.

On disk it is the format the Annabelle orchestrator writes to ``last-known-mcps.json`` --
``{"timestamp", "mcps": [{"name", "type"}]}`` -- extended per server; files of that plain
format are read as snapshots without fingerprints. Written files are stable: servers and
definitions sorted by name, keys in a fixed order, so a committed lock file diffs well.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from mcpctl.config.model import ServerEntry
from mcpctl.errors import UsageError

__all__ = [
    "KINDS",
    "Definition",
    "McpRecord",
    "ServerState",
    "Snapshot",
    "snapshot_of_config",
]

#: What a probe lists, as the snapshot names them.
KINDS = ("tools", "prompts", "resource_templates")
FORMAT = 1


@dataclass(frozen=True)
class Definition:
    """A tool, prompt or resource template as the server sent it, and its fingerprint.

    ``redacted``: what the server sent held a secret mcpctl resolved (it echoed one); ``data``
    has ``****`` in its place, and the fingerprint is of ``data``.
    """

    name: str
    fingerprint: str
    data: Mapping[str, Any]
    redacted: bool = False

    @classmethod
    def of(cls, data: Mapping[str, Any], name: str | None = None) -> Definition:
        """The definition of a wire object (its ``name``, or ``uriTemplate``, names it)."""
        from mcpctl.snapshot.fingerprints import fingerprint_tool

        key = name or str(data.get("name") or data.get("uriTemplate") or "")
        return cls(key, fingerprint_tool(data), dict(data))


@dataclass
class ServerState:
    """What a probe of one server saw: who it is, its instructions' hash, what it offers.

    ``protocol`` is the era and version spoken (``{"era": "modern", "version":
    "2026-07-28"}``): recorded for people, never part of a fingerprint or of a diff.
    ``redacted`` names the other parts (``serverInfo``, ``instructions``) that held a secret
    mcpctl resolved, recorded (or hashed) with ``****`` in its place.
    """

    server_info: dict[str, Any] | None = None
    instructions_sha256: str | None = None
    tools: dict[str, Definition] = field(default_factory=dict)
    prompts: dict[str, Definition] = field(default_factory=dict)
    resource_templates: dict[str, Definition] = field(default_factory=dict)
    error: str | None = None  # the probe's failure code: nothing is known of its tools
    protocol: dict[str, str] | None = None
    redacted: list[str] = field(default_factory=list)

    def of_kind(self, kind: str) -> dict[str, Definition]:
        """The definitions of one of :data:`KINDS`."""
        found: dict[str, Definition] = getattr(self, kind)
        return found

    def secrets_redacted(self) -> list[tuple[str, str | None]]:
        """What held a secret, in a fixed order: ``("serverInfo", None)``, ``("instructions",
        None)``, then ``(kind, name)`` of each definition."""
        out: list[tuple[str, str | None]] = [
            (part, None) for part in ("serverInfo", "instructions") if part in self.redacted
        ]
        for kind in KINDS:
            found = self.of_kind(kind)
            out += [(kind, name) for name in sorted(found) if found[name].redacted]
        return out


@dataclass
class McpRecord:
    """One server in a snapshot."""

    name: str
    type: str = "external"
    transport: str | None = None
    fingerprint: str | None = None
    fields: dict[str, str] = field(default_factory=dict)  # field -> fingerprint of its value
    probe: ServerState | None = None


@dataclass
class Snapshot:
    """The servers at one moment (``timestamp``: ISO 8601, UTC)."""

    timestamp: str
    mcps: dict[str, McpRecord] = field(default_factory=dict)

    @property
    def probed(self) -> bool:
        """Whether any server in it was probed."""
        return any(record.probe is not None for record in self.mcps.values())

    def to_data(self) -> dict[str, Any]:
        """The JSON object written to disk: sorted, stable, no secret (the configuration's
        values are hashes; what servers sent has every secret mcpctl resolved redacted)."""
        return {
            "timestamp": self.timestamp,
            "format": FORMAT,
            "mcps": [_record_data(self.mcps[name]) for name in sorted(self.mcps)],
        }

    @classmethod
    def from_data(cls, data: Any) -> Snapshot:
        """A snapshot from its JSON object (this format or Annabelle's plain one).

        Raises:
            UsageError: not a snapshot (with what is wrong).
        """
        if not isinstance(data, dict) or not isinstance(data.get("mcps"), list):
            raise UsageError('not a snapshot: expected {"timestamp": ..., "mcps": [...]}')
        snap = cls(str(data.get("timestamp") or ""))
        for item in data["mcps"]:
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                raise UsageError("not a snapshot: each of mcps needs a name")
            record = McpRecord(
                item["name"],
                str(item.get("type") or "external"),
                _str(item.get("transport")),
                _str(item.get("fingerprint")),
                {str(k): str(v) for k, v in (item.get("fields") or {}).items()},
                _state(item["probe"]) if isinstance(item.get("probe"), dict) else None,
            )
            snap.mcps[record.name] = record
        return snap


def now() -> str:
    """The current time as a snapshot writes it."""
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def snapshot_of_config(
    entries: Mapping[str, ServerEntry],
    *,
    internal: Mapping[str, ServerEntry] | None = None,
    timestamp: str | None = None,
) -> Snapshot:
    """The snapshot of the enabled servers of a config (``internal``: the orchestrator's own,
    recorded with ``type: internal``), without probing."""
    from mcpctl.snapshot.fingerprints import entry_fields, fingerprint

    snap = Snapshot(timestamp or now())
    for kind, group in (("internal", internal or {}), ("external", entries)):
        for name, entry in group.items():
            if not entry.enabled:
                continue
            data = entry_fields(entry)
            snap.mcps[name] = McpRecord(
                name,
                kind,
                entry.effective_transport,
                fingerprint(data),
                {key: fingerprint(value)[:23] for key, value in data.items()},
            )
    return snap


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _record_data(record: McpRecord) -> dict[str, Any]:
    out: dict[str, Any] = {"name": record.name, "type": record.type}
    if record.transport is not None:
        out["transport"] = record.transport
    if record.fingerprint is not None:
        out["fingerprint"] = record.fingerprint
    if record.fields:
        out["fields"] = dict(sorted(record.fields.items()))
    if record.probe is not None:
        out["probe"] = _state_data(record.probe)
    return out


def _state_data(state: ServerState) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if state.error is not None:
        out["error"] = state.error
    if state.server_info is not None:
        out["serverInfo"] = state.server_info
    if state.instructions_sha256 is not None:
        out["instructions"] = state.instructions_sha256
    if state.protocol is not None:
        out["protocol"] = dict(state.protocol)
    if state.redacted:
        out["redacted"] = sorted(state.redacted)
    for kind in KINDS:
        found = state.of_kind(kind)
        if found or state.error is None:
            out[kind] = [_definition_data(found[n]) for n in sorted(found)]
    return out


def _definition_data(definition: Definition) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": definition.name,
        "fingerprint": definition.fingerprint,
        "definition": dict(definition.data),
    }
    if definition.redacted:
        out["redacted"] = True
    return out


def _state(data: dict[str, Any]) -> ServerState:
    state = ServerState(
        data["serverInfo"] if isinstance(data.get("serverInfo"), dict) else None,
        _str(data.get("instructions")),
        error=_str(data.get("error")),
    )
    protocol = data.get("protocol")
    if isinstance(protocol, dict):
        state.protocol = {k: v for k, v in protocol.items() if k in ("era", "version")
                          and isinstance(v, str)}  # fmt: skip
    redacted = data.get("redacted")
    if isinstance(redacted, list):
        state.redacted = [p for p in redacted if p in ("serverInfo", "instructions")]
    for kind in KINDS:
        for item in data.get(kind) or []:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                definition = item.get("definition")
                state.of_kind(kind)[item["name"]] = Definition(
                    item["name"],
                    str(item.get("fingerprint") or ""),
                    definition if isinstance(definition, dict) else {},
                    item.get("redacted") is True,
                )
    return state

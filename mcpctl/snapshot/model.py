"""The snapshot: what was configured (and, probed, what each server offered) at one moment.

On disk it is the format of the orchestrator convention's ``last-known-mcps.json``
(docs/config.md, "The orchestrator convention") -- ``{"timestamp", "mcps": [{"name",
"type"}]}`` -- extended per server; files of that plain format are read as snapshots without
fingerprints. Written files are stable: servers and definitions sorted by name, keys in a
fixed order, so a committed lock file diffs well.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from mcpctl.config.model import ServerEntry
from mcpctl.errors import UsageError

if TYPE_CHECKING:
    from mcpctl.snapshot.packages import PackagePin

__all__ = [
    "KINDS",
    "Definition",
    "McpRecord",
    "ServerState",
    "Snapshot",
    "snapshot_of_config",
    "tools_tokens",
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
    ``warnings`` (what mcpctl had to repair or could not list: the server is degraded) are
    known only to the snapshot just taken: they are not written to the file.
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
    warnings: list[str] = field(default_factory=list)
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


def tools_tokens(state: ServerState) -> int | None:
    """What the tools of ``state`` cost the model, in tokens (see :mod:`mcpctl.tokencount`),
    from their stored definitions; ``None`` when the probe failed or a definition was not
    stored (a snapshot that kept only fingerprints)."""
    if state.error is not None or any(not d.data for d in state.tools.values()):
        return None
    from mcpctl.tokencount import catalog_tokens

    return catalog_tokens(d.data for d in state.tools.values())


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
    """The servers at one moment (``timestamp``: ISO 8601, UTC); ``packages``: the artifact
    each stdio server runs, when recorded (:mod:`mcpctl.snapshot.packages`)."""

    timestamp: str
    mcps: dict[str, McpRecord] = field(default_factory=dict)
    packages: dict[str, PackagePin] | None = None

    @property
    def probed(self) -> bool:
        """Whether any server in it was probed."""
        return any(record.probe is not None for record in self.mcps.values())

    def to_data(self) -> dict[str, Any]:
        """The JSON object written to disk: sorted, stable, no secret (the configuration's
        values are hashes; what servers sent has every secret mcpctl resolved redacted)."""
        out: dict[str, Any] = {
            "timestamp": self.timestamp,
            "format": FORMAT,
            "mcps": [_record_data(self.mcps[name]) for name in sorted(self.mcps)],
        }
        if self.packages is not None:
            from mcpctl.snapshot.packages import pins_to_data

            out["packages"] = pins_to_data(self.packages)
        return out

    @classmethod
    def from_data(cls, data: Any) -> Snapshot:
        """A snapshot from its JSON object (this format or the orchestrator's plain one).

        Every value is checked for its type (a lock file may come from anywhere): the error
        names where the bad value is (``mcps[0].probe.tools[1].definition``) and the server.

        Raises:
            UsageError: not a snapshot (with what is wrong, and where).
        """
        if not isinstance(data, dict) or not isinstance(data.get("mcps"), list):
            raise UsageError('not a snapshot: expected {"timestamp": ..., "mcps": [...]}')
        check = _Check()
        snap = cls(check.text(data, "timestamp", ()) or "")
        check.number(data, "format", ())
        for i, item in enumerate(data["mcps"]):
            at: _Path = ("mcps", i)
            if not isinstance(item, dict):
                raise check.fail(at, "expected an object", item)
            name = item.get("name")
            if not isinstance(name, str) or not name:
                raise check.fail((*at, "name"), "each server needs a name (a string)", name)
            check.server = name
            if name in snap.mcps:
                raise check.fail(at, "a second record of this server")
            fields = check.mapping(item, "fields", at) or {}
            for key, value in fields.items():
                if not isinstance(value, str):
                    raise check.fail((*at, "fields", key), "expected a string", value)
            probe = check.mapping(item, "probe", at)
            record = McpRecord(
                name,
                check.text(item, "type", at) or "external",
                check.text(item, "transport", at),
                check.text(item, "fingerprint", at),
                dict(fields),
                _state(probe, (*at, "probe"), check) if probe is not None else None,
            )
            snap.mcps[name] = record
            check.server = None
        if data.get("packages") is not None:
            from mcpctl.snapshot.packages import pins_from_data

            try:
                snap.packages = pins_from_data(data["packages"])
            except ValueError as exc:
                from mcpctl.text import escape_controls

                raise UsageError(
                    f"not a valid snapshot: {escape_controls(str(exc), keep_newlines=False)}"
                ) from None
        return snap


_Path = tuple[str | int, ...]


def _json_type(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return "null" if value is None else str(value).lower()
    return {int: "a number", float: "a number", str: "a string", list: "an array",
            dict: "an object"}.get(type(value), type(value).__name__)  # fmt: skip


class _Check:
    """Type checks of a snapshot's values, failing with the path of the bad one."""

    _MISSING = object()

    def __init__(self) -> None:
        self.server: str | None = None

    def fail(self, path: _Path, problem: str, value: Any = _MISSING) -> UsageError:
        from mcpctl.config.model import format_path
        from mcpctl.text import escape_controls

        got = "" if value is self._MISSING else f", got {_json_type(value)}"
        server = (
            f" (server {escape_controls(self.server, keep_newlines=False)!r})"
            if self.server is not None
            else ""
        )
        where = escape_controls(format_path(path), keep_newlines=False)
        return UsageError(f"not a valid snapshot: {where}{server}: {problem}{got}")

    def text(self, obj: dict[str, Any], key: str, at: _Path) -> str | None:
        """``obj[key]``: a string, or ``None`` when absent or null."""
        value = obj.get(key)
        if value is not None and not isinstance(value, str):
            raise self.fail((*at, key), "expected a string", value)
        return value

    def number(self, obj: dict[str, Any], key: str, at: _Path) -> None:
        value = obj.get(key)
        if value is not None and (type(value) is not int):
            raise self.fail((*at, key), "expected an integer", value)

    def mapping(self, obj: dict[str, Any], key: str, at: _Path) -> dict[str, Any] | None:
        """``obj[key]``: an object, or ``None`` when absent or null."""
        value = obj.get(key)
        if value is not None and not isinstance(value, dict):
            raise self.fail((*at, key), "expected an object", value)
        return value

    def array(self, obj: dict[str, Any], key: str, at: _Path) -> list[Any]:
        """``obj[key]``: an array (empty when absent or null)."""
        value = obj.get(key)
        if value is not None and not isinstance(value, list):
            raise self.fail((*at, key), "expected an array", value)
        return value or []


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
    recorded with ``type: internal``), without probing.

    Raises:
        UsageError: a string of an enabled entry holds a lone surrogate (no file can).
    """
    from mcpctl.config.controlchars import refuse_lone_surrogates
    from mcpctl.snapshot.fingerprints import entry_fields, fingerprint

    for group in (internal or {}, entries):
        refuse_lone_surrogates({n: e for n, e in group.items() if e.enabled}, "a snapshot")
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


def _state(data: dict[str, Any], at: _Path, check: _Check) -> ServerState:
    state = ServerState(
        check.mapping(data, "serverInfo", at),
        check.text(data, "instructions", at),
        error=check.text(data, "error", at),
    )
    protocol = check.mapping(data, "protocol", at)
    if protocol is not None:
        state.protocol = {}
        for key in ("era", "version"):
            value = check.text(protocol, key, (*at, "protocol"))
            if value is not None:
                state.protocol[key] = value
    redacted = data.get("redacted")
    if isinstance(redacted, list):
        state.redacted = [p for p in redacted if p in ("serverInfo", "instructions")]
    for kind in KINDS:
        found = state.of_kind(kind)
        for i, item in enumerate(check.array(data, kind, at)):
            where: _Path = (*at, kind, i)
            if not isinstance(item, dict):
                raise check.fail(where, "expected an object", item)
            name = item.get("name")
            if not isinstance(name, str):
                raise check.fail((*where, "name"), "expected a string", name)
            if name in found:
                raise check.fail(where, "a second definition of the same name")
            definition = check.mapping(item, "definition", where)
            found[name] = Definition(
                name,
                check.text(item, "fingerprint", where) or "",
                definition or {},
                item.get("redacted") is True,
            )
    return state

"""Taking a snapshot now: the enabled servers' configuration and, probed, what each offers.

    from mcpctl.snapshot.probing import take_snapshot, take_snapshot_async

Without probing this reads nothing but the entries given and imports nothing heavy; probing
connects to every server at once through :func:`mcpctl.probe.catalog.catalog_all`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from mcpctl.config.model import ProtocolMode, ServerEntry
from mcpctl.snapshot.model import Definition, ServerState, Snapshot, snapshot_of_config

if TYPE_CHECKING:
    from mcpctl.config.placeholders import SecretSource
    from mcpctl.config.redaction import Redactor
    from mcpctl.probe.catalog import Catalog
    from mcpctl.probe.eras import EraMemory
    from mcpctl.probe.health import ServerKind

__all__ = [
    "add_probes",
    "catalog_warnings",
    "instructions_sha256",
    "pinned_tools",
    "snapshot_targets",
    "state_of",
    "take_snapshot",
    "take_snapshot_async",
]


def instructions_sha256(text: str | None) -> str | None:
    """``sha256:`` and the hex SHA-256 of a server's instructions (UTF-8), or ``None``."""
    if text is None:
        return None
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def state_of(found: Catalog, redact: Redactor | None = None) -> ServerState:
    """A catalog as the snapshot records it: definitions whole, with their fingerprints.

    Every secret mcpctl resolved (``redact``, default: all known to this process, in each of
    their forms) is replaced by ``****`` in what the server sent before anything is recorded
    or fingerprinted: a server that echoes one writes no secret into a snapshot or a lock
    file, and its fingerprints do not change with the secret's value. What held one is
    flagged (:attr:`Definition.redacted`, :attr:`ServerState.redacted`).
    """
    if found.error is not None:
        return ServerState(error=found.error)
    if redact is None:
        from mcpctl.config.redaction import redactor

        redact = redactor(patterns=False)  # a server's example of a key is no secret
    redacted: list[str] = []
    server_info = found.server_info
    if server_info is not None:
        server_info, hit = redact.data(server_info)
        if hit:
            redacted.append("serverInfo")
    instructions = found.instructions
    if instructions is not None:
        cleaned = redact.known(instructions)
        if cleaned != instructions:
            redacted.append("instructions")
        instructions = cleaned
    return ServerState(
        server_info=server_info,
        instructions_sha256=instructions_sha256(instructions),
        tools=_definitions(found.tools, redact),
        prompts=_definitions(found.prompts, redact),
        resource_templates=_definitions(found.resource_templates, redact),
        protocol=(
            {"era": found.era.name, "version": found.era.version} if found.era is not None else None
        ),
        warnings=list(found.warnings),
        redacted=redacted,
    )


def _definitions(items: Iterable[Mapping[str, object]], redact: Redactor) -> dict[str, Definition]:
    out: dict[str, Definition] = {}
    for raw in items:
        item, hit = redact.data(raw)
        try:
            definition = Definition.of(item)
        except ValueError:  # a lone surrogate, NaN...: not canonical JSON, still pinned
            name = str(item.get("name") or item.get("uriTemplate") or "")
            definition = Definition(name, _loose_fingerprint(item), dict(item))
        if hit:
            definition = replace(definition, redacted=True)
        out[definition.name] = definition
    return out


def _loose_fingerprint(item: Mapping[str, object]) -> str:
    import json

    text = json.dumps(item, sort_keys=True, separators=(",", ":"), default=str)  # ASCII-escaped
    return "sha256:" + hashlib.sha256(text.encode("ascii")).hexdigest()


def add_probes(snapshot: Snapshot, catalogs: Mapping[str, Catalog]) -> Snapshot:
    """``snapshot`` with each of its servers' probe data from ``catalogs`` (by name)."""
    for name, record in snapshot.mcps.items():
        found = catalogs.get(name)
        if found is not None:
            record.probe = state_of(found)
    return snapshot


def snapshot_targets(
    entries: Mapping[str, ServerEntry],
    internal_root: Path | None = None,
    manifest_key: str | None = None,
    groups: Sequence[str] = (),
) -> tuple[Snapshot, list[tuple[str, ServerEntry, ServerKind]], list[str]]:
    """The snapshot of the enabled servers of ``entries`` and of the internal ones under
    ``internal_root`` (only the members of ``groups`` when given), not probed; the servers
    it holds, to probe; and warnings (an unreadable manifest, a disabled server named).

    Raises:
        GroupNotFoundError: no server is in one of ``groups``.
    """
    from mcpctl.config.siblings import DEFAULT_MANIFEST_KEY, discover_internal, select_targets

    warnings: list[str] = []
    internal: dict[str, ServerEntry] = {}
    if internal_root is not None:
        internal, found = discover_internal(internal_root, manifest_key or DEFAULT_MANIFEST_KEY)
        warnings += found
    chosen, more = select_targets(dict(entries), internal, groups=groups)
    warnings += more
    snapshot = snapshot_of_config(
        {n: e for n, e, kind in chosen if kind == "external"},
        internal={n: e for n, e, kind in chosen if kind == "internal"},
    )
    return snapshot, chosen, warnings


def catalog_warnings(catalogs: Mapping[str, Catalog]) -> list[str]:
    """What the probes of a snapshot say, by server: what each sent that was repaired, and
    each probe that failed (what that server offers is not recorded)."""
    warnings: list[str] = []
    for found in catalogs.values():
        warnings += [f"{found.name}: {w}" for w in found.warnings]
        if found.error is not None:
            hint = f" ({found.hint})" if found.hint else ""
            warnings.append(
                f"{found.name}: probe failed: {found.error}: {found.message}{hint}; "
                "what it offers is not recorded"
            )
    return warnings


def _targets(
    snapshot: Snapshot, entries: Mapping[str, ServerEntry], internal: Mapping[str, ServerEntry]
) -> list[tuple[str, ServerEntry, ServerKind]]:
    out: list[tuple[str, ServerEntry, ServerKind]] = []
    for name, record in snapshot.mcps.items():
        if record.type == "internal":
            out.append((name, internal[name], "internal"))
        else:
            out.append((name, entries[name], "external"))
    return out


async def take_snapshot_async(
    entries: Mapping[str, ServerEntry],
    *,
    internal: Mapping[str, ServerEntry] | None = None,
    probe: bool = False,
    concurrency: int | None = None,
    timeout: float | None = None,
    secrets: SecretSource | None = None,
    protocol: ProtocolMode | None = None,
    eras: EraMemory | None = None,
) -> Snapshot:
    """The snapshot of the enabled servers of ``entries`` (and ``internal``: the
    orchestrator's own, ``type: internal``); with ``probe``, what each offers, in whichever
    protocol era each speaks (``protocol`` and ``eras`` as in
    :func:`mcpctl.probe.connect.connect`; the era does not change a fingerprint).

    Never raises for a failing server: its probe data holds the failure's code.
    """
    snapshot = snapshot_of_config(entries, internal=internal)
    if not probe:
        return snapshot
    from mcpctl.probe.catalog import catalog_all

    targets = _targets(snapshot, entries, internal or {})
    found = await catalog_all(
        targets,
        concurrency=concurrency,
        timeout=timeout,
        secrets=secrets,
        protocol=protocol,
        eras=eras,
    )
    return add_probes(snapshot, found)


def take_snapshot(
    entries: Mapping[str, ServerEntry],
    *,
    internal: Mapping[str, ServerEntry] | None = None,
    probe: bool = False,
    concurrency: int | None = None,
    timeout: float | None = None,
    secrets: SecretSource | None = None,
    protocol: ProtocolMode | None = None,
    eras: EraMemory | None = None,
) -> Snapshot:
    """:func:`take_snapshot_async`, run to its end (in an event loop of its own when probing).

    Never raises for a failing server: its probe data holds the failure's code.
    """
    if not probe:
        return snapshot_of_config(entries, internal=internal)
    import anyio

    return anyio.run(
        lambda: take_snapshot_async(
            entries, internal=internal, probe=True, concurrency=concurrency,
            timeout=timeout, secrets=secrets, protocol=protocol, eras=eras,
        )
    )  # fmt: skip


def pinned_tools(snapshot: Snapshot) -> dict[str, list[str]]:
    """The names of the tools each server offered when ``snapshot`` was taken, for the
    servers whose probe succeeded (a server without probe data pins nothing)."""
    return {
        name: sorted(record.probe.tools)
        for name, record in snapshot.mcps.items()
        if record.probe is not None and record.probe.error is None
    }

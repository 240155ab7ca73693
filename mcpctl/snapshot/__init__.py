"""Snapshots: what is configured (and what servers offer) now, what changed since, watching.

    from mcpctl.snapshot import Snapshot, diff_snapshots, watch_config   # watch: async iterator

* :mod:`~mcpctl.snapshot.model` -- the snapshot (the orchestrator's ``last-known-mcps.json``
  format, extended with fingerprints and probe data);
* :mod:`~mcpctl.snapshot.fingerprints` -- canonical JSON (RFC 8785) and SHA-256;
* :mod:`~mcpctl.snapshot.diff` -- the pure diff of two snapshots;
* :mod:`~mcpctl.snapshot.files` -- load and save;
* :mod:`~mcpctl.snapshot.probing` -- snapshots with what each server offers;
* :mod:`~mcpctl.snapshot.startupreport` -- the start-up summary;
* :mod:`~mcpctl.snapshot.sarif` -- SARIF 2.1.0 logs: of snapshot diffs, and also of the
  config's problems for ``validate --format sarif`` (one SARIF writer for both; the validator
  itself is :mod:`mcpctl.config.validate`);
* :mod:`~mcpctl.snapshot.watch` -- change sets of the config file as it is edited, and
  (:mod:`~mcpctl.snapshot.changecommand`) a command to run on each (what it starts stopped
  with it);
* :mod:`~mcpctl.snapshot.live` -- what running servers offer, each change as it happens.

Names are loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpctl._lazy import lazy_exports

if TYPE_CHECKING:
    from mcpctl.snapshot.diff import (
        DefinitionChange,
        ServerChange,
        SnapshotDiff,
        diff_server_states,
        diff_snapshots,
    )
    from mcpctl.snapshot.files import load_snapshot, save_snapshot
    from mcpctl.snapshot.fingerprints import canonical_json, fingerprint_entry, fingerprint_tool
    from mcpctl.snapshot.live import ServerEvent, watch_servers
    from mcpctl.snapshot.model import (
        Definition,
        McpRecord,
        ServerState,
        Snapshot,
        snapshot_of_config,
    )
    from mcpctl.snapshot.probing import pinned_tools, take_snapshot, take_snapshot_async
    from mcpctl.snapshot.startupreport import Report, build_report, render_markdown, render_text
    from mcpctl.snapshot.watch import (
        ChangeCommand,
        CommandRun,
        ConfigChange,
        watch_config,
        watch_config_callback,
    )

__all__ = [
    "ChangeCommand",
    "CommandRun",
    "ConfigChange",
    "Definition",
    "DefinitionChange",
    "McpRecord",
    "Report",
    "ServerChange",
    "ServerEvent",
    "ServerState",
    "Snapshot",
    "SnapshotDiff",
    "build_report",
    "canonical_json",
    "diff_server_states",
    "diff_snapshots",
    "fingerprint_entry",
    "fingerprint_tool",
    "load_snapshot",
    "pinned_tools",
    "render_markdown",
    "render_text",
    "save_snapshot",
    "snapshot_of_config",
    "take_snapshot",
    "take_snapshot_async",
    "watch_config",
    "watch_config_callback",
    "watch_servers",
]

_LAZY = {
    "pinned_tools": "mcpctl.snapshot.probing",
    "take_snapshot": "mcpctl.snapshot.probing",
    "take_snapshot_async": "mcpctl.snapshot.probing",
    "Report": "mcpctl.snapshot.startupreport",
    "build_report": "mcpctl.snapshot.startupreport",
    "render_markdown": "mcpctl.snapshot.startupreport",
    "render_text": "mcpctl.snapshot.startupreport",
    "DefinitionChange": "mcpctl.snapshot.diff",
    "ServerChange": "mcpctl.snapshot.diff",
    "SnapshotDiff": "mcpctl.snapshot.diff",
    "diff_snapshots": "mcpctl.snapshot.diff",
    "diff_server_states": "mcpctl.snapshot.diff",
    "ServerEvent": "mcpctl.snapshot.live",
    "watch_servers": "mcpctl.snapshot.live",
    "load_snapshot": "mcpctl.snapshot.files",
    "save_snapshot": "mcpctl.snapshot.files",
    "canonical_json": "mcpctl.snapshot.fingerprints",
    "fingerprint_entry": "mcpctl.snapshot.fingerprints",
    "fingerprint_tool": "mcpctl.snapshot.fingerprints",
    "Definition": "mcpctl.snapshot.model",
    "McpRecord": "mcpctl.snapshot.model",
    "ServerState": "mcpctl.snapshot.model",
    "Snapshot": "mcpctl.snapshot.model",
    "snapshot_of_config": "mcpctl.snapshot.model",
    "ChangeCommand": "mcpctl.snapshot.watch",
    "CommandRun": "mcpctl.snapshot.watch",
    "ConfigChange": "mcpctl.snapshot.watch",
    "watch_config": "mcpctl.snapshot.watch",
    "watch_config_callback": "mcpctl.snapshot.watch",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

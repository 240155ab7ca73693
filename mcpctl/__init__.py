"""mcpctl: manage the external MCP servers of AI agents (``external-mcps.json``).

The library is what the CLI and the long-running daemon share::

    from mcpctl import load_config, validate_config, ConfigStore, ServerEntry, resolve_entry
    from mcpctl import Snapshot, diff_snapshots, load_snapshot, save_snapshot, watch_config
    from mcpctl import ChangeCommand
    from mcpctl import TrustStore          # which config files the user approved (mcpctl trust)

Names are loaded on first use, so ``import mcpctl`` stays cheap.
"""

from __future__ import annotations

from mcpctl._lazy import lazy_exports
from mcpctl._version import __version__

TYPE_CHECKING = False  # importing typing would cost the quick paths (launcher, completion)

if TYPE_CHECKING:
    from mcpctl.config.loader import LoadResult, load_config
    from mcpctl.config.model import Config, Problem, ServerEntry
    from mcpctl.config.placeholders import ResolvedEntry, resolve_entry
    from mcpctl.config.store import ConfigStore
    from mcpctl.config.trust import TrustStore
    from mcpctl.config.validate import ValidationReport, validate_config
    from mcpctl.errors import (
        ConfigError,
        ConfigInvalidError,
        ConfigSyntaxError,
        McpctlError,
        OutsideError,
        PlaceholderError,
        UsageError,
    )
    from mcpctl.paths import Paths
    from mcpctl.results import Result
    from mcpctl.snapshot.diff import SnapshotDiff, diff_snapshots
    from mcpctl.snapshot.files import load_snapshot, save_snapshot
    from mcpctl.snapshot.model import Snapshot
    from mcpctl.snapshot.watch import ChangeCommand, CommandRun, ConfigChange, watch_config

__all__ = [
    "ChangeCommand",
    "CommandRun",
    "Config",
    "ConfigChange",
    "ConfigError",
    "ConfigInvalidError",
    "ConfigStore",
    "ConfigSyntaxError",
    "LoadResult",
    "McpctlError",
    "OutsideError",
    "Paths",
    "PlaceholderError",
    "Problem",
    "ResolvedEntry",
    "Result",
    "ServerEntry",
    "Snapshot",
    "SnapshotDiff",
    "TrustStore",
    "UsageError",
    "ValidationReport",
    "__version__",
    "diff_snapshots",
    "load_config",
    "load_snapshot",
    "resolve_entry",
    "save_snapshot",
    "validate_config",
    "watch_config",
]

_LAZY = {
    "ChangeCommand": "mcpctl.snapshot.watch",
    "CommandRun": "mcpctl.snapshot.watch",
    "Config": "mcpctl.config.model",
    "ConfigChange": "mcpctl.snapshot.watch",
    "ConfigError": "mcpctl.errors",
    "ConfigInvalidError": "mcpctl.errors",
    "ConfigStore": "mcpctl.config.store",
    "ConfigSyntaxError": "mcpctl.errors",
    "LoadResult": "mcpctl.config.loader",
    "McpctlError": "mcpctl.errors",
    "OutsideError": "mcpctl.errors",
    "Paths": "mcpctl.paths",
    "PlaceholderError": "mcpctl.errors",
    "Problem": "mcpctl.config.model",
    "ResolvedEntry": "mcpctl.config.placeholders",
    "Result": "mcpctl.results",
    "ServerEntry": "mcpctl.config.model",
    "Snapshot": "mcpctl.snapshot.model",
    "SnapshotDiff": "mcpctl.snapshot.diff",
    "TrustStore": "mcpctl.config.trust",
    "UsageError": "mcpctl.errors",
    "ValidationReport": "mcpctl.config.validate",
    "diff_snapshots": "mcpctl.snapshot.diff",
    "load_config": "mcpctl.config.loader",
    "load_snapshot": "mcpctl.snapshot.files",
    "save_snapshot": "mcpctl.snapshot.files",
    "watch_config": "mcpctl.snapshot.watch",
    "resolve_entry": "mcpctl.config.placeholders",
    "validate_config": "mcpctl.config.validate",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

"""What ``mcpctl serve`` works on: the config file, its store, the secrets, the era memory.

One :class:`Workspace` per server, fixed when it starts (the paths of its ``--config``, its
environment and working directory); each tool call reads the file again, so an edit made
meanwhile -- by hand, by the CLI, by another agent -- is what the next call sees.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mcpctl.paths import Paths

if TYPE_CHECKING:
    from mcpctl.config.loader import LoadResult
    from mcpctl.config.model import ServerEntry
    from mcpctl.config.placeholders import SecretSource
    from mcpctl.config.store import ConfigStore
    from mcpctl.probe.eras import EraMemory

__all__ = ["Workspace", "before_spawn"]


@dataclass(frozen=True)
class Workspace:
    """The config ``paths`` name, and whether the agent may ask for changes.

    ``allow_changes``: the change tools are offered (each change still asks the user).
    """

    paths: Paths
    allow_changes: bool = False

    @property
    def config_path(self) -> str:
        """The config file, as a string for results."""
        return str(self.paths.config)

    def read(self) -> LoadResult:
        """The config now (bad entries skipped with a problem each); every placeholder's
        value in the environment is registered for redaction.

        Raises:
            ConfigNotFoundError: a file named with ``--config``/``MCPCTL_CONFIG`` is missing.
            ConfigSyntaxError, ConfigError, StorageError: the file cannot be used at all.
        """
        from mcpctl.config.loader import read_config
        from mcpctl.config.redaction import register_config

        must_exist = self.paths.config_override is not None
        loaded = read_config(self.paths.config, must_exist=must_exist)
        register_config(loaded.config.entries.values())
        return loaded

    def store(self) -> ConfigStore:
        """The store of the config file: lock, atomic write, backups, undo."""
        from mcpctl.config.store import ConfigStore

        return ConfigStore.from_paths(self.paths)

    def secrets(self) -> SecretSource:
        """Where placeholders resolve from after the environment: the OS keyring."""
        from mcpctl.auth.secrets import keyring_source

        return keyring_source()

    def eras(self) -> EraMemory:
        """The memory of which protocol era each server spoke."""
        from mcpctl.probe.eras import EraMemory

        return EraMemory.in_dir(self.paths.state_dir)


def before_spawn(workspace: Workspace, entries: Iterable[tuple[str, ServerEntry]]) -> None:
    """The one gate every tool passes before it starts or connects to a server.

    The probing tools (health, doctor, tools, a probed snapshot diff) start servers as
    ``mcpctl health`` does, and obey the same consent rules: a config file other than the
    user's own (a project's, found by walking up) runs only the servers the user approved
    with ``mcpctl trust``; the refusal reaches the agent as the tool's error.

    Raises:
        UntrustedConfigError: some of ``entries`` wait for approval.
    """
    from mcpctl.config.trust import TrustStore

    TrustStore.from_paths(workspace.paths).require(workspace.paths.config, dict(entries))

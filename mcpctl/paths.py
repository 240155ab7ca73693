"""Every location mcpctl reads or writes, in one place.

Resolution, highest priority first:

* config: ``--config`` / ``MCPCTL_CONFIG``; else the nearest ``external-mcps.json`` from the
  current directory upwards; else ``<user config dir>/external-mcps.json``.
* user config/cache/state dirs: ``MCPCTL_HOME=DIR`` puts them under ``DIR/config``,
  ``DIR/cache`` and ``DIR/state``; otherwise platformdirs decides (imported lazily: most
  commands find a project file or ``MCPCTL_HOME`` first and never pay for it).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from mcpctl._record import Record, record_fields

__all__ = [
    "CONFIG_FILENAME",
    "Paths",
    "backup_key",
    "find_config",
    "lock_key",
]

CONFIG_FILENAME = "external-mcps.json"
APP_NAME = "mcpctl"


def _platform_dir(kind: str) -> Path:
    import platformdirs

    getter = {
        "config": platformdirs.user_config_dir,
        "cache": platformdirs.user_cache_dir,
        "state": platformdirs.user_state_dir,
    }[kind]
    return Path(getter(APP_NAME, appauthor=False))


def find_config(start: Path | None = None) -> Path | None:
    """The nearest ``external-mcps.json`` in ``start`` or one of its parents, if any."""
    here = (start or Path.cwd()).absolute()
    for directory in (here, *here.parents):
        candidate = directory / CONFIG_FILENAME
        if candidate.is_file():
            return candidate
    return None


# The frozen record's methods come from Record: generating them costs every command's
# start-up (bench/README.md).
@dataclass(init=False, repr=False, eq=False)
class Paths(Record):
    """The resolved locations for one invocation.

    Build it with :meth:`Paths.from_env`; tests and the daemon may construct it directly.
    """

    home: Path | None
    config_override: Path | None
    cwd: Path | None

    def __init__(
        self,
        home: Path | None = None,
        config_override: Path | None = None,
        cwd: Path | None = None,
    ) -> None:
        d = self.__dict__
        d["home"] = home
        d["config_override"] = config_override
        d["cwd"] = cwd

    @classmethod
    def from_env(cls, config: str | os.PathLike[str] | None = None) -> Paths:
        """Locations from the explicit ``config`` argument and the environment."""
        env_config = os.environ.get("MCPCTL_CONFIG") or None
        chosen = config if config is not None else env_config
        home = os.environ.get("MCPCTL_HOME") or None
        return cls(
            home=Path(home).expanduser() if home else None,
            config_override=Path(chosen).expanduser() if chosen else None,
        )

    def _dir(self, kind: str) -> Path:
        if self.home is not None:
            return self.home / kind
        return _platform_dir(kind)

    @property
    def config_dir(self) -> Path:
        """The user config dir (``MCPCTL_HOME/config`` or the platform's)."""
        return self._dir("config")

    @property
    def cache_dir(self) -> Path:
        """The user cache dir."""
        return self._dir("cache")

    @property
    def state_dir(self) -> Path:
        """The user state dir (snapshots, backups)."""
        return self._dir("state")

    @property
    def config(self) -> Path:
        """The config file this invocation works on (it may not exist yet)."""
        if self.config_override is not None:
            return self.config_override
        found = find_config(self.cwd)
        if found is not None:
            return found
        return self.user_config

    @property
    def user_config(self) -> Path:
        """The user's own config file (in the user config dir): the one used when neither
        ``--config``, ``MCPCTL_CONFIG`` nor a project's file says otherwise."""
        return self.config_dir / CONFIG_FILENAME

    @property
    def registries(self) -> Path:
        """The registries list."""
        return self.config_dir / "registries.json"

    @property
    def discovery_cache(self) -> Path:
        """The SQLite discovery cache."""
        return self.cache_dir / "discovery.sqlite3"

    @property
    def package_metadata(self) -> Path:
        """The npm and PyPI documents package pins were resolved from (with their ETags)."""
        return self.cache_dir / "package-metadata.json"

    @property
    def snapshot(self) -> Path:
        """The last-known snapshot (``MCPCTL_SNAPSHOT`` overrides it)."""
        override = os.environ.get("MCPCTL_SNAPSHOT")
        if override:
            return Path(override).expanduser()
        return self.state_dir / "last-known-mcps.json"

    @property
    def backups_root(self) -> Path:
        """Where backups of every config file mcpctl changed are kept."""
        return self.state_dir / "backups"

    def backups_for(self, config: Path) -> Path:
        """The backup folder of one config file (each file gets its own history)."""
        return self.backups_root / backup_key(config)

    @property
    def locks_dir(self) -> Path:
        """Where the locks that serialise writers of a file are (never beside the file)."""
        return self.state_dir / "locks"

    @property
    def secrets_index_lock(self) -> Path:
        """The lock that serialises changes to the keyring's index of secret names."""
        return self.locks_dir / "keyring-index.lock"

    def lock_for(self, file: Path) -> Path:
        """The lock file of one file mcpctl writes (see :func:`lock_key`)."""
        return self.locks_dir / f"{lock_key(file)}.lock"


record_fields(Paths)


def lock_key(file: str | os.PathLike[str]) -> str:
    """The name of a file's lock: a digest of its resolved absolute path, so every way of
    naming the file (relative, through a symlink) takes the same lock."""
    import hashlib

    real = os.path.realpath(file)
    return hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def backup_key(config: Path) -> str:
    """A stable, readable folder name for a config file's backups."""
    import hashlib

    real = os.path.realpath(config)
    digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    parent = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(real).parent.name or "root")[:40]
    return f"{parent}-{digest}"

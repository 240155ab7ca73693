"""Watching ``external-mcps.json``: each saved change, as a diff against the last good state.

    async with contextlib.aclosing(watch_config(path)) as changes:
        async for change in changes:
            if change.problem:
                log.warning(change.problem)     # invalid or removed: the last state stays
            else:
                apply(change.config, change.diff)

The file's directory is watched (watchfiles: inotify, FSEvents, ReadDirectoryChangesW), not
the file itself, so every way editors save shows up: a temporary file renamed over it (vim,
VS Code, mcpctl itself), truncate then write, delete then recreate. The file may be absent
for a while. A symlinked file is followed: the link's directory and its target's are both
watched.

After the first event of a burst, the watcher waits ``debounce`` seconds for the rest, then
loads the file once. Each change set is diffed against the latest good state (not the state
at start). An invalid file (mid-write, a typo) or a removed one is reported once and
otherwise ignored: the last good state stays current until a good one replaces it.

:class:`~mcpctl.snapshot.changecommand.ChangeCommand` (re-exported here) runs a command on
a change, what ``mcpctl watch --exec`` does.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from mcpctl.config.model import Config
from mcpctl.snapshot.changecommand import ChangeCommand, CommandRun
from mcpctl.snapshot.diff import SnapshotDiff, diff_snapshots
from mcpctl.snapshot.model import Snapshot, snapshot_of_config

__all__ = [
    "ChangeCommand",
    "CommandRun",
    "ConfigChange",
    "StopFlag",
    "watch_config",
    "watch_config_callback",
]

STEP_MS = 50  # how often watchfiles looks at what it collected
# The longest watchfiles waits before handing control back: how long a task cancellation can
# take (a stop flag is seen within STEP_MS); shorter costs CPU while idle.
TICK_MS = 500
DIR_POLL = 0.5  # seconds between looks for a missing directory
ABSENT = "does not exist yet; waiting for it"
REMOVED = "was removed; waiting for it to come back"


class StopFlag(Protocol):
    """Anything with ``is_set()``: a :class:`threading.Event`, an :class:`anyio.Event`..."""

    def is_set(self) -> bool:
        """Whether to stop."""
        ...


@dataclass(frozen=True)
class ConfigChange:
    """One change set of the config file, or a problem with it.

    ``diff`` is from the previous good state to ``config``/``snapshot`` (the current good
    state: the enabled servers, fingerprinted). With ``problem`` set (the file is invalid,
    unreadable or gone) the diff is empty and ``config`` is the last good state, still
    current. ``warnings`` are the entries the loader had to skip. ``time`` is when the change
    was seen (local time, with its offset).
    """

    diff: SnapshotDiff
    config: Config
    snapshot: Snapshot
    problem: str | None = None
    time: datetime = field(default_factory=lambda: datetime.now().astimezone())
    path: Path = Path()
    warnings: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether the file is valid (``problem`` is ``None``)."""
        return self.problem is None

    def to_data(self) -> dict[str, Any]:
        """The JSON view: names and field names only, never a value."""
        return {
            "time": self.time.isoformat(timespec="seconds"),
            "file": str(self.path),
            "ok": self.ok,
            "problem": self.problem,
            "added": list(self.diff.added),
            "removed": list(self.diff.removed),
            "changed": [{"name": c.name, "fields": list(c.fields)} for c in self.diff.changed],
            "servers": sorted(self.snapshot.mcps),
            "warnings": list(self.warnings),
        }


class _Stop:
    """The flag handed to watchfiles: set on close, or when the caller's flag is."""

    def __init__(self, outer: StopFlag | None) -> None:
        self.outer = outer
        self.flag = False

    def set(self) -> None:
        self.flag = True

    def is_set(self) -> bool:
        return self.flag or (self.outer is not None and self.outer.is_set())


class _State:
    """The last good state, and the kind of problem last reported (reported once each)."""

    def __init__(self, path: Path, initial: Config | None) -> None:
        self.path = path
        self.config = initial if initial is not None else Config()
        self.snapshot: Snapshot | None = None if initial is None else self._snap(initial)
        self.problem: str | None = None

    @staticmethod
    def _snap(config: Config) -> Snapshot:
        return snapshot_of_config(config.entries)

    def current(self, problem: str | None = None) -> ConfigChange:
        """The state as a change with an empty diff."""
        snapshot = self.snapshot if self.snapshot is not None else self._snap(Config())
        return ConfigChange(SnapshotDiff(), self.config, snapshot, problem, path=self.path)

    def check(self, missing: str) -> ConfigChange | None:
        """Load the file: the change to report, if any (``missing``: says the file is gone)."""
        from mcpctl.config.loader import read_config
        from mcpctl.errors import ConfigError, ConfigNotFoundError, ConfigSyntaxError, StorageError

        try:
            loaded = read_config(self.path, must_exist=True)
        except ConfigNotFoundError:
            return self._problem("missing", f"{self.path} {missing}")
        except ConfigSyntaxError as exc:
            return self._problem("invalid", f"{exc.message}; {self._keeping()}")
        except (ConfigError, StorageError) as exc:
            return self._problem("unreadable", f"{exc.message}; {self._keeping()}")
        old, new = self.snapshot, self._snap(loaded.config)
        recovered = self.problem is not None
        self.config, self.snapshot, self.problem = loaded.config, new, None
        if old is None:
            return None  # the state at start: what later changes are diffed against
        diff = diff_snapshots(old, new)
        if diff.empty and not recovered:
            return None
        return ConfigChange(diff, loaded.config, new, path=self.path,
                            warnings=tuple(loaded.warnings))  # fmt: skip

    def _keeping(self) -> str:
        if self.snapshot is None:
            return "waiting for a valid file"
        count = len(self.snapshot.mcps)
        return f"keeping the last good state ({count} server{'' if count == 1 else 's'})"

    def _problem(self, kind: str, message: str) -> ConfigChange | None:
        if self.snapshot is None:  # nothing good yet: a file that appears adds every server
            self.snapshot = self._snap(self.config)
        if kind == self.problem:
            return None
        self.problem = kind
        return self.current(message)


def _watched(path: Path) -> tuple[tuple[Path, ...], frozenset[str]]:
    """The directories to watch for ``path``, and the paths whose events count."""
    directory = path.parent.resolve()
    link = directory / path.name
    target = link.resolve()
    dirs, names = [directory], {str(link), str(directory)}
    if target != link:
        names.add(str(target))
        if target.parent != directory and target.parent.is_dir():
            dirs.append(target.parent)
            names.add(str(target.parent))
    return tuple(dirs), frozenset(names)


def _only(names: frozenset[str]) -> Callable[[Any, str], bool]:
    return lambda _, where: where in names


async def watch_config(
    path: str | Path,
    *,
    debounce: float = 0.5,
    stop: StopFlag | None = None,
    initial: Config | None = None,
    on_ready: Callable[[ConfigChange], object] | None = None,
) -> AsyncGenerator[ConfigChange, None]:
    """Yield each change of the config file at ``path`` until ``stop`` is set or the
    iteration ends (``break``, cancellation, ``aclose()``).

    The watch is in place before the file is first loaded, so no save is missed. Then
    ``on_ready`` (if given) is called once with the state at start (empty diff; ``problem``
    set when the file is missing or invalid). Each burst of writes gives at most one change
    set, ``debounce`` seconds after its first event, diffed against the latest good state;
    one whose diff is empty (a whitespace edit, the same content again) is not yielded,
    except the first good state after a problem (the file is valid again). A missing,
    invalid or unreadable file is yielded once as a problem (then kept quiet until that
    changes) and the last good state stays current. A file missing or invalid at start
    counts as empty: when it turns good, its servers are all added. ``initial`` (a config
    the caller already loaded) replaces the state at start: a file that differs from it
    gives a change set at once.

    A change saved while the caller handles the previous one is not lost: it comes in the
    next change set. Closing the iterator, cancelling the task or setting ``stop`` stops the
    watch and its thread (``stop`` within 0.05 s, a cancellation within about 0.5 s).

    Raises:
        UsageError: ``debounce`` is negative.
        StorageError: the directory cannot be watched (permissions, inotify limits).
    """
    import anyio
    from watchfiles import awatch

    from mcpctl.errors import StorageError, UsageError

    if debounce < 0:
        raise UsageError(f"debounce must be zero or more, not {debounce}")
    file = Path(path).absolute()
    state = _State(file, initial)
    halt = _Stop(stop)
    started = False
    try:
        while not halt.is_set():
            dirs, names = _watched(file)
            if not dirs[0].is_dir():
                change = state.check(REMOVED if started else ABSENT)
                if not started:
                    started = True
                    if on_ready is not None:
                        on_ready(state.current(change.problem if change else None))
                if change is not None:
                    yield change
                while not dirs[0].is_dir() and not halt.is_set():
                    await anyio.sleep(DIR_POLL)
                continue
            watcher = awatch(
                *dirs, watch_filter=_only(names), step=STEP_MS, stop_event=halt,
                rust_timeout=TICK_MS, yield_on_timeout=True, recursive=False,
            )  # fmt: skip
            pending = started  # watching anew: what happened in between is looked at
            try:
                async for batch in watcher:
                    if not started:  # the watch is in place: now the state at start
                        started = True
                        change = state.check(ABSENT)
                        if on_ready is not None:
                            on_ready(state.current(change.problem if change else None))
                        if change is not None:
                            yield change
                        continue
                    if not (batch or pending):
                        continue
                    pending = False
                    # The rest of the burst; what comes after the load starts the next one.
                    await anyio.sleep(max(0.0, debounce - STEP_MS / 1000))
                    if halt.is_set():
                        return
                    change = state.check(REMOVED)
                    if change is not None:
                        yield change
                    if _watched(file) != (dirs, names) or not all(d.is_dir() for d in dirs):
                        break  # the link was moved, or the directory removed: watch anew
            except FileNotFoundError:  # the directory went as the watch started: wait for it
                await anyio.sleep(DIR_POLL)
                continue
            except OSError as exc:
                raise StorageError(
                    f"cannot watch {dirs[0]}: {exc.strerror or exc}",
                    hint="on Linux, raise fs.inotify.max_user_watches/max_user_instances",
                ) from None
            finally:
                await watcher.aclose()
    finally:
        halt.set()


def watch_config_callback(
    path: str | Path,
    on_change: Callable[[ConfigChange], object],
    *,
    debounce: float = 0.5,
    stop: StopFlag | None = None,
    initial: Config | None = None,
    on_ready: Callable[[ConfigChange], object] | None = None,
) -> None:
    """:func:`watch_config` for code without an event loop: blocks the calling thread,
    calling ``on_change(change)`` for each change set, until ``stop`` is set (a
    :class:`threading.Event`, set from another thread; the watch ends within 0.05 s).

    Run it in a thread of its own; the callbacks run in that thread, one at a time (a change
    saved meanwhile comes in the next call). It starts its own event loop (anyio.run), so
    it cannot be called from inside one. When it returns, nothing of it is left running.

    Raises:
        Whatever ``on_change`` or ``on_ready`` raises (the watch ends), and the errors of
        :func:`watch_config`.
    """
    import contextlib

    import anyio

    async def run() -> None:
        changes = watch_config(
            path, debounce=debounce, stop=stop, initial=initial, on_ready=on_ready
        )
        async with contextlib.aclosing(changes):
            async for change in changes:
                on_change(change)

    anyio.run(run)

"""Reading ``external-mcps.json``: the raw document, commands' reads, the daemon's lenient loader.

:func:`read_document` gives the JSON object as written (or raises with file, line and
column); :func:`read_config` is what commands use (it raises when the file is unusable, and
skips bad entries with problems); :func:`load_config` never raises and returns what is
usable plus the problems, the way an orchestrator (docs/config.md, "The orchestrator
convention") expects a loader to behave -- except that one bad entry no longer costs the
whole file.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpctl.config.checks import entry_from_data, wrapper_problem
from mcpctl.config.model import Config, Problem, ServerEntry, format_path
from mcpctl.errors import ConfigError, ConfigNotFoundError, ConfigSyntaxError, StorageError

__all__ = [
    "Document",
    "LoadResult",
    "build_config",
    "load_config",
    "missing_config_note",
    "parse_document",
    "read_config",
    "read_document",
]


# The dataclasses of this module write their methods out: generating them costs every
# command's start-up (bench/README.md).
@dataclass(init=False, repr=False, eq=False)
class Document:
    """A config file's JSON object as written, in file order.

    ``exists`` is false for a file that is not there yet (``data`` is then empty).
    ``duplicates`` lists top-level or nested keys written more than once.
    """

    path: Path
    data: dict[str, Any]
    exists: bool
    raw: bytes
    duplicates: list[str]
    __hash__ = None  # type: ignore[assignment]  # mutable

    def __init__(
        self,
        path: Path,
        data: dict[str, Any],
        exists: bool,
        raw: bytes = b"",
        duplicates: list[str] | None = None,
    ) -> None:
        self.path = path
        self.data = data
        self.exists = exists
        self.raw = raw
        self.duplicates = [] if duplicates is None else duplicates

    def _values(self) -> tuple[Any, ...]:
        return (self.path, self.data, self.exists, self.raw, self.duplicates)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            assert isinstance(other, Document)
            return self._values() == other._values()
        return NotImplemented

    def __repr__(self) -> str:
        return (
            f"Document(path={self.path!r}, data={self.data!r}, exists={self.exists!r},"
            f" raw={self.raw!r}, duplicates={self.duplicates!r})"
        )


def _decode(raw: bytes, path: Path) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        from mcpctl.config.safefile import decode_text

        def fail(message: str, line: int, column: int) -> ConfigSyntaxError:
            return ConfigSyntaxError(f"file is {message}", path=str(path), line=line, column=column)

        return decode_text(raw, path, fail=fail)  # raises, with the bad byte's place


def parse_document(raw: bytes, path: Path) -> Document:
    """Parse the bytes of a config file.

    Raises:
        ConfigSyntaxError: not UTF-8, not JSON, or not a JSON object at the top.
    """
    text = _decode(raw, path)
    duplicates: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(items)  # in C; the slow path below runs only when keys repeat
        if len(obj) != len(items):
            seen: set[str] = set()
            for key, _ in items:
                if key in seen:
                    duplicates.append(key)
                seen.add(key)
        return obj

    if not text.strip():
        raise ConfigSyntaxError(
            "file is empty; expected a JSON object", path=str(path), line=1, column=1,
            hint='write {} for a config with no servers',
        )  # fmt: skip
    try:
        data = json.loads(text, object_pairs_hook=pairs)
    except json.JSONDecodeError as exc:
        raise _syntax_error(text, exc, path) from None
    except (ValueError, RecursionError) as exc:
        # Numbers with thousands of digits, or nesting deeper than Python's stack: the
        # positional parser says where (it stops at a depth of 200).
        from mcpctl.config.jsontext import JsonPosError, parse_with_positions

        try:
            parse_with_positions(text)
        except JsonPosError as ours:
            raise ConfigSyntaxError(
                f"invalid JSON: {ours.msg}", path=str(path), line=ours.line, column=ours.column
            ) from None
        except RecursionError:
            pass
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise ConfigSyntaxError(
            f"invalid JSON: {reason}", path=str(path), line=1, column=1
        ) from None
    if not isinstance(data, dict):
        raise ConfigSyntaxError(
            f"the top level must be a JSON object mapping names to servers, "
            f"not {type(data).__name__}",
            path=str(path), line=1, column=1,
        )  # fmt: skip
    return Document(path, data, True, raw, duplicates)


def _syntax_error(text: str, exc: json.JSONDecodeError, path: Path) -> ConfigSyntaxError:
    """The error in the words ``validate`` uses: its parser names what went wrong better."""
    from mcpctl.config.jsontext import JsonPosError, parse_with_positions

    try:
        parse_with_positions(text)
    except JsonPosError as ours:
        return ConfigSyntaxError(
            f"invalid JSON: {ours.msg}", path=str(path), line=ours.line, column=ours.column
        )
    except RecursionError:
        pass
    return ConfigSyntaxError(
        f"invalid JSON: {exc.msg}", path=str(path), line=exc.lineno, column=exc.colno
    )


def read_document(path: Path) -> Document:
    """Read and parse a config file; a missing file is an empty document.

    Raises:
        ConfigSyntaxError: the file is not a JSON object (with line and column).
        ConfigError: the path is not a regular file (a FIFO, a device, a directory), or it is
            larger than the limit (16 MiB, ``MCPCTL_MAX_FILE_BYTES``).
        StorageError: the file exists but cannot be read.
    """
    from mcpctl.config.safefile import read_file

    try:
        raw = read_file(path, error=ConfigError)
    except StorageError as exc:
        raise StorageError(exc.message, hint="check the file's permissions") from None
    if raw is None:
        return Document(path, {}, False)
    return parse_document(raw, path)


def build_config(data: dict[str, Any]) -> tuple[Config, list[Problem]]:
    """Turn a config object into a :class:`Config`, skipping bad entries one by one."""
    config = Config()
    problems: list[Problem] = []
    wrapped = wrapper_problem(data)
    if wrapped is not None:
        problems.append(wrapped)
    for name, value in data.items():
        if wrapped is not None and name == wrapped.path:
            continue
        if name.startswith("$"):
            config.extras[name] = value
            continue
        entry, issues = entry_from_data(name, value)
        if entry is not None:
            config.entries[name] = entry
            continue
        for issue in issues:
            problems.append(
                Problem(
                    "error",
                    issue.code,
                    f"server {name!r} skipped: {issue.message}",
                    format_path(issue.path),
                    hint=issue.hint,
                )
            )
    return config, problems


@dataclass(init=False, repr=False, eq=False)
class LoadResult:
    """What a load found: usable entries and everything it had to skip.

    ``document`` is the JSON object as written (``None`` when it could not be read).
    """

    path: Path
    config: Config
    problems: list[Problem]
    exists: bool
    document: Document | None
    __hash__ = None  # type: ignore[assignment]  # mutable

    def __init__(
        self,
        path: Path,
        config: Config,
        problems: list[Problem],
        exists: bool,
        document: Document | None = None,
    ) -> None:
        self.path = path
        self.config = config
        self.problems = problems
        self.exists = exists
        self.document = document

    def _values(self) -> tuple[Any, ...]:
        return (self.path, self.config, self.problems, self.exists, self.document)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            assert isinstance(other, LoadResult)
            return self._values() == other._values()
        return NotImplemented

    def __repr__(self) -> str:
        return (
            f"LoadResult(path={self.path!r}, config={self.config!r},"
            f" problems={self.problems!r}, exists={self.exists!r}, document={self.document!r})"
        )

    @property
    def ok(self) -> bool:
        """True when nothing had to be skipped."""
        return not self.problems

    @property
    def warnings(self) -> list[str]:
        """The problems as one line each, for a command's warnings."""
        return [p.message + (f" ({p.hint})" if p.hint else "") for p in self.problems]

    def entry(self, name: str) -> ServerEntry:
        """The entry ``name``, for a command about one server.

        Raises:
            ServerNotFoundError: the file has no server ``name`` (the hint names the closest).
            ConfigInvalidError: it has one, which breaks the config model (its first problem).
        """
        from mcpctl.errors import ConfigInvalidError, ServerNotFoundError

        raw = self.document.data if self.document is not None else {}
        if name not in raw or name.startswith("$"):
            names = [k for k in raw if not k.startswith("$")]
            raise ServerNotFoundError.for_names([name], names, self.path)
        entry = self.config.entries.get(name)
        if entry is None:
            _, issues = entry_from_data(name, raw[name])
            first = issues[0]
            raise ConfigInvalidError(
                f"server {name!r} is invalid: {format_path(first.path)}: {first.message}",
                hint=f"run 'mcpctl validate' to see every problem in {self.path}",
            )
        return entry


def read_config(path: str | os.PathLike[str], *, must_exist: bool = False) -> LoadResult:
    """Read a config file for a command: bad entries are skipped with a problem each.

    A missing file is an empty config unless ``must_exist`` (a file named explicitly,
    with ``--config`` or ``MCPCTL_CONFIG``, that is not there is a mistake worth saying).

    Raises:
        ConfigNotFoundError: ``must_exist`` and the file does not exist.
        ConfigSyntaxError: the file is not a JSON object (with line and column).
        ConfigError: the path is not a regular file, or too large.
        StorageError: the file exists but cannot be read.
    """
    file = Path(path)
    doc = read_document(file)
    if must_exist and not doc.exists:
        raise ConfigNotFoundError(
            f"there is no config file at {file}",
            hint="check the path; 'mcpctl add' creates the file with its first server",
        )
    config, problems = build_config(doc.data)
    for key in doc.duplicates:
        problems.append(
            Problem(
                "warning",
                "duplicate_key",
                f"key {key!r} appears more than once; the last one is used",
            )
        )
    return LoadResult(file, config, problems, doc.exists, doc)


def missing_config_note(path: str | os.PathLike[str]) -> str | None:
    """What to tell of the config file at ``path`` when there is none (``None`` when there
    is): which file would be used and how to create it. An empty list is no error, but a
    command with nothing to show for that reason says why.
    """
    file = Path(path)
    if os.path.lexists(file):
        return None
    return (
        f"no config file: {file} does not exist, nor does an {file.name} in this folder or "
        f"above it; 'mcpctl add NAME -- COMMAND' creates it (--config FILE names another)"
    )


def load_config(path: str | os.PathLike[str] | None = None) -> LoadResult:
    """Load a config file leniently: never raises.

    A missing file gives an empty config; invalid JSON gives an empty config and a
    problem with line and column; each bad entry is skipped with a problem, the others
    load. ``path`` defaults to the file mcpctl would use here (see :class:`~mcpctl.paths.Paths`).
    """
    if path is None:
        from mcpctl.paths import Paths

        path = Paths.from_env().config
    file = Path(path)
    try:
        return read_config(file)
    except ConfigSyntaxError as exc:
        problem = Problem("error", exc.code, exc.message, line=exc.line, column=exc.column)
        return LoadResult(file, Config(), [problem], True)
    except (ConfigError, StorageError) as exc:
        return LoadResult(file, Config(), [Problem("error", exc.code, exc.message)], True)

"""Reading ``external-mcps.json``: the raw document, and the lenient loader for the daemon.

:func:`read_document` gives the JSON object as written (or raises with file, line and
column); :func:`load_config` never raises and returns what is usable plus the problems,
the way the seeds' orchestrator expects a loader to behave -- except that one bad entry
no longer costs the whole file.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpctl.errors import ConfigError, ConfigSyntaxError, StorageError
from mcpctl.config.model import Config, Problem, entry_from_data, format_path

__all__ = ["Document", "LoadResult", "build_config", "load_config", "read_document"]


@dataclass
class Document:
    """A config file's JSON object as written, in file order.

    ``exists`` is false for a file that is not there yet (``data`` is then empty).
    ``duplicates`` lists top-level or nested keys written more than once.
    """

    path: Path
    data: dict[str, Any]
    exists: bool
    raw: bytes = b""
    duplicates: list[str] = field(default_factory=list)


def _decode(raw: bytes, path: Path) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        text = raw[: exc.start].decode("utf-8", "replace")
        line = text.count("\n") + 1
        column = exc.start - (text.rfind("\n") + 1) + 1 if "\n" in text else exc.start + 1
        raise ConfigSyntaxError(
            "file is not UTF-8 text", path=str(path), line=line, column=column
        ) from None


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
        raise ConfigSyntaxError(
            f"invalid JSON: {exc.msg}", path=str(path), line=exc.lineno, column=exc.colno
        ) from None
    except (ValueError, RecursionError) as exc:
        # Numbers with thousands of digits, or nesting deeper than Python's stack.
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


def read_document(path: Path) -> Document:
    """Read and parse a config file; a missing file is an empty document.

    Raises:
        ConfigSyntaxError: the file is not a JSON object (with line and column).
        StorageError: the file exists but cannot be read.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Document(path, {}, False)
    except IsADirectoryError:
        raise ConfigError(f"{path} is a directory, not a config file") from None
    except OSError as exc:
        raise StorageError(
            f"cannot read {path}: {exc.strerror or exc}",
            hint="check the file's permissions",
        ) from None
    return parse_document(raw, path)


def build_config(data: dict[str, Any]) -> tuple[Config, list[Problem]]:
    """Turn a config object into a :class:`Config`, skipping bad entries one by one."""
    config = Config()
    problems: list[Problem] = []
    for name, value in data.items():
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


@dataclass
class LoadResult:
    """What the lenient loader found: usable entries and everything it had to skip."""

    path: Path
    config: Config
    problems: list[Problem]
    exists: bool

    @property
    def ok(self) -> bool:
        """True when nothing had to be skipped."""
        return not self.problems


def load_config(path: str | os.PathLike[str] | None = None) -> LoadResult:
    """Load a config file leniently: never raises.

    A missing file gives an empty config; invalid JSON gives an empty config and a
    problem with line and column; each bad entry is skipped with a problem, the others
    load. ``path`` defaults to the file mcpctl would use here (DESIGN.md section 3).
    """
    if path is None:
        from mcpctl.paths import Paths

        path = Paths.from_env().config
    file = Path(path)
    try:
        doc = read_document(file)
    except ConfigSyntaxError as exc:
        problem = Problem("error", exc.code, exc.message, line=exc.line, column=exc.column)
        return LoadResult(file, Config(), [problem], True)
    except (ConfigError, StorageError) as exc:
        return LoadResult(file, Config(), [Problem("error", exc.code, exc.message)], True)
    config, problems = build_config(doc.data)
    for key in doc.duplicates:
        problems.append(
            Problem(
                "warning",
                "duplicate_key",
                f"key {key!r} appears more than once; the last one is used",
            )
        )
    return LoadResult(file, config, problems, doc.exists)

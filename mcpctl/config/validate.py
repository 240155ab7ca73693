"""The strict validator: every problem of a config file, with JSON path and line:column.

What ``mcpctl validate`` and CI use. Beyond the pydantic model of record
(:mod:`mcpctl.config.schema`) it catches what a plain JSON load hides or a model cannot see:
duplicate keys, literal secrets, plain-http URLs, placeholders that will not expand and
commands that are not installed.
"""

from __future__ import annotations

import ipaddress
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mcpctl.config.checks import (
    check_name,
    transport_field_issues,
    unknown_field_message,
    wrapper_problem,
)
from mcpctl.config.jsontext import JsonPosError, PositionedJson, parse_with_positions
from mcpctl.config.model import (
    AUTH_FIELDS,
    AUTH_TYPES,
    ENTRY_FIELDS,
    SOURCE_FIELDS,
    TOOLS_FIELDS,
    Problem,
    format_path,
)
from mcpctl.config.placeholders import find_placeholders, near_misses
from mcpctl.config.redaction import literal_secrets, placeholder_hint

__all__ = ["ValidationReport", "entry_warnings", "validate_config", "validate_text"]

PathT = tuple[str | int, ...]


@dataclass
class ValidationReport:
    """Every problem found in one file, in document order."""

    path: Path
    problems: list[Problem] = field(default_factory=list)
    servers: int = 0

    @property
    def errors(self) -> list[Problem]:
        """Problems that make the file invalid."""
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        """Problems worth fixing that do not make the file invalid."""
        return [p for p in self.problems if p.severity == "warning"]

    @property
    def ok(self) -> bool:
        """True when there is no error (warnings allowed)."""
        return not self.errors

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``validate --format json``)."""
        return {
            "file": str(self.path),
            "valid": self.ok,
            "servers": self.servers,
            "errors": len(self.errors),
            "warnings": len(self.warnings),
            "problems": [p.to_dict() for p in self.problems],
        }


class _Collector:
    def __init__(self, doc: PositionedJson) -> None:
        self.doc = doc
        self.problems: list[Problem] = []

    def add(
        self,
        severity: str,
        code: str,
        path: PathT,
        message: str,
        *,
        hint: str | None = None,
        at_key: bool = False,
    ) -> None:
        pos = self.doc.position(path, prefer_key=at_key)
        line, column = pos if pos else (None, None)
        self.problems.append(
            Problem(severity, code, message, format_path(path), line, column, hint)  # type: ignore[arg-type]
        )


def _allowed_fields(loc: PathT) -> tuple[str, ...]:
    parent = [p for p in loc[:-1] if isinstance(p, str)]
    if parent and parent[-1] in AUTH_FIELDS:  # auth.<tag>.<field>
        return ("type", *AUTH_FIELDS[parent[-1]])
    if parent == ["tools"]:
        return TOOLS_FIELDS
    if parent == ["source"]:
        return SOURCE_FIELDS
    return ENTRY_FIELDS


def _model_problems(col: _Collector, name: str, value: Any) -> None:
    from pydantic import ValidationError

    from mcpctl.config.schema import ServerEntryModel

    try:
        ServerEntryModel.model_validate(value)
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            loc: PathT = tuple(err["loc"])
            if not loc and err["type"] == "value_error":
                continue  # cross-field rules: reported from the raw object by the caller
            # Discriminated unions put the tag in the location: auth.bearer.token.
            if len(loc) >= 2 and loc[0] == "auth" and loc[1] in AUTH_FIELDS:
                shown: PathT = ("auth", *loc[2:])
            else:
                shown = tuple(p for p in loc if p != "[key]")
            path = (name, *shown)
            kind = err["type"]
            msg = str(err["msg"]).removeprefix("Value error, ")
            if kind == "extra_forbidden":
                message = unknown_field_message(str(loc[-1]), _allowed_fields(loc))
                col.add("error", "unknown_field", path, message, at_key=True)
            elif kind == "missing":
                col.add("error", "missing_field", path, f"missing field {str(loc[-1])!r}")
            elif kind in ("union_tag_invalid", "union_tag_not_found"):
                allowed = ", ".join(AUTH_TYPES)
                col.add(
                    "error", "invalid_value", (*path, "type"), f"auth type must be one of {allowed}"
                )
            else:
                code = "wrong_type" if kind.endswith("_type") else "invalid_value"
                col.add("error", code, path, msg, at_key="[key]" in loc)


def _is_loopback(host: str) -> bool:
    if host in ("localhost", "localhost.localdomain") or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _strings(entry: dict[str, Any]) -> Iterable[tuple[PathT, str, str]]:
    """(relative path, value, key) of every string placeholders may appear in."""
    for key in ("command", "cwd", "url"):
        if isinstance(entry.get(key), str):
            yield (key,), entry[key], ""
    if isinstance(entry.get("args"), list):
        for i, arg in enumerate(entry["args"]):
            if isinstance(arg, str):
                yield ("args", i), arg, ""
    for section in ("env", "headers"):
        if isinstance(entry.get(section), dict):
            for key, value in entry[section].items():
                if isinstance(value, str):
                    yield (section, key), value, key
    auth = entry.get("auth")
    if isinstance(auth, dict):
        for key in ("token", "value", "password", "client_secret"):
            if isinstance(auth.get(key), str):
                yield ("auth", key), auth[key], key


def _extra_checks(
    col: _Collector, name: str, entry: dict[str, Any], base: Path, strict_commands: bool
) -> None:
    for rel, key in literal_secrets(entry):
        path = (name, *rel)
        col.add(
            "error", "plaintext_secret", path,
            f"{format_path(path)} looks like a literal secret; config files get "
            "committed and shared",
            hint=placeholder_hint(name, format_path(rel), key),
        )  # fmt: skip
    for rel, value, _ in _strings(entry):
        path = (name, *rel)
        for miss in near_misses(value):
            col.add(
                "warning", "unexpanded_placeholder", path,
                f"{miss!r} is not expanded: placeholders are ${{UPPER_SNAKE_CASE}}",
                hint="write ${NAME} or ${NAME:-default} with NAME in UPPER_SNAKE_CASE",
            )  # fmt: skip
    url = entry.get("url")
    if isinstance(url, str) and not find_placeholders(url) and _plain_http_to_another_host(url):
        col.add(
            "warning", "insecure_url", (name, "url"),
            "plain http to a non-loopback host sends headers and tokens unencrypted",
            hint="use https://",
        )  # fmt: skip
    command = entry.get("command")
    if isinstance(command, str) and command.strip() and not find_placeholders(command):
        _check_command(col, name, entry, command, base, strict_commands)


def _plain_http_to_another_host(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False  # not a URL at all: the model check reports it
    return parts.scheme == "http" and not _is_loopback(parts.hostname or "")


def _check_command(
    col: _Collector, name: str, entry: dict[str, Any], command: str, base: Path, strict: bool
) -> None:
    cwd = entry.get("cwd")
    where = base
    if isinstance(cwd, str) and not find_placeholders(cwd):
        where = base / Path(cwd).expanduser()
    if os.sep in command:
        candidate = where / Path(command).expanduser()
        found = candidate.is_file() and os.access(candidate, os.X_OK)
    else:
        found = shutil.which(command) is not None
    if not found:
        col.add(
            "error" if strict else "warning", "command_not_found", (name, "command"),
            f"command {command!r} is not installed here (not found on PATH)",
            hint=_install_hint(command),
        )  # fmt: skip


def _install_hint(command: str) -> str:
    hints = {
        "npx": "install Node.js (it provides npx): https://nodejs.org",
        "node": "install Node.js: https://nodejs.org",
        "uvx": "install uv (it provides uvx): pip install uv",
        "uv": "install uv: pip install uv",
        "docker": "install Docker, or use the server's npm/pypi package instead",
    }
    return hints.get(
        Path(command).name, "install it, or fix the path; --strict-commands makes this an error"
    )


def entry_warnings(name: str, data: dict[str, Any], *, base: Path) -> list[str]:
    """What ``validate`` would say about one new entry beyond the model (for ``add``)."""
    col = _Collector(PositionedJson(data))
    _extra_checks(col, name, data, base, strict_commands=False)
    return [p.message + (f" ({p.hint})" if p.hint else "") for p in col.problems]


def validate_text(
    text: str,
    *,
    path: Path,
    strict_commands: bool = False,
    base: Path | None = None,
    internal_names: Iterable[str] = (),
) -> ValidationReport:
    """Validate the text of a config file (no I/O except looking commands up on PATH).

    ``internal_names`` are the orchestrator's own servers: an entry with one of those names
    would be skipped at load time, so it is reported.
    """
    report = ValidationReport(path)
    try:
        doc = parse_with_positions(text.removeprefix("\ufeff"))
    except JsonPosError as exc:
        report.problems.append(
            Problem("error", "config_syntax", f"invalid JSON: {exc.msg}", "$", exc.line, exc.column)
        )
        return report
    col = _Collector(doc)
    if not isinstance(doc.value, dict):
        col.add("error", "config_syntax", (), "the top level must be a JSON object of servers")
        report.problems = col.problems
        return report
    for dup_path, pos, first in doc.duplicates:
        col.problems.append(
            Problem(
                "error",
                "duplicate_key",
                f"{format_path(dup_path)} is defined more than once (first at line {first[0]}); "
                "a JSON loader silently keeps only the last one",
                format_path(dup_path),
                pos[0],
                pos[1],
                "remove or rename one of them",
            )
        )
    base = base or path.parent
    internal = set(internal_names)
    wrapped = wrapper_problem(doc.value)
    if wrapped is not None:
        col.add("error", wrapped.code, (wrapped.path,), wrapped.message, hint=wrapped.hint,
                at_key=True)  # fmt: skip
    for name, value in doc.value.items():
        if name.startswith("$") or (wrapped is not None and name == wrapped.path):
            continue
        report.servers += 1
        if (why := check_name(name)) is not None:
            col.add("error", "invalid_name", (name,), why, at_key=True)
        if name in internal:
            col.add(
                "error", "internal_conflict", (name,),
                f"{name!r} is the name of an internal MCP; this entry would be skipped",
                hint="rename the external server", at_key=True,
            )  # fmt: skip
        if not isinstance(value, dict):
            col.add("error", "wrong_type", (name,), "a server entry must be a JSON object")
            continue
        _model_problems(col, name, value)
        for issue in transport_field_issues(value):
            col.add("error", issue.code, (name, *issue.path), issue.message)
        _extra_checks(col, name, value, base, strict_commands)
    report.problems = sorted(col.problems, key=lambda p: (p.line or 0, p.column or 0))
    return report


def validate_config(
    path: str | os.PathLike[str] | None = None,
    *,
    strict_commands: bool = False,
    internal_names: Iterable[str] = (),
) -> ValidationReport:
    """Validate a config file strictly (``path`` defaults as :class:`~mcpctl.paths.Paths` says).

    Never raises for a bad file: every problem, a missing or unreadable file included,
    is in the report.
    """
    if path is None:
        from mcpctl.paths import Paths

        path = Paths.from_env().config
    file = Path(path)
    try:
        raw = file.read_bytes()
    except FileNotFoundError:
        report = ValidationReport(file)
        report.problems.append(
            Problem(
                "error",
                "not_found",
                f"{file} does not exist",
                hint="create it with 'mcpctl add', or pass --config",
            )
        )
        return report
    except OSError as exc:
        report = ValidationReport(file)
        report.problems.append(Problem("error", "io_error", f"cannot read {file}: {exc.strerror}"))
        return report
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        report = ValidationReport(file)
        report.problems.append(
            Problem("error", "config_syntax", f"not UTF-8 text (byte {exc.start})")
        )
        return report
    return validate_text(
        text, path=file, strict_commands=strict_commands, internal_names=internal_names
    )

"""The strict validator: every problem of a config file, with JSON path and line:column.

What ``mcpctl validate`` and CI use. Beyond the pydantic model of record
(:mod:`mcpctl.config.schema`) it catches what a plain JSON load hides or a model cannot see:
duplicate keys, literal secrets, control characters, plain-http URLs, placeholders that will
not expand, a secret placeholder in ``args`` (where ``ps`` shows it to every user of the
machine), an environment handed over whole and commands that are not installed.

A report holds the first 1,000 problems in document order and counts the rest
(:mod:`mcpctl.config.validationreport`); line and column are worked out only for what is reported
(:mod:`mcpctl.config.jsonindex`), so a 100,000-entry file validates in seconds.
"""

from __future__ import annotations

import ipaddress
import os
import shutil
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from mcpctl.config.checks import (
    check_name,
    transport_field_issues,
    unknown_field_message,
    wrapper_problem,
)
from mcpctl.config.controlchars import (
    CHECKED_FIELDS,
    may_hold_controls,
    report_control_characters,
    written_path,
)
from mcpctl.config.jsonindex import index_document
from mcpctl.config.jsontext import JsonPosError, PositionedJson
from mcpctl.config.model import (
    AUTH_FIELDS,
    AUTH_TYPES,
    ENTRY_FIELDS,
    SOURCE_FIELDS,
    TOOLS_FIELDS,
    TRANSPORTS,
    Problem,
    format_path,
)
from mcpctl.config.placeholders import find_placeholders, near_misses
from mcpctl.config.redaction import (
    ENV_SECRET_NAME_RE,
    SECRET_KEY_RE,
    literal_secrets,
    named_literal_hint,
    named_literal_message,
    placeholder_hint,
)
from mcpctl.config.validationreport import MAX_PROBLEMS, ProblemCollector, ValidationReport

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = [
    "MAX_PROBLEMS",
    "ValidationReport",
    "entry_warnings",
    "validate_config",
    "validate_text",
]

PathT = tuple[str | int, ...]
#: Variables known to hold secrets, or a function giving them (called once, when needed).
SecretNames = Iterable[str] | Callable[[], Iterable[str]]


def _allowed_fields(loc: PathT) -> tuple[str, ...]:
    parent = [p for p in loc[:-1] if isinstance(p, str)]
    if parent and parent[-1] in AUTH_FIELDS:  # auth.<tag>.<field>
        return ("type", *AUTH_FIELDS[parent[-1]])
    if parent == ["tools"]:
        return TOOLS_FIELDS
    if parent == ["source"]:
        return SOURCE_FIELDS
    return ENTRY_FIELDS


@cache
def _model() -> tuple[Callable[[Any], object], type[ValidationError]]:
    # Imported when first needed: pydantic costs more than `add`'s whole budget.
    from pydantic import ValidationError

    from mcpctl.config.schema import ServerEntryModel

    return ServerEntryModel.model_validate, ValidationError


def _model_problems(col: ProblemCollector, name: str, value: Any) -> bool:
    """Report what the model of record rejects; whether it accepts the entry."""
    validate, invalid = _model()
    try:
        validate(value)
    except invalid as exc:
        for err in exc.errors(include_url=False):
            loc: PathT = written_path(value, tuple(err["loc"]))
            kind = err["type"]
            if not loc and kind == "value_error":
                continue  # cross-field rules: reported from the raw object by the caller
            if kind == "string_unicode" and (not loc or loc[0] in CHECKED_FIELDS):
                # A lone surrogate in a name or a key: reported as a control character, at
                # the right path (pydantic's location has it replaced).
                continue
            # Discriminated unions put the tag in the location: auth.bearer.token.
            if len(loc) >= 2 and loc[0] == "auth" and loc[1] in AUTH_FIELDS:
                shown: PathT = ("auth", *loc[2:])
            else:
                shown = tuple(p for p in loc if p != "[key]")
            path = (name, *shown)
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
        return False
    return True


def _is_loopback(host: str) -> bool:
    if host in ("localhost", "localhost.localdomain") or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _with_dollar(entry: dict[str, Any]) -> list[tuple[PathT, str]]:
    """(relative path, value) of the strings placeholders are expanded in that hold a ``$``
    (the others cannot hold a near-miss)."""
    found: list[tuple[PathT, str]] = []
    for key in ("command", "cwd", "url"):
        value = entry.get(key)
        if isinstance(value, str) and "$" in value:
            found.append(((key,), value))
    args = entry.get("args")
    if isinstance(args, list):
        found += [(("args", i), a) for i, a in enumerate(args) if isinstance(a, str) and "$" in a]
    for section in ("env", "headers"):
        mapping = entry.get(section)
        if isinstance(mapping, dict):
            found += [
                ((section, k), v) for k, v in mapping.items() if isinstance(v, str) and "$" in v
            ]
    auth = entry.get("auth")
    if isinstance(auth, dict):
        for key in ("token", "value", "password", "client_secret"):
            value = auth.get(key)
            if isinstance(value, str) and "$" in value:
                found.append((("auth", key), value))
    return found


# --- beyond the model --------------------------------------------------------------------


class _Checks:
    """The checks beyond the model, for one run (it remembers which commands it found)."""

    def __init__(
        self,
        col: ProblemCollector,
        base: Path,
        strict_commands: bool,
        secret_names: SecretNames = (),
    ) -> None:
        self.col = col
        self.base = base
        self.strict = strict_commands
        self._secret_names = secret_names
        self._known: frozenset[str] | None = None  # asked for once, and only if needed
        self.found: dict[tuple[str, str], bool] = {}  # (directory, command): installed

    def entry(self, name: str, entry: dict[str, Any]) -> None:
        col = self.col
        for found in literal_secrets(entry):
            path = (name, *found.path)
            if found.by_name:
                section, key = found.path
                value = str(entry[str(section)][key])
                col.add(
                    "error", "named_literal_secret", path,
                    named_literal_message(format_path(path), found),
                    hint=named_literal_hint(name, str(section), found.key, value, in_file=True),
                )  # fmt: skip
                continue
            col.add(
                "error", "plaintext_secret", path,
                f"{format_path(path)} looks like a literal secret; config files get "
                "committed and shared",
                hint=placeholder_hint(name, format_path(found.path), found.key),
            )  # fmt: skip
        for rel, value in _with_dollar(entry):
            col.add_each(
                "warning", "unexpanded_placeholder", (name, *rel), near_misses(value),
                lambda miss: f"{miss!r} is not expanded: placeholders are ${{UPPER_SNAKE_CASE}}",
                hint="write ${NAME} or ${NAME:-default} with NAME in UPPER_SNAKE_CASE",
            )  # fmt: skip
        if _is_stdio(entry):  # elsewhere inherit_env is an error of its own
            self.inherit_env(name, entry.get("inherit_env"))
            self.secret_args(name, entry.get("args"))
        url = entry.get("url")
        if isinstance(url, str) and not find_placeholders(url) and _plain_http_elsewhere(url):
            col.add(
                "warning", "insecure_url", (name, "url"),
                "plain http to a non-loopback host sends headers and tokens unencrypted",
                hint="use https://",
            )  # fmt: skip
        command = entry.get("command")
        if isinstance(command, str) and command.strip() and not find_placeholders(command):
            self.command(name, entry, command)

    def inherit_env(self, name: str, value: object) -> None:
        if value is True:
            self.col.add(
                "warning", "inherit_env_all", (name, "inherit_env"),
                "inherit_env is true: the server sees every environment variable mcpctl runs "
                "with, secrets included",
                hint='list only the variables it needs: "inherit_env": ["NAME", ...]',
            )  # fmt: skip
        elif isinstance(value, list):
            for i, var in enumerate(value):
                if isinstance(var, str) and ENV_SECRET_NAME_RE.search(var):
                    self.col.add(
                        "warning", "inherit_env_secret", (name, "inherit_env", i),
                        f"{var!r} looks like a secret: its value will reach the server, which "
                        "may be intended",
                        hint="keep it if the server needs it; otherwise take it out of "
                        "inherit_env",
                    )  # fmt: skip

    def secret_args(self, name: str, args: object) -> None:
        """A secret's placeholder in ``args``: resolved, it sits on the server's command line."""
        for i, arg in enumerate(args if isinstance(args, list) else ()):
            found = find_placeholders(arg) if isinstance(arg, str) else []
            for var in dict.fromkeys(p.name for p in found):
                if self.secret(var):
                    self.col.add(
                        "warning", "secret_args", (name, "args", i),
                        f"${{{var}}} is a secret on the server's command line, where every "
                        "user of this machine can read it (ps, /proc)",
                        hint=f'pass it in "env" instead ("{var}": "${{{var}}}") if the server '
                        "reads it from its environment",
                    )  # fmt: skip

    def secret(self, var: str) -> bool:
        """Whether ``var`` holds a secret: named like one, or a name the caller knows."""
        if SECRET_KEY_RE.search(var):
            return True
        if self._known is None:
            names = self._secret_names
            self._known = frozenset(names() if callable(names) else names)
        return var in self._known

    def command(self, name: str, entry: dict[str, Any], command: str) -> None:
        cwd = entry.get("cwd")
        relative = os.sep in command
        if relative and isinstance(cwd, str) and not find_placeholders(cwd):
            key = (str(self.base / Path(cwd).expanduser()), command)
        else:
            key = (str(self.base) if relative else "", command)
        if key not in self.found:
            if relative:
                candidate = Path(key[0]) / Path(command).expanduser()
                self.found[key] = candidate.is_file() and os.access(candidate, os.X_OK)
            else:
                self.found[key] = shutil.which(command) is not None
        if not self.found[key]:
            self.col.add(
                "error" if self.strict else "warning", "command_not_found", (name, "command"),
                f"command {command!r} is not installed here (not found on PATH)",
                hint=_install_hint(command),
            )  # fmt: skip


def _is_stdio(entry: dict[str, Any]) -> bool:
    transport = entry.get("transport")
    if transport is None:
        return "url" not in entry
    spec = TRANSPORTS.get(transport) if isinstance(transport, str) else None
    return spec is not None and not spec.remote


def _plain_http_elsewhere(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False  # not a URL at all: the model check reports it
    return parts.scheme == "http" and not _is_loopback(parts.hostname or "")


def _install_hint(command: str) -> str:
    from mcpctl.config.runtimes import install_hint

    return install_hint(
        command, "install it, or fix the path; --strict-commands makes this an error"
    )


def entry_warnings(
    name: str, data: dict[str, Any], *, base: Path, secret_names: SecretNames = ()
) -> list[str]:
    """What ``validate`` would say about one new entry beyond the model (for ``add``);
    ``secret_names`` as for :func:`validate_text`."""
    col = ProblemCollector(PositionedJson(data))
    _Checks(col, base, strict_commands=False, secret_names=secret_names).entry(name, data)
    return [p.message + (f" ({p.hint})" if p.hint else "") for p in col.problems()]


def validate_text(
    text: str,
    *,
    path: Path,
    strict_commands: bool = False,
    base: Path | None = None,
    internal_names: Iterable[str] = (),
    secret_names: SecretNames = (),
) -> ValidationReport:
    """Validate the text of a config file (no I/O except looking commands up on PATH).

    ``internal_names`` are the orchestrator's own servers: an entry with one of those names
    would be skipped at load time, so it is reported. ``secret_names`` are variables known to
    hold secrets (the keyring's, :meth:`mcpctl.auth.SecretStore.names`), besides those named
    like one (``*_TOKEN``, ``*_KEY``, ``*SECRET*``, ``*PASSWORD*``...): in ``args`` they are
    reported. It may be a function, called only if a placeholder in ``args`` is not named
    like a secret.
    """
    report = ValidationReport(path)
    try:
        doc = index_document(text.removeprefix("\ufeff"))
    except JsonPosError as exc:
        report.problems.append(
            Problem("error", "config_syntax", f"invalid JSON: {exc.msg}", "$", exc.line, exc.column)
        )
        return report
    col = ProblemCollector(doc)
    if not isinstance(doc.value, dict):
        col.add("error", "config_syntax", (), "the top level must be a JSON object of servers")
        return col.fill(report)
    for dup_path, pos, first in doc.duplicates:
        col.keep(
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
    checks = _Checks(col, base or path.parent, strict_commands, secret_names)
    controls = may_hold_controls(text)  # one scan: the usual file has none anywhere
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
        if controls:
            report_control_characters(col, name, value, doc.member_text(name))
        if not isinstance(value, dict):
            col.add("error", "wrong_type", (name,), "a server entry must be a JSON object")
            continue
        if not _model_problems(col, name, value):
            # The model checks these rules too, but reports them only when every field is
            # right, and without a path: they come from the raw object. An entry the model
            # accepts breaks none of them.
            for issue in transport_field_issues(value):
                col.add("error", issue.code, (name, *issue.path), issue.message)
        checks.entry(name, value)
    return col.fill(report)


def validate_config(
    path: str | os.PathLike[str] | None = None,
    *,
    strict_commands: bool = False,
    internal_names: Iterable[str] = (),
    secret_names: SecretNames = (),
) -> ValidationReport:
    """Validate a config file strictly (``path`` defaults as :class:`~mcpctl.paths.Paths` says);
    ``internal_names`` and ``secret_names`` as for :func:`validate_text`.

    Never raises for a bad file: every problem, a missing or unreadable file included,
    is in the report.
    """
    if path is None:
        from mcpctl.paths import Paths

        path = Paths.from_env().config
    file = Path(path)
    from mcpctl.config.safefile import read_file
    from mcpctl.errors import ConfigError, StorageError

    try:
        raw = read_file(file, error=ConfigError)
    except (ConfigError, StorageError) as exc:
        report = ValidationReport(file)
        report.problems.append(Problem("error", exc.code, exc.message, hint=exc.hint))
        return report
    if raw is None:
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
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        report = ValidationReport(file)
        report.problems.append(
            Problem("error", "config_syntax", f"not UTF-8 text (byte {exc.start})")
        )
        return report
    return validate_text(
        text, path=file, strict_commands=strict_commands, internal_names=internal_names,
        secret_names=secret_names,
    )  # fmt: skip

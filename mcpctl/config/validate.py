"""The strict validator: every problem of a config file, with JSON path and line:column.

What ``mcpctl validate`` and CI use. Beyond the pydantic model of record
(:mod:`mcpctl.config.schema`) it catches what a plain JSON load hides or a model cannot see:
duplicate keys, literal secrets, control characters, plain-http URLs, placeholders that will
not expand, a secret placeholder in ``args`` (where ``ps`` shows it to every user of the
machine), an environment handed over whole and commands that are not installed.

A report holds the first 1,000 problems in document order and counts the rest
(:mod:`mcpctl.config.validationreport`); line and column are worked out only for what is reported
(:mod:`mcpctl.config.jsonindex`), so a 100,000-entry file validates in seconds. The checks
of an entry beyond the model are :mod:`mcpctl.config.entrychecks` (:func:`entry_warnings`
is re-exported here).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
from mcpctl.config.entrychecks import EntryChecks, SecretNames, entry_warnings
from mcpctl.config.jsonindex import index_document
from mcpctl.config.jsontext import JsonPosError
from mcpctl.config.model import (
    AUTH_FIELDS,
    AUTH_TYPES,
    ENTRY_FIELDS,
    SOURCE_FIELDS,
    TOOLS_FIELDS,
    Problem,
    format_path,
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
    checks = EntryChecks(col, base or path.parent, strict_commands, secret_names)
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

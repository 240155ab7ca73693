"""Checking the file: validate and schema."""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path

import typer

from mcpctl.cli import output
from mcpctl.cli.common import MANIFEST_HELP
from mcpctl.cli.output import STATE, Lines
from mcpctl.config.model import Problem
from mcpctl.config.siblings import DEFAULT_MANIFEST_KEY
from mcpctl.errors import ExitCode, UsageError
from mcpctl.paths import Paths
from mcpctl.results import Result
from mcpctl.text import escape_controls

app = typer.Typer()


class Format(StrEnum):
    """Output formats of validate."""

    text = "text"
    json = "json"
    github = "github"
    sarif = "sarif"


def _shown_path(path: Path) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return rel if not rel.startswith("..") else str(path)


def _gh_escape(text: str, *, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def github_annotation(problem: Problem, file: str) -> str:
    """One GitHub Actions workflow command (``::error file=...,line=...::message``)."""
    props = [f"file={_gh_escape(file, prop=True)}"]
    if problem.line is not None:
        props.append(f"line={problem.line}")
        props.append(f"col={problem.column or 1}")
    props.append(f"title={_gh_escape('mcpctl ' + problem.code, prop=True)}")
    message = f"{problem.path}: {problem.message}"
    if problem.hint:
        message += f"\n{problem.hint}"
    return f"::{problem.severity} {','.join(props)}::{_gh_escape(message)}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


@app.command("validate")
def validate(
    fmt: Format = typer.Option(
        Format.text, "--format", help="text, json, github annotations, or sarif (SARIF 2.1.0)."
    ),
    strict_commands: bool = typer.Option(
        False, "--strict-commands", help="A command missing from PATH is an error, not a warning."
    ),
    internal_root: Path | None = typer.Option(
        None,
        "--internal-root",
        envvar="MCPCTL_INTERNAL_ROOT",
        metavar="DIR",
        help="Report entries named like an internal MCP found under DIR.",
    ),
    manifest_key: str = typer.Option(
        DEFAULT_MANIFEST_KEY, "--manifest-key", metavar="KEY", help=MANIFEST_HELP
    ),
) -> int:
    """Check the config strictly: every problem with its path and line:column.

    Finds invalid JSON, duplicate keys, unknown fields (with suggestions), bad names,
    non-http URLs, literal secrets, placeholders that will not expand and commands
    that are not installed. Warns about a secret's placeholder in args (named like one,
    or kept in the keyring): resolved, it is on the server's command line, which every
    user of the machine can read; env is the place for it. Exit 1 when there is an
    error; warnings do not fail.

    Examples:

      mcpctl validate

      mcpctl validate --config ci/external-mcps.json --format github --strict-commands

      mcpctl validate --format sarif > mcpctl.sarif
    """
    from mcpctl.config.validate import validate_config

    if fmt is Format.sarif and STATE.json:
        raise UsageError("--json and --format sarif are two formats: choose one")
    internal: list[str] = []
    if internal_root is not None:
        from mcpctl.config.siblings import discover_internal

        found, _ = discover_internal(internal_root, manifest_key)
        internal = list(found)
    from mcpctl.auth.secrets import stored_names

    path = Paths.from_env(STATE.config).config
    report = validate_config(
        path, strict_commands=strict_commands, internal_names=internal,
        secret_names=stored_names,  # the keyring is read only if a placeholder in args needs it
    )  # fmt: skip
    _note_trust(path)
    shown = _shown_path(report.path)
    exit_code = ExitCode.OK if report.ok else ExitCode.FAILED
    errors: list[dict[str, object]] = [dict(p.to_error()) for p in report.errors]
    # The paths are the problems' subjects: shown as they are, even when a server's name
    # looks like a token (hf_hub.env.HF_TOKEN) or equals a secret's value.
    paths = sorted({p.path for p in report.problems if p.path != "$"})
    if fmt is Format.sarif:
        from mcpctl.snapshot.sarif import artifact_uri, validation_sarif

        uri = artifact_uri(report.path)
        output.print_json(
            validation_sarif(report.problems, uri, omitted=report.omitted), keep=paths
        )
        return exit_code
    if STATE.json or fmt is Format.json:
        STATE.json = True
        result = Result("validate", report.to_dict(), errors=errors, exit_code=exit_code)
        return output.emit(result, keep=paths)
    lines: list[str] = []
    more = f"... and {_count(report.omitted, 'more problem')}"
    if fmt is Format.github:
        lines = [github_annotation(p, shown) for p in report.problems]
        if report.omitted:
            lines.append(f"::notice title=mcpctl::{more} (run mcpctl validate to see them)")
    else:
        for p in report.problems:
            lines.append(f"{p.location(shown)}: {p.severity}: {p.message} [{p.code}]")
            if p.hint:
                lines.append(f"  hint: {p.hint}")
        if report.omitted:
            lines.append(more)
    errors_n, warnings_n = report.error_count, report.warning_count
    if report.ok:
        summary = f"{shown}: valid ({_count(report.servers, 'server')}"
        summary += f", {_count(warnings_n, 'warning')})" if warnings_n else ")"
    else:
        summary = (
            f"{shown}: {_count(errors_n, 'error')}, "
            f"{_count(warnings_n, 'warning')} in {_count(report.servers, 'server')}"
        )
    if fmt is Format.text and not (STATE.quiet and report.ok):
        lines.append(summary)
    # The messages show odd characters escaped already; a file name may still hold some.
    shown_lines = [escape_controls(line) for line in lines]
    return output.emit(
        Result("validate", report.to_dict(), exit_code=exit_code),
        lambda _: Lines(shown_lines, keep=paths),
    )


def _note_trust(path: Path) -> None:
    """Say (a warning) when servers of the file wait for approval: validating runs nothing."""
    from mcpctl.config.loader import load_config
    from mcpctl.config.trust import TrustStore

    store = TrustStore.from_paths(Paths.from_env(STATE.config))
    if store.reason(path) is not None:
        return
    notice = store.check(path, load_config(path).config.entries).notice()
    if notice is not None:
        STATE.notices.append(notice)


@app.command("schema")
def schema() -> int:
    """Print the JSON Schema of external-mcps.json, for editors and CI.

    Point "$schema" at a saved copy to get completion and checking in your editor.

    Examples:

      mcpctl schema > external-mcps.schema.json
    """
    from mcpctl.config.schema import config_json_schema

    document = config_json_schema()
    if STATE.json:
        return output.emit(Result("schema", document))
    output.print_json(document)
    return 0

"""The shared input parsers of the CLI: durations (one meaning for every option)."""

from __future__ import annotations

from typing import Any

import pytest

from mcpctl.cli.app import build_command
from mcpctl.cli.flagvalues import duration_option, parse_duration
from mcpctl.errors import UsageError
from tests.conftest import Cli


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("30", 30.0), ("0.5", 0.5), (".5", 0.5), ("500ms", 0.5), ("2s", 2.0), ("1.5s", 1.5),
     ("1m", 60.0), ("1h", 3600.0), (" 10 s ", 10.0), ("250MS", 0.25)],
)  # fmt: skip
def test_a_bare_number_is_seconds_and_units_are_accepted(text: str, seconds: float) -> None:
    assert parse_duration(text) == (pytest.approx(seconds), None)


@pytest.mark.parametrize(
    ("text", "needle"),
    [("abc", "is not a duration"), ("", "is not a duration"), ("5 parsecs", "is not a duration"),
     ("1e3", "is not a duration"), ("nan", "is not a duration"), ("inf", "is not a duration"),
     ("-1", "must be more than zero"), ("-2s", "must be more than zero"),
     ("0", "must be more than zero"), ("0ms", "must be more than zero"),
     ("9" * 400, "is too long")],
)  # fmt: skip
def test_bad_durations_are_usage_errors(text: str, needle: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_duration(text, flag="--wait")
    assert caught.value.message.startswith(f"--wait {text!r} ") and needle in caught.value.message


def test_a_bare_number_that_looks_like_milliseconds_is_warned_about() -> None:
    assert parse_duration("600")[1] is None
    seconds, note = parse_duration("30000")
    assert seconds == 30000.0
    assert note is not None and "read as 30000 s" in note and "30000ms" in note
    assert parse_duration("30000ms") == (30.0, None)  # a unit says what was meant


def test_duration_option_collects_the_warning_and_has_a_default() -> None:
    warnings: list[str] = []
    assert duration_option(None, warnings, default=15.0) == 15.0
    assert duration_option("900", warnings, flag="--interval") == 900.0
    assert len(warnings) == 1 and warnings[0].startswith("--interval 900 is read as 900 s")


def _duration_options() -> list[tuple[list[str], str, int]]:
    """Every option of every command that takes a duration (its metavar is DURATION), with the
    number of required arguments of its command."""
    found: list[tuple[list[str], str, int]] = []

    def walk(command: Any, path: list[str]) -> None:
        for param in command.params:
            if param.param_type_name == "option" and param.metavar == "DURATION":
                required = [p for p in command.params if p.param_type_name == "argument"]
                found.append((path, param.opts[0], len([p for p in required if p.required])))
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])

    walk(build_command(), [])
    return found


DURATION_OPTIONS = _duration_options()


def test_every_timeout_option_takes_a_duration() -> None:
    # A --timeout (or --interval...) that is not a DURATION would escape the tests below.
    names = {(" ".join(path), opt) for path, opt, _ in DURATION_OPTIONS}
    assert ("add", "--timeout") in names and ("health", "--timeout") in names
    assert ("add", "--registry-timeout") in names and ("health", "--interval") in names

    def walk(command: Any, path: list[str]) -> None:
        for param in command.params:
            if any("timeout" in opt for opt in param.opts):
                assert param.metavar == "DURATION", (path, param.opts)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])

    walk(build_command(), [])


@pytest.mark.parametrize(("path", "option", "arguments"), DURATION_OPTIONS)
def test_every_duration_option_goes_through_the_shared_parser(
    cli: Cli, path: list[str], option: str, arguments: int
) -> None:
    for value, needle in (("abc", "is not a duration"), ("-1", "must be more than zero")):
        r = cli(*path, *["x"] * arguments, option, value)
        assert r.exit_code == 2, (path, option, value, r.stderr)
        assert f"error: {option} {value!r} {needle}" in r.stderr, r.stderr
        assert "Traceback" not in r.stderr


def test_every_duration_option_says_a_bare_number_is_seconds() -> None:
    def walk(command: Any) -> None:
        for param in command.params:
            if param.param_type_name == "option" and param.metavar == "DURATION":
                assert "a bare number is seconds" in " ".join((param.help or "").split()), (
                    command.name,
                    param.opts,
                )
        for sub in getattr(command, "commands", {}).values():
            walk(sub)

    walk(build_command())

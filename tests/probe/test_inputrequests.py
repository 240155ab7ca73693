"""Servers that ask for input mid-call, in both eras: answered, unanswered, bounded, declined."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.errors import InputRequiredError, UsageError
from mcpctl.probe.inputrequests import InputAnswer, InputField, InputRequest, answers_from, coerce
from mcpctl.probe.tools import call_tool
from tests.conftest import MCPCTL, REQUIRE_INTEGRATION, SERVERS, Cli, write_config

PY = sys.executable
MODERN = ServerEntry(command=PY, args=(str(SERVERS / "modern.py"), "input-required"))
ELICIT = ServerEntry(command=PY, args=(str(SERVERS / "legacy_modes.py"), "elicit"))
NEVER = ServerEntry(command=PY, args=(str(SERVERS / "modern.py"), "never-satisfied"))
GIVEN = {"colour": "red", "count": "2", "confirm": "yes"}
ERAS = pytest.mark.parametrize("entry", [MODERN, ELICIT], ids=["input_required", "elicitation"])


def call(entry: ServerEntry, tool: str = "ask", **kwargs: Any) -> Any:
    return anyio.run(lambda: call_tool("s", entry, tool, {}, timeout=60, **kwargs))


@ERAS
def test_a_form_is_answered_from_values_in_either_era(entry: ServerEntry) -> None:
    res = call(entry, answer=answers_from(GIVEN))
    assert not res.is_error and res.text == "colour=red count=2 confirm=True"


@ERAS
def test_an_unanswered_form_fails_listing_what_was_asked(entry: ServerEntry) -> None:
    for answer in (None, answers_from({"count": "2"})):  # nothing, or a required field missing
        with pytest.raises(InputRequiredError) as caught:
            call(entry, answer=answer)
        err = caught.value
        assert err.exit_code == 2 and err.code == "input_required"
        [asked] = err.requests
        assert asked["message"] == "Which colour?" and asked["mode"] == "form"
        fields = {f["name"]: f for f in asked["fields"]}
        assert fields["colour"] == {"name": "colour", "type": "string", "required": True,
                                    "choices": ["red", "green", "blue"]}  # fmt: skip
        assert fields["count"]["type"] == "integer" and fields["confirm"]["type"] == "boolean"
        assert "--input colour=VALUE" in (err.hint or "")


def test_an_answerer_of_ones_own_sees_the_request_and_may_decline() -> None:
    seen: list[InputRequest] = []

    async def answer(request: InputRequest) -> InputAnswer:
        seen.append(request)
        return InputAnswer("decline")

    res = call(MODERN, answer=answer)
    assert res.is_error and "decline" in res.text
    assert seen[0].fields[0] == InputField(
        "colour", "string", choices=("red", "green", "blue"), required=True
    )


def test_a_page_to_visit_is_never_answered_by_values() -> None:
    with pytest.raises(InputRequiredError) as caught:
        call(MODERN, "ask_url", answer=answers_from(GIVEN))
    assert caught.value.requests == [
        {"mode": "url", "message": "Open the page to continue", "url": "http://127.0.0.1:1/verify"}
    ]

    async def visited(request: InputRequest) -> InputAnswer:
        return InputAnswer("accept")

    assert call(MODERN, "ask_url", answer=visited).text == "done"


def test_rounds_are_bounded(tmp_path: Path) -> None:
    log = tmp_path / "log"
    never = ServerEntry(command=NEVER.command, args=NEVER.args, env={"MODERN_SERVER_LOG": str(log)})
    with pytest.raises(UsageError, match="kept asking for input: 10 rounds"):
        call(never, answer=answers_from(GIVEN))
    # The call, ten answers, and one more call telling the server cancel.
    assert log.read_text().split().count("tools/call") == 12


@pytest.mark.parametrize(
    ("field", "text", "value"),
    [
        (InputField("n", "integer"), "3", 3),
        (InputField("x", "number"), "2.5", 2.5),
        (InputField("b", "boolean"), "no", False),
        (InputField("b", "boolean"), "Y", True),
        (InputField("c", choices=("a", "b")), "b", "b"),
    ],
)
def test_values_are_typed_by_the_form(field: InputField, text: str, value: Any) -> None:
    assert coerce(field, text) == value


@pytest.mark.parametrize(
    ("field", "text"),
    [
        (InputField("n", "integer"), "3.5"),
        (InputField("n", "integer"), "true"),
        (InputField("b", "boolean"), "maybe"),
        (InputField("c", choices=("a", "b")), "z"),
    ],
)
def test_a_value_that_does_not_fit_is_a_usage_error(field: InputField, text: str) -> None:
    with pytest.raises(UsageError):
        coerce(field, text)


# --- the command line ------------------------------------------------------------------------


@pytest.fixture
def asking(config_path: Path) -> Path:
    return write_config(config_path, {"m": MODERN.to_data(), "e": ELICIT.to_data()})


@pytest.mark.parametrize("server", ["m", "e"])
def test_call_with_input(cli: Cli, asking: Path, server: str) -> None:
    r = cli("call", server, "ask", "--input", "colour=blue", "-i", "count=7")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.strip() == "colour=blue count=7"


@pytest.mark.parametrize("server", ["m", "e"])
def test_call_unanswered_exits_2_with_the_requests(cli: Cli, asking: Path, server: str) -> None:
    r = cli("call", server, "ask", "--json")
    assert r.exit_code == 2
    [error] = r.json["errors"]
    assert error["code"] == "input_required"
    assert [f["name"] for f in error["requests"][0]["fields"]] == ["colour", "count", "confirm"]
    plain = cli("call", server, "ask")
    assert plain.exit_code == 2 and "--input colour=VALUE" in plain.stderr


def test_call_with_an_input_out_of_choices(cli: Cli, asking: Path) -> None:
    r = cli("call", "m", "ask", "--input", "colour=pink")
    assert r.exit_code == 2 and "colour must be one of red, green, blue" in r.stderr
    bad = cli("call", "m", "ask", "--input", "colour")
    assert bad.exit_code == 2 and "FIELD=VALUE" in bad.stderr


@pytest.mark.slow
@pytest.mark.parametrize("server", ["m", "e"])
def test_a_person_at_a_terminal_is_asked_field_by_field(asking: Path, server: str) -> None:
    script = shutil.which("script")
    if script is None:
        if REQUIRE_INTEGRATION:
            pytest.fail("script (util-linux) is not installed: no terminal to test on")
        pytest.skip("script (util-linux) is not installed: no terminal to test on")
    argv = [*MCPCTL, "--config", str(asking), "call", server, "ask", "--input", "count=4"]
    env = {k: v for k, v in os.environ.items() if k != "CI"}  # a person, not CI
    done = subprocess.run(
        [script, "-qec", shlex.join(argv), "/dev/null"],
        input=b"pink\ngreen\n\n", env=env, capture_output=True, timeout=90,
    )  # fmt: skip
    out = done.stdout.decode("utf-8", "replace")
    assert done.returncode == 0, out
    assert "The server asks: Which colour?" in out
    assert "colour must be one of red, green, blue" in out  # asked again
    assert "colour=green count=4" in out  # --input answered count; confirm left empty

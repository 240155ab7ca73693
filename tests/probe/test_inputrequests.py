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


# --- what a server asked, read without a server ------------------------------------------------


def form_params(schema: Any, message: str = "Which colour?") -> Any:
    import mcp_types as types

    return types.ElicitRequestFormParams(message=message, requested_schema=schema)


def test_a_forms_fields_are_read_from_its_schema() -> None:
    from mcpctl.probe.inputrequests import request_of

    schema = {
        "type": "object",
        "properties": {
            "colour": {"type": "string", "title": "Colour", "description": "paint",
                       "enum": ["red", "green"], "default": "red"},
            "size": {"type": "string", "oneOf": [{"const": "s"}, "m", {"title": "no const"},
                                                  {"const": 2}]},
            "count": {"type": "integer"},
            "ratio": {"type": "number", "title": 3},
            "ok": {"type": "boolean", "description": ["not text"]},
            "odd": {"type": "array"},
            "loose": "not an object",
            "letters": {"enum": "abc"},
        },
        "required": ["colour", "count"],
    }  # fmt: skip
    asked = request_of("k7", form_params(schema))
    assert (asked.key, asked.mode, asked.message, asked.url) == (
        "k7",
        "form",
        "Which colour?",
        None,
    )
    assert asked.fields == (
        InputField("colour", "string", "Colour", "paint", ("red", "green"), True, "red"),
        InputField("size", choices=("s", "2")),
        InputField("count", "integer", required=True),
        InputField("ratio", "number"),
        InputField("ok", "boolean"),
        InputField("odd"),
        InputField("loose"),
        InputField("letters"),
    )


@pytest.mark.parametrize(
    "schema", [{"type": "object"}, {"type": "object", "properties": ["a"]}, None, "schema"]
)
def test_a_form_without_properties_asks_for_nothing(schema: Any) -> None:
    from types import SimpleNamespace

    from mcpctl.probe.inputrequests import request_of

    params = SimpleNamespace(message="Go on?", requested_schema=schema)  # as a server sent it
    assert request_of("1", params) == InputRequest("1", "form", "Go on?")


def test_a_page_to_visit_is_read_with_its_address() -> None:
    import mcp_types as types

    from mcpctl.probe.inputrequests import request_of

    params = types.ElicitRequestURLParams(
        message="Sign in", url="https://x.example/a", elicitation_id="e"
    )
    assert request_of("2", params) == InputRequest("2", "url", "Sign in", url="https://x.example/a")


def test_what_was_asked_in_json_and_on_one_line() -> None:
    colour = InputField("colour", "string", "Colour", None, ("red", "blue"), True, "red")
    count = InputField("count", "integer", description="how many")
    assert colour.to_dict() == {"name": "colour", "type": "string", "required": True,
                                "choices": ["red", "blue"], "title": "Colour", "default": "red"}  # fmt: skip
    assert count.to_dict() == {"name": "count", "type": "integer", "required": False,
                               "description": "how many"}  # fmt: skip
    assert colour.summary() == "colour (string, required: red|blue)"
    assert count.summary() == "count (integer)"
    form = InputRequest("1", "form", "Pick\none", (colour, count))
    assert form.to_dict() == {"mode": "form", "message": "Pick\none",
                              "fields": [colour.to_dict(), count.to_dict()]}  # fmt: skip
    assert form.summary() == '"Pick one": colour (string, required: red|blue), count (integer)'
    empty = InputRequest("2", "form", "")
    assert empty.summary() == "(no message): a confirmation, no fields (--input-accept accepts it)"
    assert empty.to_dict() == {"mode": "form", "message": "", "fields": []}
    page = InputRequest("3", "url", "Sign in", url="https://x.example/\x1b[2J")
    assert page.to_dict() == {
        "mode": "url",
        "message": "Sign in",
        "url": "https://x.example/\x1b[2J",
    }
    assert page.summary() == '"Sign in": a page to visit, https://x.example/\\x1b[2J'
    assert InputRequest("4", "url", "m").summary() == '"m": a page to visit, '


def test_long_text_is_cut_to_its_limit() -> None:
    from mcpctl.probe.inputrequests import shown

    assert shown("a  b\n\tc ", 10) == "a b c"
    assert shown("x" * 10, 10) == "x" * 10
    assert shown("x" * 11, 10) == "x" * 9 + "…"
    assert shown("bell\x07", 20) == "bell\\x07"
    long = InputRequest("1", "form", "m" * 300, (InputField("f" * 200),))
    assert long.summary() == '"' + "m" * 199 + '…": ' + "f" * 119 + "…"
    page = InputRequest("1", "url", "m", url="https://x.example/" + "p" * 300)
    url = "https://x.example/" + "p" * 300
    assert page.summary() == '"m": a page to visit, ' + url[:199] + "…"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://app.localhost:3000/x", True),
        ("http://127.8.0.1/x", True),
        ("http://localhostile.example/x", False),
        ("http://10.0.0.1/x", False),
        ("http://[::1/x", False),  # not a URL
        ("https://example.com/a b", False),
        ("https://example.com/\u200b", False),
        ("ftp://example.com/x", False),
        ("http:///x", False),
    ],
)
def test_which_pages_may_be_shown(url: str, shown: bool) -> None:
    from mcpctl.probe.inputrequests import visitable

    assert visitable(url) is shown


@pytest.mark.parametrize(
    ("field", "text", "value"),
    [
        (InputField("n", "integer"), "2.0", 2),
        (InputField("n", "integer"), "-4", -4),
        (InputField("x", "number"), "1e3", 1000.0),
        (InputField("x", "number"), "7", 7),
        (InputField("b", "boolean"), " TRUE ", True),
        (InputField("b", "boolean"), "yes", True),
        (InputField("b", "boolean"), "1", True),
        (InputField("b", "boolean"), "false", False),
        (InputField("b", "boolean"), "N", False),
        (InputField("b", "boolean"), "0", False),
        (InputField("s"), " as typed ", " as typed "),
    ],
)
def test_more_values_typed_by_the_form(field: InputField, text: str, value: Any) -> None:
    got = coerce(field, text)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize(
    ("field", "text", "message"),
    [
        (InputField("c", choices=("a", "b")), "z", "c must be one of a, b; got 'z'"),
        (InputField("b", "boolean"), "maybe", "b must be true or false; got 'maybe'"),
        (InputField("n", "number"), "many", "n must be a number; got 'many'"),
        (InputField("n", "number"), "true", "n must be a number; got 'true'"),
        (InputField("n", "number"), '"1"', "n must be a number; got '\"1\"'"),
        (InputField("n", "integer"), "1.5", "n must be an integer; got '1.5'"),
    ],
)
def test_what_a_value_that_does_not_fit_is_told(field: InputField, text: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        coerce(field, text)
    assert caught.value.message == message


def answer(answerer: Any, request: InputRequest) -> Any:
    return anyio.run(answerer, request)


COLOUR = InputField("colour", required=True)
COUNT = InputField("count", "integer")
FORM = InputRequest("1", "form", "Which?", (COLOUR, COUNT))


def test_values_fill_a_form_only_as_far_as_they_go() -> None:
    given = answers_from({"colour": "red", "count": "2"})
    assert answer(given, FORM) == InputAnswer("accept", {"colour": "red", "count": 2})
    assert answer(answers_from({"colour": "red"}), FORM) == InputAnswer("accept", {"colour": "red"})
    assert answer(answers_from({"count": "2"}), FORM) is None  # a required field missing
    optional = InputRequest("2", "form", "Any?", (COUNT,))
    assert answer(answers_from({}), optional) is None
    confirming = answers_from({}, confirm=True)
    assert answer(confirming, optional) == InputAnswer("accept", {})
    assert answer(confirming, InputRequest("3", "form", "Go on?")) == InputAnswer("accept", {})
    assert confirming.confirmed == 2
    assert answer(confirming, FORM) is None and confirming.confirmed == 2
    page = InputRequest("4", "url", "Sign in", url="https://x.example/")
    assert answer(answers_from({"colour": "red"}, confirm=True), page) is None
    from mcpctl.probe.inputrequests import Answers

    assert answer(Answers({}), optional) is None  # confirming only when told to


def test_a_value_named_like_a_field_of_the_form_is_refused_before_anything_is_sent() -> None:
    given = answers_from({"color": "red", "count": "2"})
    with pytest.raises(UsageError) as caught:
        answer(given, FORM)
    assert caught.value.message == (
        "--input color: the form the server sent has no field 'color' (did you mean 'colour'?)"
    )
    assert caught.value.hint == "--input colour=VALUE; its fields: colour, count"
    both = answers_from({"color": "red", "colour": "blue"})  # the field given too: no mistake
    assert answer(both, FORM) == InputAnswer("accept", {"colour": "blue"})


def test_values_no_form_asked_for_are_reported_after_the_call() -> None:
    given = answers_from({"colour": "red", "colr": "x", "zzz": "y"})
    answer(given, InputRequest("1", "form", "?", (COLOUR,)))
    answer(given, InputRequest("2", "form", "?", (COUNT, COLOUR)))
    assert list(given.asked) == ["colour", "count"]
    assert given.unused() == ["colr", "zzz"]
    with pytest.raises(UsageError) as caught:
        given.check_unused()
    assert caught.value.message == (
        "--input 'colr' (did you mean 'colour'?), 'zzz': no form asked for them, so they were "
        "not sent"
    )
    assert caught.value.hint == "the fields asked for: colour, count"
    alone = answers_from({"x": "1"})
    with pytest.raises(UsageError) as caught:
        alone.check_unused()
    assert caught.value.message == "--input 'x': no form asked for it, so it was not sent"
    assert caught.value.hint == "the server asked for no input: drop --input"
    answers_from({}).check_unused()


def test_a_value_for_a_field_of_the_form_is_never_taken_for_a_mistyped_one() -> None:
    cased = InputRequest("1", "form", "?", (InputField("Colour"), InputField("colour")))
    given = answers_from({"Colour": "red"})
    assert answer(given, cased) == InputAnswer("accept", {"Colour": "red"})

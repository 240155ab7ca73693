"""``mcpctl call`` and a server's questions, from the command line: piped, ``--json``, in CI
and on a real terminal (script(1)). What the SERVER received is read from the file
tests/servers/questions.py writes: ``accept`` only with the user's answer (typed, or given
with ``--input``/``--input-accept``), ``cancel`` when nobody was asked, ``decline`` when the
user said no or the page is one mcpctl will not show."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MCPCTL, SERVERS, Cli, need_program, write_config

ERAS = ("legacy", "modern", "tasks")


def entry(era: str, log: Path, **env: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVERS / "questions.py"), era],
            "env": {"QUESTIONS_LOG": str(log), **env}}  # fmt: skip


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "server.log"


@pytest.fixture
def asking(config_path: Path, log: Path) -> Path:
    return write_config(config_path, {era: entry(era, log) for era in ERAS})


def answers(log: Path) -> list[tuple[str, Any]]:
    """What the server received: (action, content) of each answer."""
    events = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return [(e.get("action") or f"error: {e.get('error')}", e.get("content"))
            for e in events if "answer" in e]  # fmt: skip


def terminal(
    config: Path, args: list[str], typed: str | None, *, ci: bool = False
) -> tuple[int, str]:
    """Exit code and output of ``mcpctl call ...`` on a real terminal, ``typed`` at it."""
    script = need_program("script", "util-linux: the terminal the prompts are tested on")
    argv = [*MCPCTL, "--config", str(config), "call", *args]
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm-256color"}
    env.pop("CI", None)
    if ci:
        env["CI"] = "true"
    done = subprocess.run(
        [script, "-qec", shlex.join(argv), "/dev/null"], env=env, capture_output=True,
        input=(typed or "").encode(), timeout=90,
    )  # fmt: skip
    out = done.stdout.decode("utf-8", "replace") + done.stderr.decode("utf-8", "replace")
    return done.returncode, " ".join(out.split())  # a line may wrap at the terminal's width


# --- nobody to ask: piped, --json, CI ------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("tool", ["confirm", "optional", "required"])
def test_piped_nobody_answers(cli: Cli, asking: Path, log: Path, era: str, tool: str) -> None:
    r = cli("call", era, tool)
    assert r.exit_code == 2, r.stderr
    assert "asks for input nobody gave; the server was told cancel" in r.stderr
    assert "note: asked: " in r.stderr  # each request, with its message and fields
    if tool == "confirm":
        assert '"Really delete every file of the project?": a confirmation, no fields' in r.stderr
        assert "--input-accept" in r.stderr
    if tool == "optional":
        assert "note (string), verbose (boolean)" in r.stderr
    assert answers(log) == [("cancel", None)]


@pytest.mark.parametrize("era", ERAS)
def test_json_lists_what_was_asked(cli: Cli, asking: Path, log: Path, era: str) -> None:
    r = cli("call", era, "required", "--json")
    assert r.exit_code == 2
    [error] = r.json["errors"]
    assert error["code"] == "input_required"
    [asked] = error["requests"]
    assert asked["message"] == "Which colour?"
    assert [(f["name"], f["required"]) for f in asked["fields"]] == [
        ("colour", True), ("count", False)]  # fmt: skip
    assert answers(log) == [("cancel", None)]


@pytest.mark.parametrize("era", ERAS)
def test_input_accept_answers_a_confirmation(cli: Cli, asking: Path, log: Path, era: str) -> None:
    r = cli("call", era, "confirm", "--input-accept")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.strip() == "accept {}"
    assert answers(log) == [("accept", {})]


def test_input_answers_an_optional_field(cli: Cli, asking: Path, log: Path) -> None:
    r = cli("call", "modern", "optional", "--input", "note=later", "--json")
    assert r.exit_code == 0
    assert r.json["data"]["text"] == 'accept {"note": "later"}'
    assert answers(log) == [("accept", {"note": "later"})]


def test_a_mistyped_input_is_refused_with_the_closest_field(
    cli: Cli, asking: Path, log: Path
) -> None:
    r = cli("call", "legacy", "required", "--input", "color=blue")
    assert r.exit_code == 2
    assert "--input color: the form the server sent has no field 'color' (did you mean " \
        "'colour'?)" in r.stderr  # fmt: skip
    assert "hint: --input colour=VALUE" in r.stderr
    assert answers(log) == [("cancel", None)]


def test_an_input_no_form_asked_for_fails_after_the_call(cli: Cli, asking: Path) -> None:
    r = cli("call", "modern", "required", "--input", "colour=red", "--input", "shade=dark")
    assert r.exit_code == 2
    assert r.stdout.strip() == 'accept {"colour": "red"}'  # the call's result is kept
    assert "error: --input 'shade': no form asked for it, so it was not sent" in r.stderr
    r = cli("call", "modern", "confirm", "--input-accept", "-i", "x=1", "--json")
    assert r.exit_code == 2 and r.json["data"]["text"] == "accept {}"
    [error] = r.json["errors"]
    assert error["code"] == "usage_error" and error["hint"] == (
        "the server asked for no input: drop --input")  # fmt: skip


@pytest.mark.parametrize("era", ERAS)
def test_a_server_that_keeps_asking_is_stopped(cli: Cli, asking: Path, log: Path, era: str) -> None:
    r = cli("call", era, "nag", "--input", "colour=red")
    assert r.exit_code == 2
    assert "nag kept asking for input: 10 rounds answered" in r.stderr
    actions = [a for a, _ in answers(log)]
    assert actions[:10] == ["accept"] * 10 and set(actions[10:]) == {"cancel"}


@pytest.mark.parametrize(
    "url", ["javascript:alert(1)", "file:///etc/passwd", "http://example.com/"]
)
def test_a_page_at_an_unsafe_address_is_declined(
    cli: Cli, asking: Path, log: Path, url: str
) -> None:
    r = cli("call", "legacy", "visit", "--arg", f"url={url}")
    assert r.exit_code == 1  # the server's error result: it was declined
    assert f'the server asked to open "{url}", which mcpctl declined' in r.stderr
    assert answers(log) == [("decline", None)]


def test_a_probe_never_accepts(cli: Cli, config_path: Path, log: Path) -> None:
    write_config(config_path, {"q": entry("legacy", log, QUESTIONS_ASK_ON_LIST="1")})
    for command in (["health", "q"], ["tools", "q"]):
        r = cli(*command, "--json")
        assert r.exit_code == 0, r.stdout
    assert [a.startswith("error:") for a, _ in answers(log)] == [True, True]


# --- a person at a terminal ------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("tool", "typed", "told", "shown"),
    [
        ("confirm", "y\n", ("accept", {}), "Accept? [y/N]"),
        ("confirm", "n\n", ("decline", None), "Accept? [y/N]"),
        ("confirm", "\n", ("decline", None), "Really delete every file of the project?"),
        ("optional", "\n\n\n", ("decline", None), "Accept with every field left empty? [y/N]"),
        ("optional", "\n\ny\n", ("accept", {}), "Accept with every field left empty? [y/N]"),
        ("optional", "soon\n\n", ("accept", {"note": "soon"}), "Anything to add?"),
        ("required", "red\n\n", ("accept", {"colour": "red"}), "Which colour?"),
    ],
    ids=["yes", "no", "enter", "empty-no", "empty-yes", "one-field", "required"],
)
def test_a_person_answers_every_form(
    asking: Path, log: Path, tool: str, typed: str, told: tuple[str, Any], shown: str
) -> None:
    code, out = terminal(asking, ["legacy", tool], typed)
    assert shown in out, out
    assert answers(log) == [told], out
    assert code == (0 if told[0] == "accept" else 1), out


@pytest.mark.slow
@pytest.mark.parametrize("era", ["modern", "tasks"])
def test_a_person_answers_in_the_stateless_era(asking: Path, log: Path, era: str) -> None:
    code, out = terminal(asking, [era, "confirm"], "y\n")
    assert code == 0 and "accept {}" in out, out
    assert answers(log) == [("accept", {})]


@pytest.mark.slow
def test_a_page_is_shown_at_https_only(asking: Path, log: Path) -> None:
    code, out = terminal(asking, ["modern", "visit", "--arg", "url=https://example.com/v"], "\n")
    assert code == 0 and "https://example.com/v" in out and "Press Enter once done" in out, out
    code, out = terminal(asking, ["modern", "visit", "--arg", "url=javascript:alert(1)"], "\n")
    assert code == 1 and "which mcpctl declined" in out and "Press Enter" not in out, out
    assert answers(log) == [("accept", None), ("decline", None)]


@pytest.mark.slow
@pytest.mark.parametrize("how", ["ci", "json"])
def test_a_terminal_in_ci_or_with_json_asks_nobody(asking: Path, log: Path, how: str) -> None:
    args = ["legacy", "confirm", *(["--json"] if how == "json" else [])]
    code, out = terminal(asking, args, "y\n", ci=how == "ci")
    assert code == 2 and ("input_required" in out or "nobody gave" in out), out
    assert "Accept?" not in out
    assert answers(log) == [("cancel", None)]

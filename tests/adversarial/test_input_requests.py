"""What a server asks for mid-call, and what a task says while it runs, is untrusted text.

A real stateless-era server (tests/servers/modern.py) ends every message, field title,
description and URL of its input requests with escape sequences and a secret mcpctl resolved
for it; a real tasks server (tests/servers/tasks_server.py) ends its status messages the
same way. Whether the request is listed in an error (piped, JSON), asked for on a terminal
(script(1)), or shown in the spinner while a task runs: no raw control character reaches the
output, and the secret never does (the suite's fixture checks that nothing is left running).
"""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest

from tests.adversarial.test_terminal_escapes import SEQUENCES, on_a_terminal, raw_controls
from tests.conftest import SERVERS, Cli, write_config

EVIL = "\x1b[2J\x1b[6n\x1b]0;pwned\x07\x1b]8;;https://evil.example/\x1b\\x\x9b6n\u202e"
CANARY = f"canary{uuid.uuid4().hex}"


@pytest.fixture
def asking(config_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ASKING_CANARY", CANARY)
    suffix = EVIL + "${ASKING_CANARY}"
    return write_config(config_path, {
        "asks": {"command": sys.executable, "args": [str(SERVERS / "modern.py"),
                                                     "input-required"],
                 "env": {"MODERN_SERVER_SUFFIX": suffix}},
        "tasks": {"command": sys.executable, "args": [str(SERVERS / "tasks_server.py")],
                  "env": {"TASKS_SERVER_SUFFIX": suffix}},
    })  # fmt: skip


@pytest.mark.parametrize("json_out", [False, True], ids=["text", "json"])
def test_a_request_nobody_answers_is_listed_escaped(cli: Cli, asking: Path, json_out: bool) -> None:
    r = cli("call", "asks", "ask", *(["--json"] if json_out else []))
    assert r.exit_code == 2, r.stdout + r.stderr
    out = r.stdout + r.stderr
    assert raw_controls(out) == [] and CANARY not in out
    if json_out:
        [error] = r.json["errors"]
        shown = error["requests"][0]["message"]
        assert "\x1b[2J" in shown and "****" in shown  # the text kept (JSON-escaped), redacted
    else:
        assert 'note: asked: "Which colour?\\x1b[2J' in r.stderr  # each request, escaped


@pytest.mark.parametrize("json_out", [False, True], ids=["text", "json"])
def test_a_page_with_escapes_in_its_address_is_declined_escaped(
    cli: Cli, asking: Path, json_out: bool
) -> None:
    r = cli("call", "asks", "ask_url", *(["--json"] if json_out else []))
    assert r.exit_code == 1, r.stdout + r.stderr  # declined: the server's error result
    out = r.stdout + r.stderr
    assert raw_controls(out) == [] and CANARY not in out
    assert "which mcpctl declined" in out and "the user chose decline" in out


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "answers", "expected"),
    [
        (["call", "asks", "ask"], "red\n2\ny\n", "colour=red count=2 confirm=True"),
        (["call", "asks", "ask_url"], "\n", "which mcpctl declined"),
        (["call", "tasks", "slow_job", "--arg", "seconds=2"], "", "done after"),
    ],
    ids=["form", "url", "task"],
)
def test_a_terminal_is_never_driven_by_what_a_server_asks(
    asking: Path, args: list[str], answers: str, expected: str
) -> None:
    out = on_a_terminal(["--config", str(asking), *args], asking.parent, answers)
    assert expected in " ".join(out.split()), out[-2000:]  # a warning may wrap
    assert [s for s in SEQUENCES if s in out] == [], repr(out[-2000:])
    assert CANARY not in out and "Traceback" not in out

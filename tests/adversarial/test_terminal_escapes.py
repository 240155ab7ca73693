"""Text from outside (an MCP server, an HTTP registry) never drives the terminal.

A real MCP server (tests/servers/hostile.py) puts escape sequences in its name, version,
instructions, tool names, titles, descriptions, results, tool errors and its stderr before it
dies; a real registry on 127.0.0.1 (tests/registry/server.py) serves records with them in
every field; a lock file (a snapshot) holds it in server names, tool names and definitions.
Whatever command shows that text (health, tools, call, report in every format, discover,
show, registry sync, snapshot diff in every format), as a table, as plain text, as JSON or
SARIF, piped or on a terminal (script(1)), no ESC, CSI, OSC (titles, OSC 8 hyperlinks), DCS,
C1 control, BEL, backspace, bidi override or isolate, nor any invisible character -- zero
width (U+200B-U+200D, U+2060, U+FEFF), bidi mark (U+200E, U+200F, U+061C), line or paragraph
separator (U+2028, U+2029) -- reaches the output raw; JSON keeps the text, escaped.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adversarial.test_registry_untrusted import hostile
from tests.conftest import MCPCTL, REQUIRE_INTEGRATION, SERVERS, Cli, write_config
from tests.registry.server import Registry, make_record, running

HOSTILE_SERVER = str(SERVERS / "hostile.py")
# The invisible characters: zero width, bidi marks, line and paragraph separators.
INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u200e\u200f\u061c\u2028\u2029"
# Every control character, bidi control and invisible character; tab and newline are layout.
RAW = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069{INVISIBLE}]")
# What the hostile text sends; on a terminal rich styles with ESC sequences of its own.
SEQUENCES = ("\x1b[2J", "\x1b[6n", "\x1b]0;", "\x1b]8;;https://evil", "\x1bc", "\x1bP", "\x9b",
             "\x85", "\x07", "\x08", "\u202e", "\u2066", *INVISIBLE)  # fmt: skip
# Hostile text of a lock file's own (not what the server sends).
LOCKED = "\x1b]0;locked\x07\x1b[31m\u202e" + INVISIBLE


def raw_controls(text: str) -> list[str]:
    return sorted({repr(c) for c in RAW.findall(text)})


def strings(document: object) -> list[str]:
    """Every string of a JSON document, keys included."""
    if isinstance(document, str):
        return [document]
    if isinstance(document, dict):
        return [*document, *(t for v in document.values() for t in strings(v))]
    if isinstance(document, list):
        return [t for v in document for t in strings(v)]
    return []


def on_a_terminal(argv: list[str], cwd: Path, answers: str | None = None) -> str:
    """stdout + stderr of ``mcpctl argv`` run on a real terminal (script(1)); with
    ``answers``, typed at it by a person (not in CI: prompts and progress are shown)."""
    script = shutil.which("script")
    if script is None:
        message = "script (util-linux) is not installed: no terminal to test on"
        if REQUIRE_INTEGRATION:
            pytest.fail(message)
        pytest.skip(message)
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    if answers is not None:
        env.pop("CI", None)
    done = subprocess.run([script, "-qec", shlex.join([*MCPCTL, *argv]), "/dev/null"],
                          input=None if answers is None else answers.encode(), cwd=cwd, env=env,
                          capture_output=True, timeout=90)  # fmt: skip
    return done.stdout.decode("utf-8", "replace") + done.stderr.decode("utf-8", "replace")


# --- a hostile MCP server --------------------------------------------------------------


@pytest.fixture
def hostile_config(config_path: Path) -> Path:
    return write_config(config_path, {
        "hostile": {"command": sys.executable, "args": [HOSTILE_SERVER], "timeout": 20000},
        "dead": {"command": sys.executable, "args": [HOSTILE_SERVER, "--exit"]},
    })  # fmt: skip


SERVER_COMMANDS = [
    ["health"], ["health", "--json"], ["-v", "health", "hostile"], ["tools"], ["tools", "--json"],
    ["call", "hostile", "say"], ["call", "hostile", "say", "--json"], ["call", "hostile", "fail"],
    ["call", "hostile", "fail", "--json"], ["call", "dead", "say"], ["report", "--probe"],
    ["report", "--probe", "--json"], ["report", "--probe", "--format", "markdown"],
    ["report", "--probe", "--format", "json"], ["-v", "tools", "hostile"],
]  # fmt: skip


@pytest.mark.parametrize("args", SERVER_COMMANDS, ids=" ".join)
def test_server_text_reaches_no_pipe_raw(cli: Cli, hostile_config: Path, args: list[str]) -> None:
    r = cli(*args)
    assert r.exit_code in (0, 1, 3), r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    for stream in (r.stdout, r.stderr):
        assert raw_controls(stream) == [], stream[-2000:]
    if "--json" in args:
        assert "\\u001b" in json.dumps(r.json) and "\\u001b" in r.stdout  # kept, escaped
        assert "\\u200b" in r.stdout and "\\u2028" in r.stdout
        assert set(INVISIBLE) <= set("".join(strings(r.json)))  # the text, as it was
    elif args[0] == "tools":
        assert "\\x1b" in r.stdout, "the text is shown, as data"
        assert "pay\\u200bpal" in r.stdout


@pytest.mark.slow
@pytest.mark.parametrize("args", [["health"], ["tools"], ["report", "--probe"],
                                  ["call", "hostile", "fail"]], ids=" ".join)  # fmt: skip
def test_server_text_never_drives_a_terminal(hostile_config: Path, args: list[str]) -> None:
    out = on_a_terminal(["--config", str(hostile_config), *args], hostile_config.parent)
    assert [s for s in SEQUENCES if s in out] == [], repr(out[-2000:])
    assert "Traceback" not in out


# --- a hostile lock file ---------------------------------------------------------------


@pytest.fixture
def hostile_lock(cli: Cli, hostile_config: Path) -> Path:
    """A lock file of the hostile server, then tampered with: its tools changed in place
    (another description, with hostile text of its own), a server and a tool gone since,
    both named with hostile text."""
    lock = hostile_config.parent / "mcp-lock.json"
    r = cli("snapshot", "save", "--probe", "-o", str(lock))
    assert r.exit_code in (0, 1), r.stdout + r.stderr
    doc = json.loads(lock.read_text("utf-8"))
    [server] = [s for s in doc["mcps"] if s["name"] == "hostile"]
    for tool in server["probe"]["tools"]:
        tool["fingerprint"] = "sha256:" + "0" * 64
        tool["definition"]["description"] = "Was " + LOCKED
    gone = json.loads(json.dumps(server["probe"]["tools"][0]))
    gone["name"] = gone["definition"]["name"] = "gone" + LOCKED
    server["probe"]["tools"].append(gone)
    doc["mcps"].append({**server, "name": "removed" + LOCKED})
    lock.write_text(json.dumps(doc, ensure_ascii=False), "utf-8")
    return lock


LOCK_COMMANDS = [
    ["snapshot", "diff", "--probe"], ["snapshot", "diff", "--probe", "--json"],
    ["snapshot", "diff", "--probe", "--format", "json"],
    ["snapshot", "diff", "--probe", "--format", "sarif"], ["snapshot", "diff"],
    ["report", "--probe", "--snapshot"], ["report", "--probe", "--format", "markdown", "--snapshot"],
    ["report", "--probe", "--format", "json", "--snapshot"], ["report", "--snapshot"],
]  # fmt: skip


@pytest.mark.parametrize("args", LOCK_COMMANDS, ids=" ".join)
def test_lock_file_text_reaches_no_pipe_raw(cli: Cli, hostile_lock: Path, args: list[str]) -> None:
    argv = [*args, str(hostile_lock)] if args[-1] == "--snapshot" else [*args, "--against", str(hostile_lock)]  # fmt: skip
    r = cli(*argv)
    assert r.exit_code in (0, 1), r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    for stream in (r.stdout, r.stderr):
        assert raw_controls(stream) == [], stream[-2000:]
    if "json" in args or "--json" in args or "sarif" in args:
        found = strings(json.loads(r.stdout))
        assert any("removed" + LOCKED in text for text in found), "the lock file's text, kept"
        assert "\\u200b" in r.stdout and "\\u2029" in r.stdout  # escaped
    else:  # shown as data (markdown doubles the backslashes)
        assert re.search(r"removed\\+x1b\\?\]0;locked", r.stdout), r.stdout[-2000:]
        assert re.search(r"\\+u200b\\+u200c\\+u200d\\+u2060\\+ufeff", r.stdout)


@pytest.mark.slow
def test_lock_file_text_never_drives_a_terminal(hostile_lock: Path) -> None:
    for args in (["snapshot", "diff", "--probe", "--against"], ["report", "--probe", "--snapshot"]):
        argv = ["--config", str(hostile_lock.parent / "external-mcps.json"), *args]
        out = on_a_terminal([*argv, str(hostile_lock)], hostile_lock.parent)
        assert "removed" in out, out[-2000:]
        assert [s for s in SEQUENCES if s in out] == [], repr(out[-2000:])
        assert "Traceback" not in out


# --- a hostile HTTP registry -------------------------------------------------------------


@pytest.fixture
def evil_registry(cli: Cli) -> Iterator[str]:
    """A registry on 127.0.0.1 with hostile records, the only one besides builtin."""
    reg = Registry([hostile(), hostile("io.evil/sur", "\ud800"), make_record("io.evil/clean")])
    with running(reg) as url:
        assert cli("registry", "remove", "official").exit_code == 0
        r = cli("registry", "add", "evil", url)
        assert r.exit_code == 0, r.stdout + r.stderr
        yield url


REGISTRY_COMMANDS = [
    ["registry", "sync", "evil"], ["registry", "sync", "evil", "--json"], ["registry", "list"],
    ["discover", "evil"], ["discover", "evil", "--json"], ["discover", "--all-status"],
    ["show", "io.evil/everything2J"], ["show", "io.evil/everything2J", "--json"],
    ["show", "io.evil/sur", "--json"],
    ["add", "--from-registry", "io.evil/everything2J"],
    ["add", "--from-registry", "io.evil/everything2J", "--json"],
]  # fmt: skip


@pytest.mark.parametrize("args", REGISTRY_COMMANDS, ids=" ".join)
def test_registry_text_reaches_no_pipe_raw(cli: Cli, evil_registry: str, args: list[str]) -> None:
    r = cli(*args)
    assert r.exit_code in (0, 2), r.stdout + r.stderr  # 2: add refuses the record
    assert "Traceback" not in r.stderr
    for stream in (r.stdout, r.stderr):
        assert raw_controls(stream) == [], stream[-2000:]
    if "--json" in args:
        r.json  # noqa: B018 -- one JSON document


@pytest.mark.slow
def test_registry_text_never_drives_a_terminal(
    cli: Cli, evil_registry: str, isolated: Path
) -> None:
    for args in (["discover", "evil"], ["show", "io.evil/everything2J"]):
        out = on_a_terminal(args, isolated)
        assert "io.evil" in out, out[-2000:]
        assert [s for s in SEQUENCES if s in out] == [], repr(out[-2000:])

"""The request and reply of a TAB press, as each shell script speaks them."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest

from mcpctl.completion.protocol import answer, list_files, reply_text, split_line
from tests.completion.conftest import CONFIG
from tests.conftest import write_config

BREAKS = " \t\n\"'><=;|&(:"


@pytest.mark.parametrize(
    ("line", "words", "current", "raw"),
    [
        ("mcpctl ", ["mcpctl"], "", ""),
        ("mcpctl li", ["mcpctl"], "li", "li"),
        ("mcpctl  get   a", ["mcpctl", "get"], "a", "a"),
        (
            "mcpctl --config 'my dir/x.json' get ",
            ["mcpctl", "--config", "my dir/x.json", "get"],
            "",
            "",
        ),
        ('mcpctl --config "a\\"b" g', ["mcpctl", "--config", 'a"b'], "g", "g"),
        ("mcpctl --config my\\ di", ["mcpctl", "--config"], "my di", "my\\ di"),
        ("mcpctl --config 'unclosed", ["mcpctl", "--config"], "unclosed", "'unclosed"),
        ("", [], "", ""),
    ],
)
def test_split_line(line: str, words: list[str], current: str, raw: str) -> None:
    assert split_line(line) == (words, current, raw)


def bash(line: str) -> list[str]:
    return reply_text("bash", [BREAKS, line]).split("\n")[:-1]


def test_bash_reply() -> None:
    assert bash("mcpctl snapshot ") == ["", "save", "diff"]
    assert bash("FOO=1 mcpctl snapshot ") == ["", "save", "diff"]
    assert bash("./venv/bin/mcpctl snapshot d") == ["", "diff"]


def test_bash_cuts_what_readline_keeps() -> None:
    # Readline completes the text after the last word-break character ('=' and ':' here).
    assert bash("mcpctl add x --transport=s") == ["", "streamable-http", "sse"]
    assert bash("mcpctl add x --transport=") == ["", "streamable-http", "sse"]
    assert bash("mcpctl add x --transport s") == ["", "streamable-http", "sse"]
    assert reply_text("bash", [" \t\n", "mcpctl add x --transport=s"]).split() == [
        "--transport=streamable-http", "--transport=sse",
    ]  # fmt: skip


def test_bash_lists_files_itself(isolated: Path) -> None:
    (isolated / "backups").mkdir()
    (isolated / "backup.json").write_text("{}")
    (isolated / ".hidden").write_text("")
    (isolated / "with space.json").write_text("")
    assert bash("mcpctl undo --file back") == ["nospace", "backup.json", "backups/"]
    assert bash("mcpctl undo --file=back") == ["nospace", "backup.json", "backups/"]
    assert bash("mcpctl undo --file w") == ["", "with\\ space.json"]
    assert bash("mcpctl undo --file 'w") == ["", "with space.json"]  # readline quotes it
    assert bash("mcpctl undo --file .h") == ["", ".hidden"]
    assert bash("mcpctl validate --internal-root ") == ["nospace", "backups/"]
    assert bash("mcpctl undo --file backups/") == [""]


def test_list_files(isolated: Path) -> None:
    (isolated / "a").mkdir()
    (isolated / "a" / "x.json").write_text("")
    (isolated / "ab.txt").write_text("")
    assert list_files("a") == ["a/", "ab.txt"]
    assert list_files("a/") == ["a/x.json"]
    assert list_files("a", dirs_only=True) == ["a/"]
    assert list_files(f"{isolated}/a") == [f"{isolated}/a/", f"{isolated}/ab.txt"]
    assert list_files("nowhere/x") == []
    home = str(Path("~").expanduser())
    assert all(p.startswith("~/") for p in list_files("~/")) or home == "/"


def test_zsh_and_fish_replies(config_path: Path) -> None:
    write_config(config_path, CONFIG)
    zsh = reply_text("zsh", ["get", "t"]).splitlines()
    assert zsh == ["words", "time:What time it is"]
    fish = reply_text("fish", ["get", ""]).splitlines()
    assert fish == ["words", "time\tWhat time it is", "github", "files"]
    assert reply_text("zsh", [""]).splitlines()[1].startswith("add:Add a stdio server")


def test_zsh_and_fish_complete_files_themselves() -> None:
    assert reply_text("zsh", ["--config", "ex"]) == "files\n"
    assert reply_text("fish", ["undo", "--file=b"]) == "files --file=\n"
    assert reply_text("fish", ["validate", "--internal-root", ""]) == "dirs\n"


def test_zsh_escapes_colons(config_path: Path) -> None:
    from mcpctl.completion.toolcache import remember_tools
    from mcpctl.paths import Paths

    paths = Paths.from_env()
    write_config(config_path, {"s": {"command": "x"}})
    remember_tools(paths.cache_dir, paths.config, {"s": ["ns:tool", "back\\slash"]})
    assert reply_text("zsh", ["call", "s", ""]).splitlines()[1:] == ["ns\\:tool", "back\\\\slash"]
    assert reply_text("fish", ["call", "s", ""]).splitlines()[1:] == ["ns:tool", "back\\slash"]


def test_control_characters_never_reach_the_terminal(config_path: Path) -> None:
    from mcpctl.completion.toolcache import remember_tools
    from mcpctl.paths import Paths

    paths = Paths.from_env()
    write_config(config_path, {"s": {"command": "x", "description": "evil \x1b[2J here\nnext"}})
    remember_tools(paths.cache_dir, paths.config, {"s": ["ok", "bad\x1b[31m", "two\nlines"]})
    assert reply_text("fish", ["call", "s", ""]).splitlines() == ["words", "ok"]
    assert reply_text("fish", ["get", ""]).splitlines() == ["words", "s\tevil ?[2J here next"]


def run_answer(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    buffer = io.BytesIO()
    out = io.TextIOWrapper(buffer, encoding="utf-8")
    real = sys.stdout
    sys.stdout = out
    try:
        code = answer(args)
    finally:
        sys.stdout = real
    return code, buffer.getvalue().decode("utf-8", "surrogateescape"), capsys.readouterr().err


def test_answer(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_answer(["fish", "snapshot", ""], capsys)
    assert code == 0 and out.startswith("words\nsave\t") and err == ""


@pytest.mark.parametrize("args", [[], ["tcsh", "x"], ["bash", "only-one"], ["zsh"]])
def test_a_malformed_request_is_a_usage_error(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_answer(args, capsys)
    assert code == 2 and out == "" and err.startswith("usage: mcpctl __complete")


def test_a_failure_prints_nothing_unless_debugging(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("mcpctl.completion.engine.TREE_FILE", os.devnull)
    code, out, err = run_answer(["fish", ""], capsys)
    assert (code, out, err) == (1, "", "")
    monkeypatch.setenv("MCPCTL_DEBUG", "1")
    with pytest.raises(ValueError):
        run_answer(["fish", ""], capsys)


def test_file_names_that_are_not_utf8_go_back_byte_for_byte(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = os.fsdecode(b"caf\xe9.json")
    try:
        (isolated / name).write_text("")
    except (OSError, UnicodeError):
        pytest.skip("this file system takes only UTF-8 names")
    code, out, _ = run_answer(["bash", BREAKS, "mcpctl --config caf"], capsys)
    assert code == 0 and out.encode("utf-8", "surrogateescape") == b"\ncaf\\\xe9.json\n"

"""Client files built to break their parser: comments that made a pattern backtrack, a YAML
alias bomb, aliases that contain themselves, nesting 100,000 deep.

A cloned repository can plant any of them where ``import``, ``health --as`` and ``render
--install`` read a client's file (``.cursor/mcp.json``, ``.vscode/mcp.json``,
``.codex/config.toml``, ``.continue/mcpServers/*.yaml``). Each case runs mcpctl as a real
process, limited to 1 GiB of address space and timed: every one must end within its class's
deadline plus 1 s with a clear error naming the file (or, for a valid file, its work done),
never an ``internal error``, a hang or a full memory.

What ``render --install`` keeps of a JSON file with comments is here too: before, such a file
was refused; now the servers object alone is replaced and every comment outside it stays.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcpctl.render.readers import load_json
from tests.conftest import write_config

MEMORY = 1 << 30  # the address space a run may use: far more than mcpctl needs
# Seconds each class of file may take to be read and refused (a run of mcpctl included, on
# two loaded cores); a case passes within its class's deadline plus 1 s.
COMMENTS_DEADLINE = 5.0  # before: 10 s for 22 comments, twice that for each one more
ALIASES_DEADLINE = 5.0  # before: past 1.9 GB of memory
DEPTH_DEADLINE = 5.0
CONFIG = {"time": {"command": "echo", "args": ["hi"]}}


def limited() -> None:  # in the child, before mcpctl starts
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def run(work: Path, *args: str, deadline: float) -> tuple[subprocess.CompletedProcess[str], float]:
    """mcpctl ``args`` as a process of its own in ``work``; its result and how long it took."""
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "mcpctl", *args], cwd=work, env=dict(os.environ),
        capture_output=True, text=True, timeout=deadline + 60, preexec_fn=limited,
    )  # fmt: skip
    return done, time.monotonic() - start


def refused(
    done: subprocess.CompletedProcess[str], file: str, says: str, at: tuple[int, int] | None
) -> None:
    """A clear error (exit 2) naming ``file``, saying ``says`` and where (``at``: line and
    column, as ``FILE:L:C:`` or ``(line L, column C)``)."""
    out = done.stdout + done.stderr
    assert "internal error" not in out and "Traceback" not in out, out
    assert done.returncode == 2, (done.returncode, out)
    assert file in done.stderr and says in done.stderr, done.stderr
    if at is not None:
        line, column = at
        assert f":{line}:{column}:" in out or f"(line {line}, column {column})" in out, out


# --- JSON with comments ---------------------------------------------------------------------

# Each comment doubled the time of the old pattern (22 made a 114-byte file take seconds,
# 28 a minute). Each file is cut short, and the error says where: (the text, line and column).
COMMENTED = {
    "22 block comments": ('{"a":1,' + "/**/" * 22, (1, 96)),
    "28 block comments": ('{"a":1,' + "/**/" * 28, (1, 120)),
    "a line of 22 comments": ('{"a":1,' + "// " * 22, (1, 74)),
    "22 comment lines": ('{"a":1,\n' + "// \n" * 22, (24, 1)),
    "an unterminated comment": ('{"a":1, /*' + " /" * 5000, (1, 10011)),
}
# Linear time on a larger file: a megabyte of comments between values.
BIG = '{"mcpServers": {}, "x": [' + "1/**/," * (1 << 17) + "1 // the end\n]}"
JSON_WAYS = {
    "import": lambda f: ["import", "cursor", f],
    "health --as cursor": lambda f: ["health", "--as", "cursor", f],
    "health --as vscode": lambda f: ["health", "--as", "vscode", f],
    "render --install": lambda f: ["render", "cursor", "--install", "--scope", "project"],
}


@pytest.mark.parametrize("way", list(JSON_WAYS))
@pytest.mark.parametrize("case", [*COMMENTED, "a megabyte of comments"])
def test_comments_are_read_in_linear_time(
    isolated: Path, config_path: Path, case: str, way: str
) -> None:
    write_config(config_path, CONFIG)
    text, at = COMMENTED.get(case, (BIG, None))
    file = ".cursor/mcp.json" if way == "render --install" else "client.json"
    (isolated / file).parent.mkdir(exist_ok=True)
    (isolated / file).write_text(text)
    done, took = run(isolated, *JSON_WAYS[way](file), deadline=COMMENTS_DEADLINE)
    assert took < COMMENTS_DEADLINE + 1, f"{case} took {took:.1f} s"
    if case in COMMENTED:
        refused(done, file, "Expecting", at)
    else:
        out = done.stdout + done.stderr
        assert done.returncode == 0 and "internal error" not in out, out
    if way == "render --install" and case in COMMENTED:
        assert (isolated / file).read_text() == text, "a file refused is left as it was"


VSCODE = """\
// VS Code's MCP servers for this project
{
  /* the servers */
  "servers": {
    "theirs": {"type": "stdio", "command": "theirs"}, // their own
    "time": {"command": "old"},
  },
  // what VS Code asks for
  "inputs": [],
  "other": {"keep": [1, 2, 3,], /* as it is */ "n": 1e400},
}
// the end
"""


@pytest.mark.parametrize("scope_file", [("vscode", ".vscode/mcp.json"),
                                        ("cursor", ".cursor/mcp.json")])  # fmt: skip
def test_install_keeps_every_comment_outside_the_servers(
    isolated: Path, config_path: Path, scope_file: tuple[str, str]
) -> None:
    target, where = scope_file
    write_config(config_path, {**CONFIG, "key": {"command": "k", "env": {"K": "${KEY_TOKEN}"}}})
    path = isolated / where
    path.parent.mkdir()
    text = VSCODE if target == "vscode" else VSCODE.replace('"servers"', '"mcpServers"')
    path.write_text(text)
    done, took = run(isolated, "render", target, "--install", "--scope", "project",
                     deadline=COMMENTS_DEADLINE)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert took < COMMENTS_DEADLINE + 1
    new = path.read_text()
    section = "servers" if target == "vscode" else "mcpServers"
    start = text.index(f'"{section}"')
    end = text.index("// what VS Code")
    # Everything outside the servers object is byte for byte what it was, comments included
    # (VS Code's inputs are filled in: they come after the comment before them).
    assert new.startswith(text[: start + len(section) + 4])
    rest = text[end:] if target == "cursor" else text[text.index('"other"') :]
    assert new.endswith(rest), new
    for comment in ("// VS Code's MCP", "/* the servers */", "// what VS Code asks for",
                    "/* as it is */", "// the end"):  # fmt: skip
        assert new.count(comment) == 1, comment
    assert "1e400" in new and "[1, 2, 3,]" in new
    doc = load_json(new)  # the result parses
    assert set(doc[section]) == {"theirs", "time", "key"}
    assert doc[section]["theirs"] == {"type": "stdio", "command": "theirs"}
    assert doc[section]["time"]["command"] == "echo"
    if target == "vscode":
        assert [i["id"] for i in doc["inputs"]] == ["KEY_TOKEN"]
    # the comment inside the replaced part is said to be gone, and nothing else is lost
    assert "// their own" not in new and "the comments inside" in done.stderr
    again, _ = run(isolated, "render", target, "--install", "--scope", "project", "--check",
                   deadline=COMMENTS_DEADLINE)  # fmt: skip
    assert again.returncode == 0, again.stdout + again.stderr
    assert path.read_text() == new


# --- YAML aliases -----------------------------------------------------------------------------


def alias_bomb() -> str:
    """Eight anchors, each a list of ten aliases of the one before (the first of ten strings),
    in one server of a Continue file: 10^8 strings in under 450 bytes."""
    lines = ["mcpServers:", "  - name: lol", '    command: "echo"', '    args: &a ["lol","lol",'
             '"lol","lol","lol","lol","lol","lol","lol","lol"]']  # fmt: skip
    previous = "a"
    for anchor in "bcdefgh":
        lines.append(f"    x{anchor}: &{anchor} [" + ",".join([f"*{previous}"] * 10) + "]")
        previous = anchor
    lines.append(f"    env: {{X: *{previous}}}")
    return "\n".join(lines) + "\n"


YAML_FILES = {
    "an alias bomb": (alias_bomb(), "(an alias bomb)", None),
    "an alias of itself": ("mcpServers: &loop\n  - name: x\n    args: *loop\n",
                           "an alias refers to the value it is part of", (1, 13)),
}  # fmt: skip
YAML_WAYS = {
    "import": lambda f: ["import", "continue", f],
    "health --as continue": lambda f: ["health", "--as", "continue", f],
    "render --install": lambda f: ["render", "continue", "--install", "--scope", "project"],
}


def test_the_alias_bomb_is_the_one_described() -> None:
    text = alias_bomb()
    assert len(text.encode()) < 450 and text.count("&") == 8


@pytest.mark.parametrize("way", list(YAML_WAYS))
@pytest.mark.parametrize("case", list(YAML_FILES))
def test_yaml_aliases_cannot_blow_up(
    isolated: Path, config_path: Path, case: str, way: str
) -> None:
    write_config(config_path, CONFIG)
    text, says, at = YAML_FILES[case]
    folder = isolated / ".continue" / "mcpServers"
    folder.mkdir(parents=True)
    name = "mcpctl.yaml" if way == "render --install" else "planted.yaml"
    (folder / name).write_text(text)
    file = f".continue/mcpServers/{name}"
    done, took = run(isolated, *YAML_WAYS[way](file), deadline=ALIASES_DEADLINE)
    assert took < ALIASES_DEADLINE + 1, f"{case} took {took:.1f} s"
    shown = file if way != "render --install" else str(isolated / file)
    refused(done, shown, says, at)
    assert (folder / name).read_text() == text


def test_aliases_within_reason_are_read(isolated: Path, config_path: Path) -> None:
    write_config(config_path, {})
    path = isolated / "c.yaml"
    path.write_text(
        "common: &common {command: echo, env: {A: '1'}}\n"
        "mcpServers:\n  - {name: one, <<: *common}\n  - {name: two, <<: *common}\n"
    )
    done, _ = run(isolated, "import", "continue", "c.yaml", deadline=ALIASES_DEADLINE)
    assert done.returncode == 0, done.stderr
    data = json.loads(config_path.read_text())
    assert data["one"]["env"] == data["two"]["env"] == {"A": "1"}


# --- nesting --------------------------------------------------------------------------------------

# 100,000 levels overflow a parser's stack; 300 do not, and are over the one limit all the same.
NESTED = {  # the file, its text and where the error is (if the parser knows) for a depth
    "cursor": ("client.json", lambda n: '{"mcpServers": {}, "x": ' + "[" * n + "]" * n + "}",
               lambda n: (1, 225)),
    "codex": ("config.toml", lambda n: "x = " + "[" * n + "]" * n + "\n", lambda n: None),
    # libyaml stops at 1000 levels itself; under that, the limit is ours
    "continue": ("client.yaml", lambda n: "mcpServers: []\nx:\n  " + "- " * min(n, 900) + "x\n",
                 lambda n: (3, 2 * (min(n, 900) - 200) + 1)),
}  # fmt: skip
INSTALLED = {"cursor": ".cursor/mcp.json", "codex": ".codex/config.toml",
             "continue": ".continue/mcpServers/mcpctl.yaml"}  # fmt: skip


@pytest.mark.parametrize("way", ["import", "health --as", "render --install"])
@pytest.mark.parametrize("target", list(NESTED))
@pytest.mark.parametrize("depth", [300, 100_000])
def test_nesting_has_one_limit_on_every_path(
    isolated: Path, config_path: Path, target: str, way: str, depth: int
) -> None:
    write_config(config_path, CONFIG)
    name, make, where = NESTED[target]
    text, at = make(depth), where(depth)
    file = INSTALLED[target] if way == "render --install" else name
    (isolated / file).parent.mkdir(parents=True, exist_ok=True)
    (isolated / file).write_text(text)
    args = {
        "import": ["import", target, file],
        "health --as": ["health", "--as", target, file],
        "render --install": ["render", target, "--install", "--scope", "project"],
    }[way]
    done, took = run(isolated, *args, deadline=DEPTH_DEADLINE)
    assert took < DEPTH_DEADLINE + 1, f"{target} took {took:.1f} s"
    refused(done, file, "nested deeper than 200 levels", at)
    assert (isolated / file).read_text() == text

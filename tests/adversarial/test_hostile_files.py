"""Files from elsewhere: what a cloned repository or a pull request can put where mcpctl reads.

The config, a client's config file (``render --install``, ``import``), a lock file
(``snapshot diff --against``, ``render --pinned``, ``report --snapshot``) and a template
(``render --template``) may be a FIFO, a link to ``/dev/zero``, a sparse file of gigabytes,
not UTF-8, not JSON, nested 100,000 deep, hold a lone surrogate escape, repeat a key, or
(a lock file) hold values of the wrong type. Every one gets a clear error naming the file
(and the line and column, or the path of the bad value), never a hang, a full memory, an
``internal error`` or a client file rewritten with data lost.

The special-file cases run mcpctl as a real process, limited to 1 GiB of address space and a
generous deadline: if the refusal ever breaks, the case fails (a MemoryError, a timeout)
instead of hanging the suite or filling the machine's memory.
"""

from __future__ import annotations

import copy
import json
import os
import resource
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpctl.errors import McpctlError, UsageError
from mcpctl.snapshot.diff import diff_snapshots
from mcpctl.snapshot.files import load_snapshot
from mcpctl.snapshot.model import Snapshot
from mcpctl.snapshot.probing import pinned_tools
from mcpctl.snapshot.sarif import diff_sarif, snapshot_positions
from mcpctl.snapshot.startupreport import build_report, render_markdown, render_text
from tests.conftest import Cli, write_config

CONFIG = {"time": {"command": "echo", "args": ["hi"]}}
DEEP = '{"x": ' + "[" * 100_000 + "]" * 100_000 + "}"
MEMORY = 1 << 30  # the address space a run may use: far more than mcpctl needs
DEADLINE = 90  # seconds: a blocked read would wait for ever


def limited() -> None:  # in the child, before mcpctl starts
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def run(
    work: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """mcpctl ``args`` as a process of its own in ``work``, memory-limited, with a deadline."""
    full = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "mcpctl", *args], cwd=work, env=full, capture_output=True,
        text=True, timeout=DEADLINE, preexec_fn=limited,
    )  # fmt: skip


# Each way in: (the arguments, given the hostile file's path; the file's place, if fixed).
WAYS_IN: dict[str, tuple[Callable[[str], list[str]], str | None]] = {
    "--config": (lambda f: ["--config", f, "list"], None),
    "validate": (lambda f: ["--config", f, "validate"], None),
    "add": (lambda f: ["--config", f, "add", "new", "--", "echo"], None),
    "client file": (lambda f: ["render", "cursor", "--install", "--scope", "project"],
                    ".cursor/mcp.json"),
    "client file --check": (lambda f: ["render", "cursor", "--install", "--scope", "project",
                                       "--check"], ".cursor/mcp.json"),
    "--against": (lambda f: ["snapshot", "diff", "--against", f], None),
    "--pinned": (lambda f: ["render", "mcp-proxy", "--pinned", f], None),
    "--template": (lambda f: ["render", "mcp-proxy", "--template", f], None),
    "report --snapshot": (lambda f: ["report", "--snapshot", f], None),
    "import": (lambda f: ["import", "cursor", f], None),
    "-o": (lambda f: ["render", "mcp-proxy", "-o", f, "--check"], None),
}  # fmt: skip


def plant(work: Path, where: str | None, kind: str) -> str:
    """A hostile file of ``kind`` at ``where`` (relative to ``work``); its path as given."""
    path = work / (where or f"hostile-{kind}.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    else:  # a sparse file of 2 GiB: no disk space, minutes to read
        with path.open("wb") as file:
            file.truncate(2 << 30)
    return str(path.relative_to(work))


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "sparse"])
@pytest.mark.parametrize("way", list(WAYS_IN))
def test_special_and_huge_files_are_refused_before_reading(
    isolated: Path, config_path: Path, way: str, kind: str
) -> None:
    write_config(config_path, CONFIG)
    args, where = WAYS_IN[way]
    name = plant(isolated, where, kind)
    before = sorted(p.name for p in isolated.rglob("*"))
    r = run(isolated, *args(name))
    out = r.stdout + r.stderr
    # validate reports the file as a problem of the config (exit 1); the rest refuse (exit 2)
    assert r.returncode == (1 if way == "validate" else 2), (r.returncode, out)
    assert "internal error" not in out and "Traceback" not in out
    shown = name if where is None else str(isolated / where)
    if kind == "sparse":
        said = f"{shown} is 2 GiB, over the 16 MiB limit (MCPCTL_MAX_FILE_BYTES)"
    else:
        what = "a FIFO" if kind == "fifo" else "a character device"
        said = f"is {what}, not a regular file"
    assert said in out, out
    assert sorted(p.name for p in isolated.rglob("*")) == before  # nothing written beside


def test_the_limit_is_an_environment_variable(cli: Cli, config_path: Path) -> None:
    write_config(config_path, CONFIG)
    size = config_path.stat().st_size
    r = cli("list", env={"MCPCTL_MAX_FILE_BYTES": "10"})
    assert r.exit_code == 2
    assert f"is {size} bytes, over the 10 bytes limit (MCPCTL_MAX_FILE_BYTES)" in r.stderr
    assert cli("list", env={"MCPCTL_MAX_FILE_BYTES": str(size)}).exit_code == 0
    r = cli("list", env={"MCPCTL_MAX_FILE_BYTES": "lots"})
    assert r.exit_code == 2 and "MCPCTL_MAX_FILE_BYTES must be a positive number" in r.stderr


# --- render --install: duplicates, numbers --------------------------------------------------


@pytest.fixture
def client_file(isolated: Path, config_path: Path) -> Path:
    write_config(config_path, CONFIG)
    path = isolated / ".cursor" / "mcp.json"
    path.parent.mkdir()
    return path


INSTALL = ("render", "cursor", "--install", "--scope", "project")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"mcpServers": {"mine": {"command": "a"}},\n'
         ' "other": 1,\n "mcpServers": {"theirs": {"command": "b"}}}\n',
         "key mcpServers is written more than once (lines 1 and 3)"),
        ('{\n  "mcpServers": {\n    "mine": {"command": "a"},\n'
         '    "mine": {"command": "b"}\n  }\n}\n',
         "key mcpServers.mine is written more than once (lines 3 and 4)"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("mode", [(), ("--diff",)])
def test_install_refuses_a_client_file_with_duplicates(
    cli: Cli, client_file: Path, text: str, says: str, mode: tuple[str, ...]
) -> None:
    client_file.write_text(text)
    r = cli(*INSTALL, *mode)
    assert r.exit_code == 2, r.stderr
    assert f"{client_file}:" in r.stderr and says in r.stderr
    assert client_file.read_text() == text


def test_install_keeps_numbers_as_written(cli: Cli, client_file: Path) -> None:
    client_file.write_text(
        '{\n  "x": 1e400,\n  "y": [1.50, -0.0, 1E+2, 123456789012345678901234567890, 0.1],\n'
        '  "mcpServers": {}\n}\n'
    )
    r = cli(*INSTALL)
    assert r.exit_code == 0, r.stderr

    def strict(constant: str) -> None:
        raise AssertionError(f"{constant} is not JSON")

    text = client_file.read_text()
    data = json.loads(text, parse_constant=strict)
    assert '"x": 1e400' in text and "1.50," in text and "-0.0," in text and "1E+2," in text
    assert data["y"][3] == 123456789012345678901234567890 and "time" in data["mcpServers"]
    assert cli(*INSTALL, "--check").exit_code == 0  # and up to date now


# --- text that is not text, JSON that is not JSON ---------------------------------------------


SURROGATE = '{\n  "mcpServers": {},\n  "x": "ok \\ud800"\n}\n'
PAIR = '{"mcpServers": {}, "x": "\\ud83d\\ude00 \\\\ud800"}'  # a pair, an escaped backslash


def hostile(kind: str, lock: bool) -> bytes:
    if kind == "surrogate":
        text = SURROGATE.replace('"mcpServers": {}', '"mcps": []') if lock else SURROGATE
        return text.encode()
    if kind == "utf-8":
        return b'{\n  "mcps": [],\n  "x": "caf\xe9"\n}\n'
    return DEEP.encode()


# (the arguments; where the file goes; whether it is a lock file; what it says for each kind)
TEXT_WAYS: dict[str, tuple[tuple[str, ...], str, bool]] = {
    "client file": (INSTALL, ".cursor/mcp.json", False),
    "client file --diff": ((*INSTALL, "--diff"), ".cursor/mcp.json", False),
    "import": (("import", "cursor", "src.json"), "src.json", False),
    "--template": (("render", "mcp-proxy", "--template", "t.json"), "t.json", False),
    "--pinned": (("render", "mcp-proxy", "--pinned", "lock.json"), "lock.json", True),
    "--against": (("snapshot", "diff", "--against", "lock.json"), "lock.json", True),
    "--against sarif": (("snapshot", "diff", "--against", "lock.json", "--format", "sarif"),
                        "lock.json", True),
    "report --snapshot": (("report", "--snapshot", "lock.json"), "lock.json", True),
    "-o": (("render", "mcp-proxy", "-o", "out.json", "--diff"), "out.json", False),
}  # fmt: skip
WHERE = {"utf-8": (3, 12), "deep": (1, 207), "surrogate": (3, 12)}


def _text_cases() -> list[tuple[str, str]]:
    cases = []
    for way, (_, _, lock) in TEXT_WAYS.items():
        for kind in ("surrogate", "utf-8", "deep"):
            # A lone surrogate is kept in a lock file (a server may send one) and an import
            # (kept escaped; validate reports it); -o compares text, so only its encoding counts.
            if kind == "surrogate" and (lock or way == "import"):
                continue
            if way == "-o" and kind != "utf-8":
                continue
            cases.append((way, kind))
    return cases


@pytest.mark.parametrize(("way", "kind"), _text_cases())
def test_bad_text_is_a_usage_error_with_its_position(
    cli: Cli, isolated: Path, config_path: Path, way: str, kind: str
) -> None:
    args, where, lock = TEXT_WAYS[way]
    write_config(config_path, CONFIG)
    path = isolated / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(hostile(kind, lock))
    before = path.read_bytes()
    r = cli(*args)
    assert r.exit_code == 2, r.stdout + r.stderr
    assert "internal error" not in r.stderr
    line, column = WHERE[kind]
    assert where in r.stderr, r.stderr
    assert f":{line}:{column}:" in r.stderr or f"line {line}, column {column}" in r.stderr
    assert path.read_bytes() == before


@pytest.mark.parametrize("kind", ["surrogate", "utf-8", "deep"])
def test_the_config_says_where_too(cli: Cli, config_path: Path, kind: str) -> None:
    text = {"surrogate": '{"time": {"command": "echo", "args": ["\\ud800"]}}',
            "utf-8": '{"time": {"command": "caf\xe9"}}', "deep": DEEP}[kind]  # fmt: skip
    config_path.write_bytes(text.encode("latin-1"))
    r = cli("list")
    assert "internal error" not in r.stderr
    if kind == "surrogate":  # the config keeps it (validate reports it); list shows it escaped
        assert r.exit_code == 0 and "\\ud800" in r.stdout
    else:
        assert r.exit_code == 2 and "external-mcps.json:1:" in r.stderr, r.stderr


def test_surrogate_pairs_and_escaped_backslashes_are_fine(cli: Cli, client_file: Path) -> None:
    client_file.write_text(PAIR)
    assert cli(*INSTALL).exit_code == 0
    assert json.loads(client_file.read_text())["x"] == "\U0001f600 \\ud800"


# --- lock files of the wrong shape --------------------------------------------------------------


def _definition(name: str) -> dict[str, Any]:
    return {"name": name, "fingerprint": "sha256:" + "a" * 64,
            "definition": {"name": name, "inputSchema": {"type": "object"}}}  # fmt: skip


LOCK: dict[str, Any] = {
    "timestamp": "2026-01-01T00:00:00Z",
    "format": 1,
    "mcps": [
        {"name": "time", "type": "external", "transport": "stdio",
         "fingerprint": "sha256:" + "b" * 64, "fields": {"command": "sha256:c", "args": "sha256:d"},
         "probe": {"serverInfo": {"name": "t", "version": "1"}, "instructions": "sha256:e",
                   "protocol": {"era": "modern", "version": "2026-07-28"},
                   "tools": [_definition("now"), _definition("convert")],
                   "prompts": [_definition("greet")],
                   "resource_templates": [{"name": "memo", "fingerprint": "sha256:f",
                                           "definition": {"uriTemplate": "memo://{k}"}}]}},
        {"name": "gone", "type": "internal", "probe": {"error": "timeout"}},
    ],
}  # fmt: skip

ODD = st.sampled_from([True, False, None, 0, 1, -1.5, "", "x", [], [1], ["x"], {}, {"a": 1},
                       {"name": 1}, [{}], [None]])  # fmt: skip


def _paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [at]
    items = value.items() if isinstance(value, dict) else enumerate(value) \
        if isinstance(value, list) else ()  # fmt: skip
    for key, child in items:
        found += _paths(child, (*at, key))
    return found


@st.composite
def confused(draw: st.DrawFn) -> Any:
    """The lock file with one to three of its values replaced by a value of another type."""
    doc: Any = json.loads(json.dumps(LOCK))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(doc)))
        # A copy: the sampled values are shared, and one put inside another would nest in itself.
        odd = copy.deepcopy(draw(ODD))
        if not path:
            doc = odd
            continue
        parent = doc
        for part in path[:-1]:
            parent = parent[part]
        parent[path[-1]] = odd
        if not isinstance(doc, dict):
            break
    return doc


FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])  # fmt: skip


@FUZZ
@given(confused())
def test_type_confused_lock_files_are_refused_or_read(doc: Any) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "lock.json"
        path.write_text(json.dumps(doc))
        try:
            snap = load_snapshot(path)
        except UsageError as exc:
            assert exc.message.startswith(f"{path} is not"), exc.message
            return
        assert snap is not None
        good = Snapshot.from_data(LOCK)
        for old, new in ((snap, good), (good, snap)):
            changes = diff_snapshots(old, new)
            json.dumps(diff_sarif(changes, against_uri="lock.json",
                                  against_positions=snapshot_positions(path.read_text())))  # fmt: skip
            report = build_report({}, new, changes, since=old.timestamp)
            assert render_text(report) and render_markdown(report)
        pinned_tools(snap)
        json.dumps(snap.to_data())


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda d: d["mcps"][0].update(fields=True),
         "mcps[0].fields (server 'time'): expected an object, got true"),
        (lambda d: d["mcps"][0]["probe"].update(tools=1),
         "mcps[0].probe.tools (server 'time'): expected an array, got a number"),
        (lambda d: d["mcps"][0]["probe"]["tools"][0].update(definition="x"),
         "mcps[0].probe.tools[0].definition (server 'time'): expected an object, got a string"),
        (lambda d: d["mcps"][1].update(name="time"),
         "mcps[1] (server 'time'): a second record of this server"),
        (lambda d: d.update(timestamp=5), "timestamp: expected a string, got a number"),
    ],
)  # fmt: skip
@pytest.mark.parametrize(
    "command",
    [("snapshot", "diff", "--against", "lock.json"),
     ("snapshot", "diff", "--against", "lock.json", "--format", "sarif"),
     ("render", "mcp-proxy", "--pinned", "lock.json"),
     ("report", "--snapshot", "lock.json"),
     ("report", "--snapshot", "lock.json", "--json")],
)  # fmt: skip
def test_type_confused_lock_files_say_where_in_every_command(
    cli: Cli, isolated: Path, config_path: Path, change: Callable[[Any], None], says: str,
    command: tuple[str, ...],
) -> None:  # fmt: skip
    write_config(config_path, CONFIG)
    doc = json.loads(json.dumps(LOCK))
    change(doc)
    (isolated / "lock.json").write_text(json.dumps(doc, indent=2))
    r = cli(*command)
    assert r.exit_code == 2, r.stdout + r.stderr
    out = r.stdout + r.stderr
    assert f"lock.json is not a valid snapshot: {says}" in out.replace("\\'", "'"), out


def test_a_key_written_twice_in_a_lock_file_is_refused(cli: Cli, isolated: Path) -> None:
    (isolated / "lock.json").write_text('{"mcps": [],\n "mcps": [{"name": "x"}]}')
    r = cli("snapshot", "diff", "--against", "lock.json")
    assert r.exit_code == 2 and "key mcps is written more than once (lines 1 and 2)" in r.stderr


def test_every_refusal_is_an_mcpctl_error(isolated: Path) -> None:
    # The library raises the documented tree, not OSError or ValueError.
    from mcpctl.config.safefile import read_file

    os.mkfifo(isolated / "f")
    with pytest.raises(McpctlError, match="is a FIFO, not a regular file"):
        read_file(isolated / "f")
    assert read_file(isolated / "missing") is None


@pytest.mark.parametrize(
    "argv",
    [["render", "cursor", "-o", "out.json"], ["render", "cursor"],
     ["render", "claude-code", "--install", "--scope", "project"],
     ["snapshot", "save", "-o", "lock.json"], ["report"]],
)  # fmt: skip
def test_a_lone_surrogate_in_the_config_is_named_not_an_internal_error(
    cli: Cli, config_path: Path, isolated: Path, argv: list[str]
) -> None:
    config_path.write_text('{"s": {"command": "srv", "args": ["a\\ud800b"]}}')
    r = cli(*argv)
    assert r.exit_code == 2, r.stderr
    assert "s.args[0] holds a lone surrogate (\\ud800)" in r.stderr
    assert "internal error" not in r.stderr
    assert sorted(p.name for p in isolated.iterdir()) == ["external-mcps.json"]

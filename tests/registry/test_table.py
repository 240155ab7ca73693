"""discover's table on a terminal: names stay whole, the description gives way."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from mcpctl.cli import output
from tests.conftest import MCPCTL, Cli

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def check_table(text: str, names: list[str], width: int) -> list[str]:
    """The table's lines; every name is whole on one line and no line is too wide."""
    lines = [ANSI.sub("", line).rstrip() for line in text.replace("\r", "").splitlines()]
    lines = [line for line in lines if line]
    assert lines[0].startswith("NAME")
    assert all(len(line) <= width for line in lines), "\n".join(lines)
    for name in names:
        assert any(line.startswith(name + " ") or line == name for line in lines), (name, lines)
    return lines


@pytest.mark.parametrize("width", [52, 60, 80, 100, 140])
def test_discover_keeps_names_whole_on_a_narrow_terminal(
    cli: Cli, width: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["discover", "--registry", "builtin", "--offline"]
    names = [h["name"] for h in cli(*args, "--json").json["data"]["results"]]
    monkeypatch.setattr(output, "stdout_is_tty", lambda: True)
    r = cli(*args, env={"COLUMNS": str(width)})
    assert r.exit_code == 0, r.stderr
    lines = check_table(r.stdout, names, width)
    header = lines[0].split()
    if width >= 80:
        assert "DESCRIPTION" in header and "…" in r.stdout  # cut short, not wrapped
    if width == 140:
        assert header == ["NAME", "VERSION", "TRANSPORTS", "SECRETS", "REGISTRY", "DESCRIPTION"]
    assert len(lines) == len(names) + 1  # one line per server


def test_fit_table_cuts_the_description_then_drops_columns() -> None:
    from mcpctl.cli.registry import fit_table

    columns = ["NAME", "VERSION", "TRANSPORTS", "SECRETS", "REGISTRY", "DESCRIPTION"]
    rows = [["io.x/" + "n" * 40, "1.0.0", "stdio", "", "builtin", "word " * 30]]
    cols, fitted = fit_table(columns, rows, 300)  # 45+7+10+7+8 + 149 + 2*5 = 236
    assert cols == columns and fitted[0][-1] == ("word " * 30).strip()
    cols, fitted = fit_table(columns, rows, 120)
    assert cols == columns and fitted[0][-1] == "word " * 5 + "word wo…"  # 120-87-10 = 23 cells
    cols, fitted = fit_table(columns, rows, 90)
    assert cols == ["NAME", "TRANSPORTS", "SECRETS", "DESCRIPTION"]
    assert len(fitted[0][-1]) == 90 - 45 - 10 - 7 - 2 * 3
    cols, _ = fit_table(columns, rows, 60)
    assert cols == ["NAME"]
    assert fit_table(["NAME", "DESCRIPTION"], [["a", "x\ny\tz"]], 80) == (
        ["NAME", "DESCRIPTION"],
        [["a", "x y z"]],
    )


def test_discover_piped_keeps_every_column(cli: Cli) -> None:
    r = cli("discover", "--registry", "builtin", "--offline", env={"COLUMNS": "40"})
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    assert len(rows) >= 8 and all(len(row) == 6 for row in rows)
    assert max(len(row[5]) for row in rows) == 80  # the longest description, cut at 80


@pytest.mark.slow
@pytest.mark.parametrize("width", [60, 90])
def test_discover_in_a_real_terminal(width: int, tmp_path: Path) -> None:
    """mcpctl in a pseudo-terminal of ``width`` columns (its size, not COLUMNS)."""
    import fcntl
    import pty
    import select
    import struct
    import subprocess
    import termios

    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env.update(TERM="xterm", NO_COLOR="1")
    args = ["discover", "--registry", "builtin", "--offline"]
    plain = subprocess.run([*MCPCTL, *args, "--json"], env=env, capture_output=True, text=True,
                           timeout=60, cwd=tmp_path)  # fmt: skip
    names = [h["name"] for h in json.loads(plain.stdout)["data"]["results"]]
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, width, 0, 0))
    proc = subprocess.Popen([*MCPCTL, *args], stdin=slave, stdout=slave, stderr=slave, env=env,
                            cwd=tmp_path)  # fmt: skip
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # the terminal closed: the process is done
                    break
                if not data:
                    break
                chunks.append(data)
            elif proc.poll() is not None:
                break
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        os.close(master)
    check_table(b"".join(chunks).decode(), names, width)

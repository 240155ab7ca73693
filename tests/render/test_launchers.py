"""Whether a client's entry starts this mcpctl's launcher: the same program, not one of the
same name (tests/cli/test_health_as.py probes a fake one)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.render.clientfile import is_launcher

PY = sys.executable


def test_launchers_are_this_program_only(tmp_path: Path) -> None:
    ours = Path(PY).parent / "mcpctl"
    if not ours.exists():
        pytest.skip(f"no mcpctl program beside {PY}")
    env = {"PATH": f"{Path(PY).parent}:/usr/bin:/bin"}
    run = ("run", "brave", "--config", "c.json")
    assert is_launcher(ServerEntry(command="mcpctl", args=run), env)
    assert is_launcher(ServerEntry(command=str(ours), args=run), env)
    linked = tmp_path / "link" / "mcpctl"  # a symlink to it is it
    linked.parent.mkdir()
    linked.symlink_to(ours)
    assert is_launcher(ServerEntry(command=str(linked), args=run), env)
    assert is_launcher(ServerEntry(command=PY, args=("-m", "mcpctl", *run), cwd=str(tmp_path)))
    # Not a launcher: other arguments, other programs, a copy, another mcpctl package.
    assert not is_launcher(ServerEntry(command="mcpctl", args=("health",)), env)
    assert not is_launcher(ServerEntry(command="npx", args=run), env)
    assert not is_launcher(ServerEntry(command="mcpctl", args=run), {"PATH": "/nonexistent"})
    copy = tmp_path / "copy" / "mcpctl"
    copy.parent.mkdir()
    copy.write_bytes(ours.read_bytes())
    copy.chmod(0o755)
    assert not is_launcher(ServerEntry(command=str(copy), args=run), env)
    assert not is_launcher(ServerEntry(command="mcpctl", args=run), {"PATH": str(copy.parent)})
    other = ServerEntry(command=str(ours), args=run, env={"PYTHONPATH": str(tmp_path)})
    assert not is_launcher(other, env)
    (tmp_path / "mcpctl").mkdir()  # python -m mcpctl from here imports that one
    assert not is_launcher(ServerEntry(command=PY, args=("-m", "mcpctl", *run),
                                       cwd=str(tmp_path)))  # fmt: skip
    # The same interpreter file elsewhere is another environment (a virtual one is its folder).
    elsewhere = tmp_path / "elsewhere" / "python3"
    elsewhere.parent.mkdir()
    elsewhere.symlink_to(PY)
    assert not is_launcher(ServerEntry(command=str(elsewhere), args=("-m", "mcpctl", *run)))

"""Atomic writes: what the replaced file keeps."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from mcpctl.config.atomicwrite import atomic_write, write_private


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o444])
def test_a_replaced_file_keeps_its_permissions(tmp_path: Path, mode: int) -> None:
    (tmp_path / "d").mkdir()
    path = tmp_path / "d" / "c.json"
    path.write_bytes(b"old")
    path.chmod(mode)
    atomic_write(path, b"new")
    assert path.read_bytes() == b"new"
    assert stat.S_IMODE(path.stat().st_mode) == mode
    assert [p.name for p in path.parent.iterdir()] == ["c.json"]  # no temporary file left


def test_a_new_file_gets_the_umasks_mode_unless_one_is_given(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        atomic_write(tmp_path / "new.json", b"{}")
        write_private(tmp_path / "backup.json", b"{}")
        atomic_write(tmp_path / "given.json", b"{}", mode=0o604)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o640
    assert stat.S_IMODE((tmp_path / "backup.json").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "given.json").stat().st_mode) == 0o604
    # A given mode wins over the existing file's too.
    write_private(tmp_path / "new.json", b"[]")
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o600
    assert (tmp_path / "new.json").read_bytes() == b"[]"

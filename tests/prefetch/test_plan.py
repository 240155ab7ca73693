"""What ``mcpctl prefetch`` plans for each server, before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.prefetch.plan import Job, plan_jobs

NO_SUCH_USER = "~mcpctl-no-such-user"


def _program(entry: ServerEntry) -> str | None:
    jobs, skipped, _ = plan_jobs([("s", entry)], environ={"PATH": "/nonexistent"})
    assert skipped == [] and len(jobs) == 1 and isinstance(jobs[0], Job)
    return jobs[0].program


def test_a_runner_named_by_a_path_is_found_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As the server is started: no shell expands a "~", so the home folder's npx is not it.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for folder in (tmp_path / "home", tmp_path / "~", tmp_path / NO_SUCH_USER):
        folder.mkdir()
        (folder / "npx").write_text("#!/bin/sh\n")
    args = ("-y", "pkg@1")
    assert _program(ServerEntry(command="~/npx", args=args, cwd=str(tmp_path))) == str(
        tmp_path / "~" / "npx"
    )
    (tmp_path / "~" / "npx").unlink()
    assert _program(ServerEntry(command="~/npx", args=args, cwd=str(tmp_path))) is None
    # A user who does not exist is no error (Path.expanduser raises for one).
    found = _program(ServerEntry(command=f"{NO_SUCH_USER}/npx", args=args, cwd=str(tmp_path)))
    assert found == str(tmp_path / NO_SUCH_USER / "npx")

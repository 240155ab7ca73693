"""Fixtures of the doctor tests: fake programs as the whole PATH."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.doctor.fakes import FakeBin, make_fake_bin


@pytest.fixture
def fake_bin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeBin:
    """An empty directory of fake programs that is the whole PATH for the test."""
    fake = make_fake_bin(tmp_path)
    monkeypatch.setenv("PATH", str(fake.path))
    return fake

"""The golden-file helper (tests/golden.py): never regenerates under CI, shows a diff."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.golden import UPDATE_VAR, check_golden

TESTS = Path(__file__).resolve().parent


@pytest.fixture
def golden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv(UPDATE_VAR, raising=False)
    path = tmp_path / "golden.txt"
    path.write_text("one\ntwo\nthree\n", encoding="utf-8")
    return path


def test_the_same_text_passes(golden: Path) -> None:
    check_golden(golden, "one\ntwo\nthree\n")


def test_a_difference_fails_with_a_unified_diff(golden: Path) -> None:
    with pytest.raises(pytest.fail.Exception) as failed:
        check_golden(golden, "one\n2\nthree\n")
    message = str(failed.value)
    assert "differs from what the code generates" in message and UPDATE_VAR in message
    assert "(golden)" in message and "(generated)" in message and "@@ " in message
    assert "\n-two\n" in message and "\n+2\n" in message and "\n three\n" in message
    assert golden.read_text(encoding="utf-8") == "one\ntwo\nthree\n"


def test_a_missing_golden_fails(golden: Path) -> None:
    with pytest.raises(pytest.fail.Exception, match="missing"):
        check_golden(golden.with_name("absent.txt"), "text\n")


def test_updating_rewrites_the_file(golden: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(UPDATE_VAR, "1")
    check_golden(golden, "new\n")
    assert golden.read_text(encoding="utf-8") == "new\n"
    fresh = golden.parent / "sub" / "fresh.txt"
    check_golden(fresh, "made\n")
    assert fresh.read_text(encoding="utf-8") == "made\n"


@pytest.mark.parametrize("ci", ["true", "1", "yes"])
def test_updating_is_refused_under_ci(
    golden: Path, monkeypatch: pytest.MonkeyPatch, ci: str
) -> None:
    monkeypatch.setenv(UPDATE_VAR, "1")
    monkeypatch.setenv("CI", ci)
    for text in ("different\n", "one\ntwo\nthree\n"):  # refused even when it would match
        with pytest.raises(pytest.fail.Exception, match="refused under CI"):
            check_golden(golden, text)
        assert golden.read_text(encoding="utf-8") == "one\ntwo\nthree\n"
    absent = golden.with_name("absent.txt")
    with pytest.raises(pytest.fail.Exception, match="refused under CI"):
        check_golden(absent, "text\n")
    assert not absent.exists()


@pytest.mark.parametrize("ci", ["", "0", "false"])
def test_ci_unset_or_false_allows_updating(
    golden: Path, monkeypatch: pytest.MonkeyPatch, ci: str
) -> None:
    monkeypatch.setenv(UPDATE_VAR, "1")
    monkeypatch.setenv("CI", ci)
    check_golden(golden, "new\n")
    assert golden.read_text(encoding="utf-8") == "new\n"


def test_every_golden_test_goes_through_the_helper() -> None:
    """No test reads the variable itself (and could rewrite its golden under CI)."""
    reads = re.compile(r"environ\b.*" + UPDATE_VAR + r"|getenv\(\s*['\"]" + UPDATE_VAR)
    offenders = [
        str(path.relative_to(TESTS))
        for path in TESTS.rglob("*.py")
        if path.name != "golden.py" and reads.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
    users = [p for p in TESTS.rglob("test_*.py") if "check_golden" in p.read_text("utf-8")]
    assert len(users) >= 6  # report, completion, proxies, toolhive, clients, and this one

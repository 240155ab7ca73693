"""A doctor report's findings: their codes, JSON form and counts, and how servers are named."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpctl.doctor.findings import CODES, SECTIONS, SEVERITIES, DoctorReport, Finding, name_servers


def test_a_finding_in_json() -> None:
    finding = Finding(
        "runtimes", "runtime_missing", "error", "uvx: not found", fix="install uv",
        subject="uvx", servers=("time", "fetch"), details={"command": "uvx"},
    )  # fmt: skip
    assert finding.to_dict() == {
        "section": "runtimes", "code": "runtime_missing", "severity": "error",
        "message": "uvx: not found", "fix": "install uv", "subject": "uvx",
        "servers": ["time", "fetch"], "details": {"command": "uvx"},
    }  # fmt: skip
    bare = Finding("oauth", "oauth_none", "ok", "no enabled server signs in with OAuth")
    assert bare.to_dict() == {
        "section": "oauth", "code": "oauth_none", "severity": "ok",
        "message": "no enabled server signs in with OAuth", "fix": None, "subject": None,
        "servers": [], "details": {},
    }  # fmt: skip


@pytest.mark.parametrize(
    ("section", "code"),
    [("config", "oauth_none"), ("nowhere", "config_file"), ("oauth", "oauth_nonsense")],
)
def test_a_code_outside_its_sections_list_is_refused(section: str, code: str) -> None:
    with pytest.raises(ValueError, match=f"unknown doctor finding {section}/{code}"):
        Finding(section, code, "ok", "text")


def test_every_section_has_its_codes() -> None:
    assert list(CODES) == list(SECTIONS)
    for section, codes in CODES.items():
        for code in codes:
            Finding(section, code, "info", "text")  # accepted


def test_the_report_counts_every_severity_and_is_ok_without_an_error(tmp_path: Path) -> None:
    empty = DoctorReport(tmp_path / "c.json", "nearest")
    assert empty.counts == dict.fromkeys(SEVERITIES, 0) and empty.ok
    findings = [
        Finding("config", "config_file", "ok", "a"),
        Finding("keyring", "keyring_unavailable", "warning", "b"),
        Finding("runtimes", "runtime_found", "ok", "c"),
        Finding("snapshot", "snapshot_none", "info", "d"),
    ]
    report = DoctorReport(tmp_path / "c.json", "--config", findings)
    assert report.counts == {"ok": 2, "info": 1, "warning": 1, "error": 0}
    assert report.ok  # a warning is not broken
    report.findings.append(Finding("oauth", "oauth_expired", "error", "e"))
    report.findings.append(Finding("oauth", "oauth_signed_out", "error", "f"))
    assert report.counts == {"ok": 2, "info": 1, "warning": 1, "error": 2}
    assert not report.ok
    assert report.codes() == ["config_file", "keyring_unavailable", "runtime_found",
                              "snapshot_none", "oauth_expired", "oauth_signed_out"]  # fmt: skip
    assert [f.message for f in report.section("oauth")] == ["e", "f"]
    assert report.section("registries") == []
    data = report.to_dict()
    assert data == {
        "config": str(tmp_path / "c.json"), "config_origin": "--config", "ok": False,
        "counts": {"ok": 2, "info": 1, "warning": 1, "error": 2},
        "findings": [f.to_dict() for f in report.findings],
    }  # fmt: skip


@pytest.mark.parametrize(
    ("servers", "limit", "said"),
    [
        ([], 5, ""),
        (["a"], 5, "a"),
        (["a", "b"], 5, "a and b"),
        (["a", "b", "c"], 5, "a, b and c"),
        (["a", "b", "c", "d", "e"], 5, "a, b, c, d and e"),
        (["a", "b", "c", "d", "e", "f"], 5, "a, b, c, d, e and 1 more"),
        ([str(i) for i in range(12)], 5, "0, 1, 2, 3, 4 and 7 more"),
        (["a", "b", "c"], 2, "a, b and 1 more"),
        (("x", "y"), 2, "x and y"),
    ],
)
def test_name_servers(servers: list[str], limit: int, said: str) -> None:
    assert name_servers(servers, limit) == said


def test_name_servers_names_five_by_default() -> None:
    assert name_servers(list("abcdef")) == "a, b, c, d, e and 1 more"
    assert name_servers(list("abcde")) == "a, b, c, d and e"

"""The trust guard: servers held in this process (by name and content) are refused by
every way that would start them, here ``resolve_entry``, whatever command forgot to check."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpctl import ServerEntry, TrustStore
from mcpctl.config import trustguard
from mcpctl.config.placeholders import resolve_entry
from mcpctl.errors import UntrustedConfigError
from mcpctl.paths import Paths

ENTRY = ServerEntry(command="npx", args=("-y", "pkg@1.0.0"), env={"GH": "${GH_TOKEN}"})
OTHER = ServerEntry(command="uvx", args=("tool",))


@pytest.fixture(autouse=True)
def nothing_held(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("MCPCTL_TRUST", raising=False)
    monkeypatch.delenv("CI", raising=False)
    trustguard.forget()
    yield
    trustguard.forget()


def refusals(tmp_path: Path, entries: dict[str, ServerEntry]) -> dict:
    path = tmp_path / "project" / "external-mcps.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text("{}", encoding="utf-8")
    trust = TrustStore.from_paths(Paths.from_env()).check(path, entries)
    found = trust.refusals()
    assert set(found) == {(name, _digest(entry)) for name, entry in entries.items()}
    return found


def _digest(entry: ServerEntry) -> str:
    from mcpctl.config.trust import server_digest

    return server_digest(entry)


def test_nothing_held_refuses_nothing() -> None:
    assert trustguard.held("s", ENTRY) is None
    trustguard.check("s", ENTRY)  # no refusal
    assert resolve_entry("s", ENTRY, environ={"GH_TOKEN": "t0ken"}).entry.env == {"GH": "t0ken"}


def test_a_held_server_is_refused_with_the_files_refusal(tmp_path: Path) -> None:
    found = refusals(tmp_path, {"s": ENTRY, "o": OTHER})
    trustguard.hold(found)
    original = found[("s", _digest(ENTRY))]
    assert trustguard.held("s", ENTRY) is original
    with pytest.raises(UntrustedConfigError) as caught:
        trustguard.check("s", ENTRY)
    raised = caught.value
    assert raised is not original  # a new error each time, raised from here
    assert raised.message == original.message and "mcpctl trust" in raised.message
    assert raised.path == original.path == str(tmp_path / "project" / "external-mcps.json")
    assert raised.names == ("s",)
    assert raised.subjects == original.subjects and raised.subjects
    assert raised.code == "untrusted_config"
    # The step every start goes through refuses it too, before any secret is read.
    with pytest.raises(UntrustedConfigError) as through:
        resolve_entry("s", ENTRY, environ={"GH_TOKEN": "t0ken"})
    assert through.value.names == ("s",)
    assert trustguard.held("o", OTHER) is found[("o", _digest(OTHER))]


def test_only_that_name_with_that_content_is_held(tmp_path: Path) -> None:
    trustguard.hold(refusals(tmp_path, {"s": ENTRY}))
    assert trustguard.held("t", ENTRY) is None  # another name
    changed = ServerEntry(command="npx", args=("-y", "pkg@1.0.1"), env={"GH": "${GH_TOKEN}"})
    assert trustguard.held("s", changed) is None  # other content: its own check decides
    trustguard.check("s", changed)
    assert trustguard.held("s", ENTRY) is not None


def test_holding_adds_and_forgetting_clears(tmp_path: Path) -> None:
    trustguard.hold(refusals(tmp_path, {"s": ENTRY}))
    trustguard.hold(refusals(tmp_path, {"o": OTHER}))
    assert trustguard.held("s", ENTRY) is not None  # the first hold is kept
    assert trustguard.held("o", OTHER) is not None
    trustguard.hold({})
    assert len(trustguard.HELD) == 2
    trustguard.forget()
    assert trustguard.HELD == {}
    assert trustguard.held("s", ENTRY) is None
    trustguard.check("o", OTHER)

"""registries.json: what it holds, read as a hostile file, and changed under its lock."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from mcpctl.errors import UsageError
from mcpctl.registry.sources import (
    RegistrySource,
    add_source,
    change_sources,
    load_sources,
    remove_source,
)


def ids(path: Path) -> list[str]:
    return [s.id for s in load_sources(path)]


def test_without_the_file_the_defaults_are_used(tmp_path: Path) -> None:
    assert ids(tmp_path / "registries.json") == ["official", "builtin"]


def test_an_added_registry_follows_the_defaults_and_a_removed_default_is_remembered(
    tmp_path: Path,
) -> None:
    path = tmp_path / "conf" / "registries.json"  # its folder is created
    add_source(path, RegistrySource("team", "http", "https://r.example"), locks=tmp_path)
    remove_source(path, "official", locks=tmp_path)
    assert ids(path) == ["builtin", "team"]
    assert json.loads(path.read_text("utf-8")) == {
        "registries": [
            {"id": "team", "kind": "http", "url": "https://r.example"},
            {"id": "official", "removed": True},
        ]
    }


def test_adding_an_id_again_replaces_that_registry(tmp_path: Path) -> None:
    path = tmp_path / "registries.json"
    add_source(path, RegistrySource("team", "http", "https://a.example"), locks=tmp_path)
    add_source(path, RegistrySource("team", "file", "/srv/team.json"), locks=tmp_path)
    assert [s for s in load_sources(path) if s.id == "team"] == [
        RegistrySource("team", "file", "/srv/team.json")
    ]


def test_removing_an_unknown_registry_is_a_usage_error_and_writes_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "registries.json"
    with pytest.raises(UsageError, match="no registry 'nope'"):
        remove_source(path, "nope", locks=tmp_path)
    assert not path.exists()


def test_concurrent_changes_all_land(tmp_path: Path) -> None:
    """Each change reads the file under the lock: none overwrites another's registry."""
    path = tmp_path / "registries.json"
    count = 12
    start = threading.Barrier(count)
    failures: list[BaseException] = []

    def add(n: int) -> None:
        start.wait(timeout=30)
        try:
            source = RegistrySource(f"r{n}", "http", f"https://r{n}.example")
            add_source(path, source, locks=tmp_path)
        except BaseException as exc:  # reported below, not lost in the thread
            failures.append(exc)

    threads = [threading.Thread(target=add, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not failures
    assert sorted(ids(path)) == sorted(["official", "builtin", *(f"r{n}" for n in range(count))])


def test_a_change_returns_what_it_wrote(tmp_path: Path) -> None:
    path = tmp_path / "registries.json"
    written = change_sources(path, lambda now: now[:1], locks=tmp_path)
    assert [s.id for s in written] == ["official"] == ids(path)


@pytest.mark.parametrize("text", ["{", "[]", '{"registries": {}}'])
def test_a_bad_file_is_a_usage_error_that_names_it(tmp_path: Path, text: str) -> None:
    path = tmp_path / "registries.json"
    path.write_text(text, "utf-8")
    with pytest.raises(UsageError, match=r"registries\.json"):
        load_sources(path)
    with pytest.raises(UsageError, match=r"registries\.json"):
        add_source(path, RegistrySource("team", "file", "/x.json"), locks=tmp_path)
    assert path.read_text("utf-8") == text


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    path = tmp_path / "registries.json"
    os.mkfifo(path)
    with pytest.raises(UsageError, match="FIFO"):
        load_sources(path)

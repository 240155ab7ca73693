"""registries.json: what it holds, read as a hostile file, and changed under its lock."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from mcpctl.errors import UsageError
from mcpctl.registry.cache import DiscoveryCache
from mcpctl.registry.records import Record, record_from_json
from mcpctl.registry.sources import (
    RegistrySource,
    add_source,
    age,
    change_sources,
    find_record,
    is_stale,
    load_sources,
    parse_location,
    remove_source,
)
from tests.registry.server import make_record


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
    with pytest.raises(UsageError, match="no registry 'nope'") as caught:
        remove_source(path, "nope", locks=tmp_path)
    assert caught.value.hint == "run 'mcpctl registry list'"
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


# --- what mutation testing found unpinned ----------------------------------------------


def test_the_stored_form_names_a_url_or_a_file() -> None:
    assert RegistrySource("team", "http", "https://r.example").to_dict() == {
        "id": "team", "kind": "http", "url": "https://r.example",
    }  # fmt: skip
    assert RegistrySource("local", "file", "/srv/c.json").to_dict() == {
        "id": "local", "kind": "file", "file": "/srv/c.json",
    }  # fmt: skip


def test_items_that_are_not_registries_are_skipped_and_only_true_removes(tmp_path: Path) -> None:
    path = tmp_path / "registries.json"
    items = [
        "team",
        {"url": "https://no-id.example"},
        {"id": 7, "url": "https://number.example"},
        {"id": "official", "removed": "yes"},
        {"id": "nothing"},
        {"id": "web", "url": "https://w.example", "file": "/ignored.json"},
        {"id": "local", "file": "/srv/c.json"},
        {"id": "builtin", "removed": True},
        {"id": "bad", "url": 3, "file": 4},
    ]
    path.write_text(json.dumps({"registries": items}), "utf-8")
    assert load_sources(path) == [
        RegistrySource("official", "http", "https://registry.modelcontextprotocol.io"),
        RegistrySource("web", "http", "https://w.example"),
        RegistrySource("local", "file", "/srv/c.json"),
    ]


def test_a_tombstone_for_a_registry_that_is_not_there_is_harmless(tmp_path: Path) -> None:
    path = tmp_path / "registries.json"
    items = [{"id": "official", "removed": True}, {"id": "official", "removed": True},
             {"id": "gone", "removed": True}]  # fmt: skip
    path.write_text(json.dumps({"registries": items}), "utf-8")
    assert ids(path) == ["builtin"]


@pytest.mark.parametrize(
    "change",
    [
        lambda path, locks: add_source(path, RegistrySource("t", "file", "/t.json"), locks=locks),
        lambda path, locks: remove_source(path, "builtin", locks=locks),
        lambda path, locks: change_sources(path, list, locks=locks),
    ],
)
def test_a_change_takes_its_lock_in_the_folder_given(tmp_path: Path, change: Any) -> None:
    """Writers of one file take turns only if they share the lock's folder."""
    locks = tmp_path / "locks"
    change(tmp_path / "registries.json", locks)
    assert [p.suffix for p in locks.iterdir()] == [".lock"]


def test_a_user_registry_can_take_over_a_default_id(tmp_path: Path) -> None:
    path = tmp_path / "registries.json"
    add_source(path, RegistrySource("official", "http", "https://mirror.example"), locks=tmp_path)
    assert load_sources(path)[0] == RegistrySource("official", "http", "https://mirror.example")
    assert json.loads(path.read_text("utf-8")) == {
        "registries": [{"id": "official", "kind": "http", "url": "https://mirror.example"}]
    }


def test_a_bad_file_says_how_to_fix_it(tmp_path: Path) -> None:
    path = tmp_path / "registries.json"
    path.write_text("{", "utf-8")
    with pytest.raises(UsageError, match="is not valid JSON") as caught:
        load_sources(path)
    assert caught.value.hint == f"fix or delete {path}"
    path.write_text("[]", "utf-8")
    with pytest.raises(UsageError) as caught:
        load_sources(path)
    assert caught.value.message == f'{path} must hold {{"registries": [...]}}'


def test_a_file_nested_too_deep_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "registries.json"
    path.write_text("[" * 100_000 + "]" * 100_000, "utf-8")
    with pytest.raises(UsageError, match="is not valid JSON"):
        load_sources(path)


@pytest.mark.parametrize("registry_id", ["a", "team-1", "t_2", "0x", "a" * 40])
def test_a_good_id_is_accepted(registry_id: str) -> None:
    assert parse_location(registry_id, "https://r.example/").id == registry_id


@pytest.mark.parametrize("registry_id", ["", "-a", "_a", "Team", "a b", "a.b", "a" * 41, "é"])
def test_a_bad_id_is_refused_with_the_rule(registry_id: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_location(registry_id, "https://r.example")
    assert caught.value.message == (
        f"registry id {registry_id!r} must be 1-40 of lowercase letters, digits, '_' and '-'"
    )


@pytest.mark.parametrize(
    "url", ["http://r.example", "https://r.example/v0//", "https://r.example/X"]
)
def test_an_http_location_is_kept_without_its_trailing_slashes(url: str) -> None:
    assert parse_location("team", url) == RegistrySource("team", "http", url.rstrip("/"))


def test_a_file_location_is_made_absolute_and_home_is_expanded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = tmp_path / "catalog.json"
    catalog.write_text("[]", "utf-8")
    monkeypatch.chdir(tmp_path)
    assert parse_location("c", "catalog.json") == RegistrySource("c", "file", str(catalog))
    monkeypatch.setenv("HOME", str(tmp_path))
    assert parse_location("c", "~/catalog.json") == RegistrySource("c", "file", str(catalog))


@pytest.mark.parametrize("location", ["ftp://r.example", "missing.json", "."])
def test_a_location_that_is_neither_is_refused(
    location: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError) as caught:
        parse_location("team", location)
    assert caught.value.message == f"{location} is neither an http(s) URL nor an existing file"


def record(name: str, version: str, latest: bool | None = True) -> Record:
    raw = make_record(name, version, latest=bool(latest))
    if latest is None:  # a file registry says nothing about which is latest
        del raw["_meta"]
    found = record_from_json(raw)
    assert found is not None
    return found


WEATHER = "io.example/weather"


@pytest.fixture
def cache() -> DiscoveryCache:
    cache = DiscoveryCache.memory()
    cache.replace("a", [
        record(WEATHER, "1.0.0", latest=False),
        record(WEATHER, "1.2.0"),
        record(WEATHER, "2.0.0-rc1", latest=False),
    ])  # fmt: skip
    cache.replace("b", [record(WEATHER, "0.9.0")])
    cache.replace("files", [record("io.example/notes", "1.0.0", None),
                            record("io.example/notes", "1.1.0", None)])  # fmt: skip
    return cache


def found(cache: DiscoveryCache, spec: str, registry: str | None = None) -> tuple[str, str]:
    reg, rec = find_record(cache, spec, registry)
    assert rec.name == spec.partition("@")[0]
    return reg, rec.version


def test_the_latest_version_is_the_one_marked_latest(cache: DiscoveryCache) -> None:
    assert found(cache, WEATHER) == ("a", "1.2.0")
    assert found(cache, f"{WEATHER}@latest") == ("a", "1.2.0")
    assert found(cache, WEATHER, "b") == ("b", "0.9.0")


def test_without_a_latest_mark_the_newest_version_is_used(cache: DiscoveryCache) -> None:
    assert found(cache, "io.example/notes") == ("files", "1.1.0")


def test_a_version_is_found_in_any_registry_or_the_one_named(cache: DiscoveryCache) -> None:
    assert found(cache, f"{WEATHER}@1.0.0") == ("a", "1.0.0")
    assert found(cache, f"{WEATHER}@0.9.0") == ("b", "0.9.0")
    with pytest.raises(UsageError) as caught:
        find_record(cache, f"{WEATHER}@0.9.0", "a")
    assert caught.value.hint == "versions: 2.0.0-rc1, 1.2.0, 1.0.0"


def test_a_missing_version_lists_the_ten_newest_once_each() -> None:
    cache = DiscoveryCache.memory()
    cache.replace("a", [record(WEATHER, f"1.{n}.0", latest=n == 11) for n in range(12)])
    cache.replace("b", [record(WEATHER, "1.11.0")])
    with pytest.raises(UsageError) as caught:
        find_record(cache, f"{WEATHER}@9")
    assert caught.value.message == f"{WEATHER} has no version '9'"
    assert caught.value.hint == "versions: " + ", ".join(f"1.{n}.0" for n in range(11, 2, -1))


def miss(cache: DiscoveryCache, spec: str, **kwargs: object) -> UsageError:
    with pytest.raises(UsageError) as caught:
        find_record(cache, spec, **kwargs)  # type: ignore[arg-type]
    return caught.value


def test_a_missing_server_suggests_a_near_name_or_discover(cache: DiscoveryCache) -> None:
    error = miss(cache, "weather")
    assert error.message == "no server 'weather' in the registries"
    assert error.hint == f"did you mean {WEATHER!r}?"
    assert miss(cache, "zzz").hint == "search with 'mcpctl discover'"
    assert miss(cache, WEATHER, registry="files").hint == f"did you mean {WEATHER!r}?"


def test_a_missing_server_may_be_in_a_registry_that_could_not_be_read(
    cache: DiscoveryCache,
) -> None:
    error = miss(cache, "weather", unavailable=["team", "other"])
    assert error.message == "no server 'weather' in the registries"
    assert error.hint == (
        "it may be in 'team', 'other', which could not be read; check the network, then "
        "'mcpctl registry sync team'"
    )


def test_offline_a_missing_server_says_only_the_cache_was_searched(cache: DiscoveryCache) -> None:
    error = miss(cache, "weather", offline=True)
    assert error.message == (
        "no server 'weather' in the registries' cache (offline: the network was not used)"
    )
    assert error.hint == (
        f"did you mean {WEATHER!r}? the cache may be out of date: 'mcpctl registry sync' when "
        "online, or leave out --offline"
    )
    assert miss(cache, "zzz", offline=True).hint == (
        "the cache may be out of date: 'mcpctl registry sync' when online, or leave out --offline"
    )
    assert miss(cache, "zzz", offline=True, unavailable=["team"]).hint == (
        "'team' has never been synced: 'mcpctl registry sync team' when online"
    )
    assert miss(cache, "zzz", offline=True, unavailable=["team", "other"]).hint == (
        "'team', 'other' have never been synced: 'mcpctl registry sync team' when online"
    )


def test_a_registry_is_stale_when_never_synced_or_older_than_its_time_to_live() -> None:
    cache = DiscoveryCache.memory()
    team = RegistrySource("team", "http", "https://r.example")
    assert is_stale(cache, team)
    cache.replace("team", [])
    assert not is_stale(cache, team)
    assert not is_stale(cache, team, ttl=60)
    assert is_stale(cache, team, ttl=-1)
    cache.conn.execute("UPDATE registries SET synced_at = ?", (time.time() - 3000,))
    assert not is_stale(cache, team)  # within the default hour
    assert is_stale(cache, team, ttl=2000)
    cache.conn.execute("UPDATE registries SET synced_at = ?", (time.time() - 3700,))
    assert is_stale(cache, team)


def test_the_builtin_catalog_is_stale_only_until_first_loaded() -> None:
    cache = DiscoveryCache.memory()
    builtin = RegistrySource("builtin", "builtin", "/builtin.json")
    assert is_stale(cache, builtin)
    cache.replace("builtin", [])
    cache.conn.execute("UPDATE registries SET synced_at = 0")
    assert not is_stale(cache, builtin, ttl=0)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(-5, "0 s ago"), (0, "0 s ago"), (59.99, "59 s ago"), (60, "1 min ago"),
     (3599, "59 min ago"), (3600, "1 h ago"), (86399, "23 h ago"), (86400, "1 d ago"),
     (86400 * 9 + 5, "9 d ago")],
)  # fmt: skip
def test_age_is_rounded_down_in_the_unit_that_fits(seconds: float, text: str) -> None:
    assert age(seconds) == text

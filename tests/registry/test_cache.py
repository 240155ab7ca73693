"""The discovery cache: storage, concurrency, and search ranking."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from mcpctl.registry import DiscoveryCache
from mcpctl.registry.records import Record, clean_text, record_from_json, version_key
from mcpctl.registry.search import fts_query, score
from tests.registry.conftest import DATA
from tests.registry.server import make_record


def records(*specs: tuple[str, str, str]) -> list[Record]:
    """Records from (name, title, description)."""
    out = [record_from_json(make_record(n, title=t, description=d)) for n, t, d in specs]
    assert all(out)
    return [r for r in out if r is not None]


def test_ranking_weights_fields() -> None:
    cache = DiscoveryCache.memory()
    cache.replace("r", records(
        ("org.other/notes", "Notes", "Keeps filesystem notes"),
        ("com.acme/filesystem-extra", "Extra", "More"),
        ("io.x/files", "Filesystem browser", "Browse"),
        ("com.acme/filesystem", "Files", "Read and write"),
    ))  # fmt: skip
    assert [h.name for h in cache.search("filesystem")] == [
        "com.acme/filesystem", "com.acme/filesystem-extra", "io.x/files", "org.other/notes",
    ]  # fmt: skip


# The query "quartz nimbus" is two words, and no record holds them side by side in that
# order: no bonus of search.score applies, so bm25 and its column weights alone rank.
FILLER = "bundles a few small helpers for the daily chores of a team"
PLAIN = [(f"io.filler/helper-{i}", "Helper", FILLER) for i in range(40)]


def test_the_column_weights_rank_slug_title_description_namespace() -> None:
    """Both words only in the slug of one server, only in the title of another, only in
    the description of a third and only in the namespace of a fourth. Without weights the
    order would be the reverse (the rows are shorter in that order, and bm25 favours short
    rows), and the names sort the other way round too: only the weights give this order."""
    cache = DiscoveryCache.memory()
    cache.replace("r", records(
        ("io.plain.zulu/quartz-nimbus-kit-x-y", "Toolkit", FILLER),
        ("io.plain.yankee/toolkit", "The Nimbus Quartz Suite", FILLER),
        ("xray/kit", "Kit", "Nimbus and quartz"),
        ("quartz.nimbus/kit", "Kit", "Kit"),
        *PLAIN,
    ))  # fmt: skip
    hits = cache.search("quartz nimbus")
    assert [h.name for h in hits] == [
        "io.plain.zulu/quartz-nimbus-kit-x-y",  # slug
        "io.plain.yankee/toolkit",  # title
        "xray/kit",  # description
        "quartz.nimbus/kit",  # namespace
    ]
    assert all(h.score < 100 for h in hits)  # no bonus played a part


def pad(words: int) -> str:
    return " ".join(
        ("alpha bravo charlie delta echo foxtrot golf hotel india juliet " * 4).split()[:words]
    )


def test_the_column_weight_ratios() -> None:
    """FTS5 multiplies a term's frequency by its column's weight inside bm25's saturation,
    so a match in column A beats one in column B when weight(A) / weight(B) is more than a
    ratio that grows with A's row length over B's. Pairs of rows of chosen lengths pin the
    ratios slug/title and description/namespace between about 1.5 and 3 (they are 2)."""
    cache = DiscoveryCache.memory()
    cache.replace("r", records(
        ("io.s1/quartz-nimbus", "Kit", pad(15)),  # slug, row of 20 tokens
        ("io.t1/kit", "Nimbus Quartz", pad(5)),  # title, row of 10
        ("io.s2/quartz-nimbus", "Kit", pad(30)),  # slug, row of 35
        ("io.t2/kit", "Nimbus Quartz", pad(5)),  # title, row of 10
        ("io.d1/kit", "Kit", "nimbus quartz " + pad(15)),  # description, row of 21
        ("quartz.nimbus/kit", "Kit", pad(5)),  # namespace, row of 9
        ("io.d2/kit", "Kit", "nimbus quartz " + pad(30)),  # description, row of 36
        ("nimbus.quartz/kit", "Kit", pad(5)),  # namespace, row of 9
        *PLAIN,
    ))  # fmt: skip
    order = [h.name.partition("/")[0] for h in cache.search("quartz nimbus", limit=50)]

    def before(a: str, b: str) -> bool:
        return order.index(a) < order.index(b)

    assert before("io.s1", "io.t1"), "slug/title weight ratio below 1.5"
    assert before("io.t2", "io.s2"), "slug/title weight ratio above 3"
    assert before("io.d1", "quartz.nimbus"), "description/namespace weight ratio below 1.5"
    assert before("nimbus.quartz", "io.d2"), "description/namespace weight ratio above 3"


def test_bonuses_come_before_weights() -> None:
    assert score("time", "io.x/time", "time", "Time", "", -1.0) > 1000
    assert score("tim", "io.x/time", "time", "", "", -9.0) == 509.0
    assert score("", "io.x/time", "time", "", "", -2.5) == 2.5
    assert fts_query('github "OR" x*') == '"github"* "or"* "x"*'
    assert fts_query("  --  ") == ""


# Where the query "time" occurs, best tier first: (name, slug, title, description).
TIERS = [
    ("exact name or slug", [("io.x/time", "time", "", ""), ("time", "time-x", "", "")]),
    ("name or slug prefix", [("io.x/timer", "timer", "", ""), ("timely.io/kit", "kit", "", "")]),
    ("name or slug substring", [("io.x/uptime", "uptime", "", ""), ("io.uptime/kit", "kit", "", "")]),
    ("title only", [("io.x/clock", "clock", "World Time", "")]),
    ("description only", [("io.x/clock", "clock", "Clock", "Tells the time")]),
]  # fmt: skip


@pytest.mark.parametrize("upper", range(len(TIERS) - 1))
def test_each_bonus_tier_beats_everything_below_it(upper: int) -> None:
    """The worst row of a tier (no other bonus, bm25 at zero) outranks the best row of any
    tier below (the title and description bonuses stacked on it, a far better bm25)."""
    worst = min(score("time", *row, 0.0) for row in TIERS[upper][1])
    for lower, rows in TIERS[upper + 1 :]:
        for name, slug, title, desc in rows:
            # A title match would lift a description-only row a tier.
            stacked = title if lower == "description only" else f"{title} time"
            best = score("time", name, slug, stacked, f"{desc} time", -50.0)
            assert worst > best, f"{TIERS[upper][0]} ranks below {lower}: {name}"


def test_search_orders_the_bonus_tiers() -> None:
    """The same tiers through search: their names sort the other way round, and the
    description match has the shortest row (bm25 favours it)."""
    cache = DiscoveryCache.memory()
    cache.replace("r", records(
        ("io.a/clock", "Clock", "the time"),
        ("io.b/clock", "World Time", "A clock for every zone of the world, with alarms"),
        ("io.c/world-time-kit", "Kit", "Watches a site for outages and reports them"),
        ("io.d/timer", "Timer", "Counts down and rings when it is done, then resets"),
        ("io.e/time", "Clockwork", "Gives the current date in any zone; converts between"),
    ))  # fmt: skip
    assert [h.name for h in cache.search("time")] == [
        "io.e/time", "io.d/timer", "io.c/world-time-kit", "io.b/clock", "io.a/clock",
    ]  # fmt: skip


def test_among_matches_of_one_tier_bm25_still_ranks() -> None:
    """The bonuses add to bm25, they do not replace it: two exact slug matches are ordered
    by their rows (the shorter row first), not by name; so are two substring matches. A
    description holding the whole query outranks one holding its words apart."""
    cache = DiscoveryCache.memory()
    cache.replace("r", records(
        ("io.a/time", "Clock", "Tells the hour and the date in any zone of the whole world"),
        ("io.z/time", "Clock", "Hours"),
        ("io.a/world-time-kit", "Kit", "Tells the hour and the date in any zone of the world"),
        ("io.z/world-time-kit", "Kit", "Hours"),
    ))  # fmt: skip
    assert [h.name for h in cache.search("time")] == [
        "io.z/time", "io.a/time", "io.z/world-time-kit", "io.a/world-time-kit",
    ]  # fmt: skip
    cache.replace("r", records(
        ("io.a/kit", "Kit", "quartz and then nimbus"),
        ("io.z/kit", "Kit", "A long description that holds quartz nimbus in the middle of it"),
    ))  # fmt: skip
    assert [h.name for h in cache.search("quartz nimbus")] == ["io.z/kit", "io.a/kit"]


def test_search_filters_and_what_a_hit_says() -> None:
    cache = DiscoveryCache.memory()
    secret = {"registryType": "pypi", "identifier": "x", "version": "1", "transport":
              {"type": "stdio"}, "environmentVariables": [{"name": "K", "isSecret": True}]}  # fmt: skip
    npm = {"registryType": "npm", "identifier": "y", "version": "1", "transport": {"type": "stdio"}}
    remote = [{"type": "streamable-http", "url": "https://r.example/mcp"}]
    cache.replace("a", [r for r in (
        record_from_json(make_record("io.x/local", "1.0.0", title="Local", packages=[secret, npm])),
        record_from_json(make_record("io.x/remote", remotes=remote)),
        record_from_json(make_record("io.x/gone", status="deleted")),
    ) if r is not None])  # fmt: skip
    newer = record_from_json(make_record("io.x/local", "2.0.0", packages=[secret, npm]))
    assert newer is not None
    cache.replace("b", [newer])
    local, remote_hit = cache.search()
    assert (local.name, remote_hit.name) == ("io.x/local", "io.x/remote")
    assert local.to_dict() == {  # the newest version of the registries that have it
        "name": "io.x/local", "title": "Local", "description": "The local server",
        "version": "2.0.0", "status": "active", "transports": ["stdio"],
        "package_types": ["pypi", "npm"], "needs_secrets": True, "registries": ["a", "b"],
    }  # fmt: skip
    assert remote_hit.transports == ["streamable-http"] and remote_hit.package_types == []
    assert remote_hit.needs_secrets is False
    assert [h.name for h in cache.search(registries=["b"])] == ["io.x/local"]
    assert [h.name for h in cache.search(registries=["a", "b"], transport="remote")] == [
        "io.x/remote"
    ]
    assert [h.name for h in cache.search("io", transport="stdio")] == ["io.x/local"]
    assert [h.name for h in cache.search(package_type="npm")] == ["io.x/local"]
    assert cache.search(package_type="np") == []  # a whole type, not a part of one
    assert [h.name for h in cache.search("gone", all_status=True)] == ["io.x/gone"]
    assert cache.search("gone") == []
    both = record_from_json(make_record("io.x/both", packages=[npm], remotes=remote))
    assert both is not None
    cache.replace("c", [both])
    assert cache.search(registries=["c"])[0].transports == ["stdio", "streamable-http"]


def test_same_server_in_two_registries_is_one_hit() -> None:
    cache = DiscoveryCache.memory()
    rec = record_from_json(make_record("io.example/dup"))
    assert rec
    cache.replace("a", [rec])
    cache.replace("b", [rec])
    hits = cache.search("dup")
    assert len(hits) == 1 and hits[0].registries == ["a", "b"]


def test_escape_sequences_are_stripped() -> None:
    rec = record_from_json(
        make_record("io.x/evil", description="ok\x1b[31mRED\x1b[0m\x07 \x1b]0;title\x07done")
    )
    assert rec and rec.description == "okRED done"
    assert clean_text("a\x00b\x9bc") == "abc"


def test_version_order() -> None:
    assert sorted(["1.10.0", "1.2.0", "1.2.0-beta", "2.0"], key=version_key) == [
        "1.2.0-beta",
        "1.2.0",
        "1.10.0",
        "2.0",
    ]


def test_the_official_sample_loads_and_searches() -> None:
    """202 records of the official registry (several versions of some servers, every
    quirk of the real data): all load, the latest versions are the ones marked, and a
    search for "github" puts GitHub's own server first, ahead of the many io.github.*
    servers that only have the word in their namespace."""
    raw = json.loads((DATA / "official-sample.json").read_text("utf-8"))
    recs = [r for r in (record_from_json(x) for x in raw) if r is not None]
    assert len(recs) == len(raw) >= 20
    cache = DiscoveryCache.memory()
    assert cache.replace("official", recs) == len(recs)
    names = {r.name for r in recs}
    latest = cache.search(limit=1000)
    assert {h.name for h in latest} == names
    github = cache.search("github", limit=5)
    assert github[0].name == "io.github.github/github-mcp-server"
    assert github[0].version == "0.26.0-rc.3"  # marked latest by the registry
    assert len(cache.versions("io.github.github/github-mcp-server")) == 4
    assert all("github" in (h.name + h.title).lower() for h in github)
    assert cache.search("github", transport="remote", limit=1000)
    assert cache.search("", package_type="mcpb", limit=1000)


def test_cache_survives_a_garbage_file_and_concurrent_writers(tmp_path: Path) -> None:
    path = tmp_path / "discovery.sqlite3"
    path.write_bytes(b"not a database at all" * 100)
    cache = DiscoveryCache.open(path)
    rec = record_from_json(make_record("io.x/a"))
    assert rec
    other = DiscoveryCache.open(path)
    cache.replace("r1", [rec])
    other.replace("r2", [rec])
    assert DiscoveryCache.open(path).count() == 2


@pytest.mark.slow
def test_two_processes_syncing_at_once(tmp_path: Path) -> None:
    import subprocess
    import sys

    catalog = tmp_path / "c.json"
    catalog.write_text(json.dumps([make_record(f"io.x/s{i}")["server"] for i in range(2000)]))
    script = (
        "import sys; from pathlib import Path; from mcpctl.registry.cache import DiscoveryCache;"
        "from mcpctl.registry.sources import RegistrySource;"
        "from mcpctl.registry.syncing import sync_source;"
        "c = DiscoveryCache.open(Path(sys.argv[1]));"
        "[sync_source(c, RegistrySource(sys.argv[2], 'file', sys.argv[3])) for _ in range(5)]"
    )
    db = tmp_path / "d.sqlite3"
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(db), f"r{i}", str(catalog)])
        for i in range(2)
    ]
    try:
        for p in procs:
            assert p.wait(timeout=120) == 0
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(timeout=10)
    cache = DiscoveryCache.open(db)
    assert cache.count("r0") == cache.count("r1") == 2000
    assert len(cache.search("s1999")) == 1


OPEN_AT = """
import sys, time
from mcpctl.registry.cache import DiscoveryCache
while time.time() < float(sys.argv[2]):
    pass
cache = DiscoveryCache.open(sys.argv[1])
cache.conn.execute("INSERT INTO meta VALUES (?, '')", (sys.argv[3],))
print(cache.conn.execute("PRAGMA journal_mode").fetchone()[0])
"""


@pytest.mark.slow
def test_processes_creating_the_cache_at_once_share_it(tmp_path: Path) -> None:
    # Switching a new file to WAL collides between two openers ("database is locked",
    # without SQLite's busy handler): it must be waited out, never taken for corruption
    # (which deleted the file under the other process).
    import subprocess
    import sys

    for rnd in range(8):
        db = tmp_path / f"d{rnd}.sqlite3"
        db.touch()  # an empty file is an empty database: it must be used, not replaced
        inode = db.stat().st_ino
        start = time.time() + 0.5
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", OPEN_AT, str(db), str(start), f"p{i}"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for i in range(2)
        ]
        try:
            outs = [p.communicate(timeout=60) for p in procs]
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait(timeout=10)
        assert [p.returncode for p in procs] == [0, 0], outs
        assert [o.strip() for o, _ in outs] == ["wal", "wal"]
        cache = DiscoveryCache.open(db)
        keys = {r[0] for r in cache.conn.execute("SELECT key FROM meta")}
        cache.close()
        assert {"p0", "p1"} <= keys  # both wrote to the same file
        assert db.stat().st_ino == inode


def test_an_unopenable_cache_is_a_storage_error(tmp_path: Path) -> None:
    from mcpctl.errors import StorageError

    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(StorageError, match="cannot open the discovery cache") as caught:
        DiscoveryCache.open(blocker / "d.sqlite3")  # its folder is a file
    assert caught.value.hint == (
        "check the permissions of that folder, or remove the file to rebuild it"
    )


def test_a_corrupt_cache_is_rebuilt(tmp_path: Path) -> None:
    db = tmp_path / "d.sqlite3"
    db.write_bytes(b"not a database" * 100)
    cache = DiscoveryCache.open(db)
    assert cache.count("x") == 0
    cache.close()


# --- what mutation testing found unpinned: incremental syncs, dropping, failures -------------


def rec(name: str, version: str, **kw: object) -> Record:
    made = record_from_json(make_record(name, version, **kw))  # type: ignore[arg-type]
    assert made is not None
    return made


def test_an_incremental_sync_replaces_changed_versions_and_keeps_the_rest() -> None:
    cache = DiscoveryCache.memory()
    cache.replace("r", [rec("io.x/alpha", "1.0.0", description="first alpha"),
                        rec("io.x/beta", "1.0.0")], cursor_time="2025-01-01T00:00:00Z")  # fmt: skip
    cache.replace("other", [rec("io.x/alpha", "9.0.0")])
    assert cache.apply("r", [
        rec("io.x/alpha", "1.0.0", description="alpha again", latest=False),
        rec("io.x/alpha", "2.0.0", description="second alpha"),
        rec("io.x/gamma", "1.0.0"),
    ], cursor_time="2025-02-01T00:00:00Z") == 3  # fmt: skip
    assert cache.count("r") == 4 and cache.count("other") == 1 and cache.count() == 5
    got = [(reg, r.version, r.is_latest, r.description) for reg, r in cache.versions("io.x/alpha")]
    assert got == [("other", "9.0.0", True, "The alpha server"),
                   ("r", "2.0.0", True, "second alpha"),
                   ("r", "1.0.0", False, "alpha again")]  # fmt: skip
    # Only the latest version of each server is searched: the old text is gone.
    assert [h.version for h in cache.search("alpha", registries=["r"])] == ["2.0.0"]
    assert cache.search("first", registries=["r"]) == []
    assert sorted(h.name for h in cache.search("", registries=["r"])) == [
        "io.x/alpha", "io.x/beta", "io.x/gamma"]  # fmt: skip
    state = cache.sync_state("r")
    assert state is not None and state[1] == "2025-02-01T00:00:00Z"
    before = time.time()
    cache.apply("r", [rec("io.x/beta", "1.0.1")])  # no newer cursor: the old one stays
    state = cache.sync_state("r")
    assert state is not None and state[1] == "2025-02-01T00:00:00Z" and state[0] >= before
    assert [r.version for _, r in cache.versions("io.x/beta")] == ["1.0.1", "1.0.0"]


def test_a_deleted_version_stays_marked() -> None:
    cache = DiscoveryCache.memory()
    cache.replace("r", [rec("io.x/alpha", "1.0.0")])
    cache.apply("r", [rec("io.x/alpha", "1.0.0", status="deleted")])
    (only,) = cache.versions("io.x/alpha")
    assert only[1].status == "deleted"
    assert cache.search("alpha") == []
    assert [h.status for h in cache.search("alpha", all_status=True)] == ["deleted"]


def test_dropping_a_registry_forgets_it_and_only_it() -> None:
    cache = DiscoveryCache.memory()
    cache.replace("r", [rec("io.x/alpha", "1.0.0"), rec("io.x/alpha", "2.0.0")])
    cache.replace("other", [rec("io.x/alpha", "1.0.0")])
    cache.drop("r")
    assert cache.count("r") == 0 and cache.sync_state("r") is None
    assert [reg for reg, _ in cache.versions("io.x/alpha")] == ["other"]
    assert [(h.registries, h.version) for h in cache.search("alpha")] == [(["other"], "1.0.0")]
    cache.replace("r", [rec("io.x/alpha", "3.0.0")])  # the search index is whole again
    assert sorted(r for h in cache.search("alpha") for r in h.registries) == ["other", "r"]


def test_a_failed_sync_is_remembered_until_one_succeeds() -> None:
    cache = DiscoveryCache.memory()
    assert cache.last_failure("r") is None
    cache.note_failure("r", at=1234.5)
    assert cache.last_failure("r") == 1234.5 and cache.last_failure("other") is None
    before = time.time()
    cache.note_failure("other")
    failed = cache.last_failure("other")
    assert failed is not None and before <= failed <= time.time()
    cache.replace("r", [rec("io.x/alpha", "1.0.0")])
    assert cache.last_failure("r") is None and cache.last_failure("other") == failed
    cache.note_failure("r", at=1.0)
    cache.apply("r", [rec("io.x/alpha", "1.0.1")])
    assert cache.last_failure("r") is None


def test_names_like_suggests_a_server_by_its_last_part_or_a_piece_of_its_name() -> None:
    cache = DiscoveryCache.memory()
    cache.replace("r", [rec("io.x/weather", "1.0.0"), rec("io.x/weather", "2.0.0"),
                        rec("io.y/sunny-weather-now", "1.0.0"), rec("io.z/other", "1.0.0")])  # fmt: skip
    cache.replace("s", [rec("io.x/weather", "1.0.0")])
    # Each name once, however many versions and registries hold it.
    assert sorted(cache.names_like("weather")) == ["io.x/weather", "io.y/sunny-weather-now"]
    assert cache.names_like("org.other/weather") == ["io.x/weather"]  # its last part
    assert cache.names_like("io.z/") == ["io.z/other"]  # a piece of the name
    assert cache.names_like("nothing") == []
    assert len(cache.names_like("io.", limit=2)) == 2
    cache.replace("many", [rec(f"io.n/s{n}", "1.0.0") for n in range(7)])
    assert len(cache.names_like("io.n/")) == 5  # five at most by default
    assert cache.names_like("weather\udcff") == []  # a lone surrogate matches nothing


def test_a_registry_synced_again_is_searched_by_what_it_holds_now() -> None:
    """The words of what a sync replaced are gone from the search, in every column, even
    when the new rows take the old rows' ids."""
    cache = DiscoveryCache.memory()
    cache.replace(
        "r", [rec("io.oldspace/alpha", "1.0.0", title="Golden", description="first words")]
    )
    cache.replace(
        "r", [rec("io.newspace/beta", "1.0.0", title="Silver", description="second words")]
    )
    for gone in ("alpha", "golden", "first", "oldspace"):
        assert cache.search(gone) == [], gone
    for word in ("beta", "silver", "second", "newspace"):
        assert [h.name for h in cache.search(word)] == ["io.newspace/beta"], word
    # An incremental sync replacing a server's version: the same.
    cache.apply("r", [rec("io.newspace/beta", "1.0.0", title="Bronze", description="third")])
    for gone in ("silver", "second"):
        assert cache.search(gone) == [], gone
    for word in ("bronze", "third", "newspace"):
        assert [h.name for h in cache.search(word)] == ["io.newspace/beta"], word
    # Nor do a dropped registry's, on other servers that take their ids later.
    cache.drop("r")
    cache.replace("s", [rec("io.x/gamma", "1.0.0"), rec("io.x/delta", "1.0.0")])
    for gone in ("beta", "bronze", "third", "newspace"):
        assert cache.search(gone) == [], gone


def test_versions_of_a_name_that_is_not_utf_8_are_none() -> None:
    cache = DiscoveryCache.memory()
    cache.replace("r", [rec("io.x/alpha", "1.0.0")])
    assert cache.versions("io.x/alpha\udcff") == []
    assert cache.versions("io.x/alpha", ["r\udcff"]) == []
    assert [reg for reg, _ in cache.versions("io.x/alpha", ["other", "r"])] == ["r"]
    assert cache.versions("io.x/alpha", []) == []


def test_a_cache_file_is_made_in_new_folders_and_kept_in_wal_mode(tmp_path: Path) -> None:
    """Its folders are made as needed; the file is in WAL mode, so a command reading the
    cache never waits for a sync writing it (and the mode stays with the file)."""
    path = tmp_path / "new" / "folders" / "d.sqlite3"
    cache = DiscoveryCache.open(path)
    cache.replace("r", [rec("io.x/alpha", "1.0.0")])
    assert cache.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert cache.path == path
    cache.close()
    again = DiscoveryCache.open(path)
    assert again.count("r") == 1
    again.close()


def test_a_cache_of_another_schema_version_is_rebuilt(tmp_path: Path) -> None:
    import sqlite3
    from contextlib import closing

    path = tmp_path / "d.sqlite3"
    cache = DiscoveryCache.open(path)
    cache.replace("r", [rec("io.x/alpha", "1.0.0")])
    cache.conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema'")
    cache.close()
    rebuilt = DiscoveryCache.open(path)
    assert rebuilt.count() == 0 and rebuilt.sync_state("r") is None
    assert rebuilt.conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == ("2",)
    rebuilt.close()
    with closing(sqlite3.connect(path)) as conn:  # the version is written once, and read back
        assert conn.execute("SELECT count(*) FROM meta WHERE key = 'schema'").fetchone() == (1,)
    DiscoveryCache.open(path).close()


def test_the_version_a_registry_marks_latest_is_the_one_searched() -> None:
    """Even an older one (a release republished as latest); with none marked, the highest
    version number, compared as numbers."""
    cache = DiscoveryCache.memory()
    cache.replace("r", [rec("io.x/alpha", "2.0.0", latest=False), rec("io.x/alpha", "1.5.0")])
    assert [h.version for h in cache.search("alpha")] == ["1.5.0"]
    cache.replace("r", [rec("io.x/alpha", "9.0.0", latest=False),
                        rec("io.x/alpha", "10.0.0", latest=False),
                        rec("io.x/alpha", "2.0.0", latest=False)])  # fmt: skip
    assert [h.version for h in cache.search("alpha")] == ["10.0.0"]
    latest = [(r.version, r.is_latest) for _, r in cache.versions("io.x/alpha")]
    assert latest == [("10.0.0", True), ("9.0.0", False), ("2.0.0", False)]


def test_a_search_gives_twenty_hits_unless_asked_for_more() -> None:
    cache = DiscoveryCache.memory()
    cache.replace("r", [rec(f"io.x/tool{n}", "1.0.0") for n in range(25)])
    assert len(cache.search("")) == 20
    assert len(cache.search("", limit=22)) == 22


def test_a_server_is_found_by_every_part_of_its_namespace() -> None:
    cache = DiscoveryCache.memory()
    cache.replace("r", [rec("io.acme/team/tool", "1.0.0", description="does things")])
    assert [h.name for h in cache.search("team")] == ["io.acme/team/tool"]
    assert [h.name for h in cache.search("acme")] == ["io.acme/team/tool"]


def test_a_corrupt_cache_is_rebuilt_without_its_leftover_journals(tmp_path: Path) -> None:
    db = tmp_path / "d.sqlite3"
    garbage = b"not a database" * 100
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{db}{suffix}").write_bytes(garbage)
    cache = DiscoveryCache.open(db)
    cache.replace("r", [rec("io.x/alpha", "1.0.0")])
    assert cache.count() == 1
    cache.close()
    for suffix in ("-wal", "-shm", "-journal"):
        left = Path(f"{db}{suffix}")
        assert not left.exists() or left.read_bytes() != garbage, suffix


def test_each_in_memory_cache_is_its_own_and_writes_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    one = DiscoveryCache.memory()
    one.replace("r", [rec("io.x/alpha", "1.0.0")])
    other = DiscoveryCache.memory()
    assert one.count() == 1 and other.count() == 0
    assert one.path is None and list(here.iterdir()) == []


# --- the switch to WAL while another connection holds the file ---------------------------


class _Clock:
    """The cache module's ``time``: a clock that moves only when it is slept on, the waits
    recorded, and ``on_sleep`` run at each (a lock given up, say)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []
        self.on_sleep = lambda: None

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += 1.0
        self.on_sleep()


def _locked(path: Path) -> tuple[sqlite3.Connection, sqlite3.Connection]:
    """A connection holding ``path`` exclusively, and one that wants WAL (no busy handler
    of its own, as for the journal switch)."""
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    return holder, sqlite3.connect(path, timeout=0)


def test_the_switch_to_wal_waits_for_a_connection_holding_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpctl.registry import cache as cache_module

    holder, conn = _locked(tmp_path / "c.db")
    clock = _Clock()
    clock.on_sleep = holder.rollback  # the other's switch done: the file is free
    monkeypatch.setattr(cache_module, "time", clock)
    cache_module._use_wal(conn)
    assert clock.slept == [0.02]  # once busy, then switched
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    conn.close()
    holder.close()


def test_the_switch_to_wal_is_given_up_after_its_patience(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpctl.registry import cache as cache_module

    holder, conn = _locked(tmp_path / "c.db")
    clock = _Clock()
    monkeypatch.setattr(cache_module, "time", clock)
    cache_module._use_wal(conn, patience=5.0)  # no error: the default journal is kept
    # Tried at 0, 1, ... 5 s (one wait each) and once more past the deadline.
    assert clock.slept == [0.02] * 6
    holder.rollback()
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    conn.close()
    holder.close()

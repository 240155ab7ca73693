"""The cache files: merged under a lock that is waited for a moment at most, and never
written larger than their readers take."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from mcpctl.config import cachefiles
from mcpctl.config.cachefiles import LOCK_TIMEOUT, fit_records, read_records, update_records
from mcpctl.config.model import ServerEntry
from mcpctl.config.store import acquire_lock
from mcpctl.probe.eras import (
    MAX_VERSION_CHARS,
    MAX_VERSIONS,
    MEMORY_FILENAME,
    MEMORY_MAX_BYTES,
    Era,
    EraMemory,
    describe_versions,
    kept_versions,
)


@pytest.fixture(autouse=True)
def no_stuck_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cachefiles, "_stuck", [])


def put(records: dict[str, dict[str, Any]]) -> Any:
    def change(known: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        return {**known, **records}

    return change


def test_a_record_too_large_for_the_file_is_left_out_and_the_rest_stays_readable(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cache.json"
    update_records(path, "r", 4096, put({"small": {"v": 1}}))
    written = update_records(path, "r", 4096, put({"huge": {"v": "x" * 10_000}, "b": {"v": 2}}))
    assert written == {"small": {"v": 1}, "b": {"v": 2}}
    assert path.stat().st_size <= 4096
    assert read_records(path, "r", 4096) == written


def test_the_oldest_records_go_first_until_the_file_fits() -> None:
    records = {f"k{i}": {"v": "x" * 100} for i in range(100)}
    content, kept = fit_records("r", records, 2000)
    assert len(content) <= 2000 and list(kept) == list(records)[-len(kept) :]
    assert json.loads(content) == {"format": 1, "r": kept}
    assert 10 < len(kept) < 20
    # A record nested deeper than JSON encoding goes is left out, not a crash.
    deep: dict[str, Any] = {}
    for _ in range(100_000):
        deep = {"a": deep}
    _, kept = fit_records("r", {"deep": deep, "ok": {"v": 1}}, 2000)
    assert kept == {"ok": {"v": 1}}


def test_a_held_lock_skips_the_write_after_a_short_wait_then_at_once(tmp_path: Path) -> None:
    path = tmp_path / "cache.json"
    release = acquire_lock(tmp_path / ".cache.json.lock", 0)
    try:
        started = time.monotonic()
        assert update_records(path, "r", 4096, put({"a": {}}), lock_timeout=0.3) is None
        assert 0.3 <= time.monotonic() - started < 0.3 + 1
        started = time.monotonic()  # stuck a moment ago: another cache is not waited for
        assert update_records(tmp_path / "other.json", "r", 4096, put({"a": {}})) is not None
        assert update_records(path, "r", 4096, put({"a": {}})) is None
        assert time.monotonic() - started < LOCK_TIMEOUT / 2
    finally:
        release()
    assert not path.exists()
    assert update_records(path, "r", 4096, put({"a": {}})) == {"a": {}}


def test_one_server_cannot_swell_the_era_memory(tmp_path: Path) -> None:
    versions = tuple(f"v{i:05d}-".ljust(1000, "x") for i in range(5000))
    dates = (*(f"2025-{m:02d}-01" for m in range(1, 13)), "2026-07-28")
    named = (*versions[:30], *(f"x{i}" for i in range(30)), *dates)
    memory = EraMemory.in_dir(tmp_path)
    memory.remember(ServerEntry(command="a"), Era("modern", "2026-07-28", named))
    memory.remember(ServerEntry(command="b"), Era("legacy", "2025-11-25", versions))
    assert (tmp_path / MEMORY_FILENAME).stat().st_size < MEMORY_MAX_BYTES // 100
    kept = EraMemory.in_dir(tmp_path).recall(ServerEntry(command="a"))
    assert kept is not None
    assert len(kept.supported) == MAX_VERSIONS and "2026-07-28" in kept.supported
    assert all(len(v) <= MAX_VERSION_CHARS for v in kept.supported)
    # Revisions (dates) first, the others in what room is left; in the server's order.
    assert kept.supported == ("x0", "x1", "x2", *dates)
    assert kept_versions(["a", "a", 3, "", "2025-11-25"]) == ("a", "2025-11-25")


def test_a_memory_file_written_before_the_caps_is_read_capped(tmp_path: Path) -> None:
    memory = EraMemory.in_dir(tmp_path)
    entry = ServerEntry(command="a")
    memory.remember(entry, Era("modern", "2026-07-28"))
    path = tmp_path / MEMORY_FILENAME
    data = json.loads(path.read_text())
    (record,) = data["eras"].values()
    record["supported"] = ["y" * 100, *(f"v{i}" for i in range(100))]
    path.write_text(json.dumps(data))
    found = EraMemory.in_dir(tmp_path).recall(entry)
    assert found is not None and found.supported == tuple(f"v{i}" for i in range(MAX_VERSIONS))


def test_a_list_of_versions_is_described_briefly() -> None:
    assert describe_versions([]) == "none named"
    assert describe_versions(["2025-06-18", "2025-11-25"]) == "2025-06-18, 2025-11-25"
    text = describe_versions(["v" * 1000] * 5000)
    assert len(text) < 150 and text.endswith("… (5,000 in all)")


def test_a_file_too_large_or_of_another_shape_reads_as_no_records(tmp_path: Path) -> None:
    path = tmp_path / "cache.json"
    records = {f"k{i}": {"v": "x" * 40} for i in range(100)}
    path.write_text(json.dumps({"format": 1, "r": records}))
    assert read_records(path, "r", path.stat().st_size) == records
    assert read_records(path, "r", path.stat().st_size - 1) == {}
    path.write_text(json.dumps([{"r": records}]))
    assert read_records(path, "r", 1 << 20) == {}
    path.write_text(json.dumps({"r": {"a": 1, "b": {"v": 1}, "c": [2], "d": None}}))
    assert read_records(path, "r", 1 << 20) == {"b": {"v": 1}}


def test_a_change_starts_from_no_records_when_the_file_is_too_large(tmp_path: Path) -> None:
    path = tmp_path / "cache.json"
    old = {f"k{i}": {"v": "x" * 40} for i in range(100)}
    path.write_text(json.dumps({"format": 1, "r": old}))
    assert path.stat().st_size > 4096
    assert update_records(path, "r", 4096, put({"new": {"v": 1}})) == {"new": {"v": 1}}
    assert read_records(path, "r", 4096) == {"new": {"v": 1}}


def test_the_file_is_compact_ascii_json() -> None:
    content, kept = fit_records("r", {"a": {"v": 1, "w": "café"}}, 4096)
    assert content == b'{"format":1,"r":{"a":{"v":1,"w":"caf\\u00e9"}}}\n'
    assert kept == {"a": {"v": 1, "w": "café"}}
    empty = b'{"format":1,"r":{}}\n'
    assert fit_records("r", {}, len(empty)) == (empty, {})
    with pytest.raises(ValueError, match=r"^19 bytes cannot hold a cache file$"):
        fit_records("r", {}, len(empty) - 1)


def test_records_are_kept_up_to_the_last_byte_the_limit_allows() -> None:
    records = {f"k{i:02d}": {"v": "x" * 5} for i in range(12)}
    for limit in range(20, 260):
        content, kept = fit_records("r", records, limit)
        assert len(content) <= limit, limit
        assert list(kept) == list(records)[len(records) - len(kept) :]
        if len(kept) < len(records):
            # The next older record would not have fitted (with a byte to spare).
            older = list(records)[len(records) - len(kept) - 1]
            bigger, _ = fit_records("r", {older: records[older], **kept}, 1 << 20)
            assert len(bigger) >= limit, limit
    only = {"k": {"v": "x" * 50}}
    whole, _ = fit_records("r", only, 1 << 20)
    assert fit_records("r", only, len(whole) + 1)[1] == only
    assert fit_records("r", only, len(whole))[1] == {}


def test_a_missing_folder_is_made_for_the_file_and_its_lock(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "cache.json"
    assert update_records(path, "r", 4096, put({"a": {"v": 1}})) == {"a": {"v": 1}}
    assert read_records(path, "r", 4096) == {"a": {"v": 1}}
    other = tmp_path / "c" / "d" / "cache.json"
    cachefiles.write_records(other, "r", {"a": {"v": 1}}, 4096)
    assert other.read_bytes() == b'{"format":1,"r":{"a":{"v":1}}}\n'
    cachefiles.write_records(other, "r", {"b": {"v": 2}}, 4096)  # the folder exists now
    assert read_records(other, "r", 4096) == {"b": {"v": 2}}


def test_a_file_that_cannot_be_written_is_left_as_it_was_without_an_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "cache.json"
    cachefiles.write_records(path, "r", {"a": {"v": 1}}, 4096)
    before = path.read_bytes()
    cachefiles.write_records(path, "r", {"b": {"v": 2}}, 5)  # too small: ValueError
    assert path.read_bytes() == before
    (tmp_path / "dir.json").mkdir()  # atomic_write's StorageError
    cachefiles.write_records(tmp_path / "dir.json", "r", {"b": {"v": 2}}, 4096)
    assert (tmp_path / "dir.json").is_dir()
    (tmp_path / "file").write_text("")  # its folder is a file: OSError
    cachefiles.write_records(tmp_path / "file" / "cache.json", "r", {"b": {}}, 4096)
    caplog.set_level("DEBUG", logger="mcpctl.config.cachefiles")
    assert update_records(path, "r", 5, put({"b": {"v": 2}})) is None
    assert path.read_bytes() == before
    assert [r.getMessage() for r in caplog.records] == [
        f"{path} was not written: 5 bytes cannot hold a cache file"
    ]


def test_a_skipped_write_says_why_in_a_debug_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("DEBUG", logger="mcpctl.config.cachefiles")
    (tmp_path / "file").write_text("")
    lock = tmp_path / "file" / ".cache.json.lock"
    assert update_records(tmp_path / "file" / "cache.json", "r", 4096, put({"a": {}})) is None
    (record,) = caplog.records
    assert record.getMessage().startswith(f"cannot lock {lock}: [Errno 17] File exists")
    assert record.getMessage().endswith("; the cache write is skipped")
    caplog.clear()
    path = tmp_path / "cache.json"
    release = acquire_lock(tmp_path / ".cache.json.lock", 0)
    try:
        assert update_records(path, "r", 4096, put({"a": {}}), lock_timeout=0.05) is None
    finally:
        release()
    assert [r.getMessage() for r in caplog.records] == [
        f"{tmp_path / '.cache.json.lock'} is locked by another process: the cache write is skipped"
    ]

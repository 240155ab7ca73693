"""Trust of a config file, in the library: the digest, the record, the rules, mcpctl's edits.

Every test here removes MCPCTL_TRUST and CI (the suite's fixture trusts every file): what is
checked is what a user gets with neither set.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpctl import ConfigStore, ServerEntry, TrustStore
from mcpctl.config.checks import entry_from_data
from mcpctl.config.loader import load_config
from mcpctl.config.trust import server_digest
from mcpctl.config.trustkeep import raw_digest
from mcpctl.config.trustrecord import RECORD_NAME, entry_digest, env_policy, quick_trusted
from mcpctl.errors import StorageError, UntrustedConfigError
from mcpctl.paths import Paths
from tests.conftest import ROOT, write_config

BASE: dict[str, Any] = {
    "command": "npx", "args": ["-y", "pkg@1.0.0"], "env": {"GH": "${GITHUB_TOKEN}"},
    "cwd": "/srv", "timeout": 5000, "description": "d", "protocol": "auto",
}  # fmt: skip
REMOTE: dict[str, Any] = {
    "url": "https://mcp.example.com/mcp", "transport": "sse",
    "headers": {"X-Key": "${KEY}"}, "auth": {"type": "bearer", "token": "${TOK}"},
}  # fmt: skip


@pytest.fixture(autouse=True)
def no_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCPCTL_TRUST", raising=False)
    monkeypatch.delenv("CI", raising=False)


@pytest.fixture
def store(isolated: Path) -> TrustStore:
    return TrustStore.from_paths(Paths.from_env())


def digest(data: dict[str, Any], name: str = "s") -> str:
    entry, issues = entry_from_data(name, data)
    assert entry is not None, issues
    return server_digest(entry)


# --- the digest --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base", "change"),
    [
        (BASE, {"command": "uvx"}),
        (BASE, {"args": ["-y", "pkg@1.0.1"]}),
        (BASE, {"args": ["-y", "pkg@1.0.0", "--x"]}),
        (BASE, {"cwd": "/tmp"}),
        (BASE, {"env": {"GH": "x"}}),  # a value as written
        (BASE, {"env": {"GH2": "${GITHUB_TOKEN}"}}),  # a name
        (BASE, {"env": {"GH": "${GITHUB_TOKEN}", "MORE": "1"}}),
        (BASE, {"inherit_env": True}),
        (BASE, {"inherit_env": ["AWS_SECRET_ACCESS_KEY"]}),
        (BASE, {"protocol": "legacy"}),
        (BASE, {"transport": "stdio"}),
        (REMOTE, {"url": "https://evil.example.com/mcp"}),
        (REMOTE, {"transport": "streamable-http"}),
        (REMOTE, {"headers": {"X-Key": "${OTHER}"}}),
        (REMOTE, {"headers": {"X-Other": "${KEY}"}}),
        (REMOTE, {"auth": {"type": "bearer", "token": "${GITHUB_TOKEN}"}}),
        (REMOTE, {"auth": {"type": "oauth"}}),
        (REMOTE, {"auth": {"type": "oauth", "client_secret": "${S}", "scopes": ["repo"]}}),
    ],
)
def test_what_decides_what_runs_changes_the_digest(
    base: dict[str, Any], change: dict[str, Any]
) -> None:
    assert digest({**base, **change}) != digest(base)


@pytest.mark.parametrize(
    "change",
    [
        {"description": "another"}, {"enabled": False}, {"timeout": 60000},
        {"groups": ["work"]}, {"tools": {"allow": ["read_*"], "deny": ["write"]}},
        {"sensitive": True}, {"source": {"registry": "r", "name": "n", "version": "2"}},
    ],
)  # fmt: skip
def test_cosmetic_fields_leave_the_digest(change: dict[str, Any]) -> None:
    assert digest({**BASE, **change}) == digest(BASE)


def test_defaults_written_out_are_the_same_entry() -> None:
    bare = {"command": "x"}
    spelled = {"command": "x", "args": [], "env": {}, "inherit_env": False}
    assert digest(spelled) == digest(bare)
    assert entry_digest(spelled) == entry_digest(bare)


@pytest.mark.parametrize(
    "data",
    [
        {"command": "x"},
        {"command": "x", "args": ["a", "${B}"], "env": {"A": "${A:-d}"}, "cwd": "/w"},
        {"command": "x", "inherit_env": ["HOME2"], "protocol": "modern", "transport": "stdio"},
        {"command": "x", "inherit_env": True, "args": [], "timeout": 5, "enabled": True},
        {"command": "x", "env": {"K": "caf\u00e9 \ud800"}, "groups": ["g"]},
        # auth as written: the default header name and empty fields are the model's defaults
        {"url": "https://x/mcp", "auth": {"type": "header", "name": "Authorization", "value": "v"}},
        {"url": "https://x/mcp", "auth": {"type": "header", "name": "X-Key", "value": "v"}},
        {"url": "https://x/mcp", "auth": {"type": "oauth", "scopes": []}},
    ],
)
def test_the_launchers_digest_of_the_raw_entry_is_the_models(data: dict[str, Any]) -> None:
    # `mcpctl run` digests the JSON as written (no model): it must agree with everything else.
    assert entry_digest(data) == digest(data) == raw_digest("s", data)


def test_the_digest_is_sha256_of_the_canonical_json() -> None:
    import hashlib

    from mcpctl.config.trustrecord import canonical, digest_of

    text = json.dumps(canonical(BASE), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    assert digest_of(canonical(BASE)) == "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def test_an_invalid_entry_still_has_a_digest_that_follows_it() -> None:
    assert raw_digest("s", {"command": 3}) != raw_digest("s", {"command": 4})
    assert raw_digest("s", [1]) != raw_digest("s", [2])
    # Only auth's empty fields are its defaults: an invalid env's are what was written.
    assert raw_digest("s", {"command": "x", "env": {"A": None}}) != raw_digest(
        "s", {"command": "x", "env": {}}
    )


# --- the environment ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "policy"),
    [
        ({}, None), ({"CI": "true"}, "CI"), ({"CI": "1"}, "CI"), ({"CI": "false"}, None),
        ({"CI": "true", "MCPCTL_TRUST": "0"}, None), ({"MCPCTL_TRUST": "1"}, "MCPCTL_TRUST=1"),
        ({"MCPCTL_TRUST": "1", "CI": "true"}, "MCPCTL_TRUST=1"), ({"MCPCTL_TRUST": "0"}, None),
        ({"MCPCTL_TRUST": "maybe"}, None),
    ],
)  # fmt: skip
def test_the_environment_policy(env: dict[str, str], policy: str | None) -> None:
    assert env_policy(env) == policy


# --- the store ---------------------------------------------------------------------------


def project(tmp_path: Path, data: dict[str, Any]) -> tuple[Path, dict[str, ServerEntry]]:
    """A project's config file (outside mcpctl's config dir), and its servers."""
    folder = tmp_path / "repo"
    folder.mkdir(exist_ok=True)
    path = write_config(folder / "external-mcps.json", data)
    return path, load_config(path).config.entries


def test_a_project_file_is_trusted_per_server_and_by_content(
    tmp_path: Path, store: TrustStore
) -> None:
    path, entries = project(tmp_path, {"a": {"command": "a"}, "b": {"command": "b"}})
    status = store.check(path, entries)
    assert status.reason is None and status.waiting() == ["a", "b"] and not status.trusted
    assert store.trust(path, entries) == ["a", "b"]
    assert store.check(path, entries).trusted
    assert store.is_trusted(path, "a", entries["a"])
    # A pull changes b and adds c: only those wait, a stays trusted.
    path, entries = project(
        tmp_path, {"a": {"command": "a"}, "b": {"command": "b2"}, "c": {"command": "c"}}
    )
    status = store.check(path, entries)
    assert status.waiting() == ["b", "c"]
    assert {n: s.state for n, s in status.servers.items()} == {
        "a": "trusted", "b": "changed", "c": "new"}  # fmt: skip
    store.require(path, {"a": entries["a"]})  # a alone may run
    with pytest.raises(UntrustedConfigError) as caught:
        store.require(path, entries)
    err = caught.value
    assert err.exit_code == 2 and err.code == "untrusted_config" and err.names == ("b", "c")
    assert str(path) in err.message and "2 servers wait for approval" in err.message
    assert f"mcpctl trust {path}" in err.message and "\n" not in err.message
    assert store.trust(path, entries) == ["b", "c"]
    assert store.check(path, entries).trusted


def test_the_users_own_file_and_the_environment_trust_the_whole_file(
    tmp_path: Path, store: TrustStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = Paths.from_env()
    paths.config_dir.mkdir(parents=True)
    own = write_config(paths.config_dir / "external-mcps.json", {"a": {"command": "a"}})
    entries = load_config(own).config.entries
    assert store.check(own, entries).reason == "own" and store.check(own, entries).trusted
    assert not store.record.exists()  # nothing recorded, nothing read
    path, entries = project(tmp_path, {"a": {"command": "a"}})
    assert not store.check(path, entries).trusted
    monkeypatch.setenv("CI", "true")
    assert store.check(path, entries).reason == "CI"
    monkeypatch.setenv("MCPCTL_TRUST", "0")
    assert not store.check(path, entries).trusted
    monkeypatch.setenv("MCPCTL_TRUST", "1")
    assert store.check(path, entries).reason == "MCPCTL_TRUST=1"
    assert TrustStore.from_paths(paths, environ={}).check(path, entries).waiting() == ["a"]


def test_the_record_holds_digests_never_a_value(tmp_path: Path, store: TrustStore) -> None:
    value = "canary-literal-value-0123456789"
    path, entries = project(tmp_path, {"a": {"command": "a", "env": {"NOT_SECRET": value}}})
    store.trust(path, entries)
    text = store.record.read_text()
    assert value not in text and "NOT_SECRET" not in text
    record = json.loads(text)
    assert list(record["files"]) == [os.path.realpath(path)]
    assert oct(store.record.stat().st_mode & 0o777) == "0o600"


def test_untrust_and_files(tmp_path: Path, store: TrustStore) -> None:
    path, entries = project(tmp_path, {"a": {"command": "a"}})
    store.trust(path, entries)
    [listed] = store.files()
    assert listed.path == os.path.realpath(path) and listed.servers == ("a",) and listed.exists
    assert store.untrust(path) and not store.untrust(path)
    assert store.files() == [] and not store.check(path, entries).trusted


def test_a_symlink_to_the_file_is_the_file(tmp_path: Path, store: TrustStore) -> None:
    path, entries = project(tmp_path, {"a": {"command": "a"}})
    store.trust(path, entries)
    link = tmp_path / "link.json"
    link.symlink_to(path)
    assert store.check(link, entries).trusted


@pytest.mark.parametrize("kind", ["fifo", "huge", "garbage", "shape", "directory", "deep"])
def test_a_hostile_record_trusts_nothing_and_never_crashes(
    tmp_path: Path, store: TrustStore, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, entries = project(tmp_path, {"a": {"command": "a"}})
    store.trust(path, entries)
    good = store.record.read_text()
    store.record.unlink()
    if kind == "fifo":
        os.mkfifo(store.record)
    elif kind == "huge":
        monkeypatch.setenv("MCPCTL_MAX_FILE_BYTES", "100")
        store.record.write_text(good)
    elif kind == "garbage":
        store.record.write_bytes(b"\xff\xfe not json at all")
    elif kind == "shape":
        real = os.path.realpath(path)
        store.record.write_text(json.dumps({"files": {real: {"servers": {"a": "sha256:x"}},
                                                      "relative": {"servers": {"a": []}}}}))  # fmt: skip
    elif kind == "directory":
        store.record.mkdir()
    else:
        store.record.write_text("[" * 100000 + "]" * 100000)
    status = store.check(path, entries)  # returns at once, even from a FIFO
    assert status.waiting() == ["a"]
    assert quick_trusted(str(path), "a", {"command": "a"}, {}) is False
    assert store.files() == []
    if kind in ("garbage", "shape", "deep"):  # replaced by the next approval
        store.trust(path, entries)
        assert store.check(path, entries).trusted
    else:  # not a file to replace: said, with the remedy
        with pytest.raises(StorageError, match="cannot record what is trusted") as caught:
            store.trust(path, entries)
        assert str(store.record) in (caught.value.hint or "")


CONCURRENT = """
import sys
from mcpctl import TrustStore
from mcpctl.config.loader import load_config
from mcpctl.paths import Paths
path = sys.argv[1]
TrustStore.from_paths(Paths.from_env()).trust(path, load_config(path).config.entries)
"""


def test_concurrent_approvals_lose_nothing(tmp_path: Path, store: TrustStore) -> None:
    files = []
    for i in range(8):
        folder = tmp_path / f"repo{i}"
        folder.mkdir()
        files.append(write_config(folder / "external-mcps.json", {f"s{i}": {"command": "x"}}))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", CONCURRENT, str(f)], env=env) for f in files]
    for proc in procs:
        assert proc.wait(timeout=120) == 0
    assert sorted(f.path for f in store.files()) == sorted(os.path.realpath(f) for f in files)


# --- mcpctl's own edits ------------------------------------------------------------------


def test_mcpctl_edits_keep_the_trust(tmp_path: Path, store: TrustStore) -> None:
    path, entries = project(tmp_path, {"a": {"command": "a", "source": {
        "registry": "r", "name": "n", "version": "1"}}})  # fmt: skip
    store.trust(path, entries)
    cs = ConfigStore.from_paths(Paths.from_env(path))

    def states() -> dict[str, str]:
        loaded = load_config(path).config.entries
        return {n: s.state for n, s in store.check(path, loaded).servers.items()}

    cs.add("b", ServerEntry(command="b"))
    cs.set_enabled("a", False)
    cs.add_to_group("g", ["a", "b"])
    cs.update(lambda doc: doc["a"].update(args=["--v2"]), action="upgrade a")
    assert states() == {"a": "trusted", "b": "trusted"}
    cs.remove(["b"])
    assert states() == {"a": "trusted"}


def test_an_add_to_an_untrusted_file_trusts_only_what_it_adds(
    tmp_path: Path, store: TrustStore
) -> None:
    path, _ = project(tmp_path, {"hostile": {"command": "sh", "args": ["-c", "x"]}})
    cs = ConfigStore.from_paths(Paths.from_env(path))
    cs.add("mine", ServerEntry(command="mine"))
    # An edit of an untrusted server (an upgrade keeps the rest of it) leaves it untrusted.
    cs.update(lambda doc: doc["hostile"].update(args=["-c", "y"]), action="upgrade hostile")
    cs.set_enabled("hostile", False)
    loaded = load_config(path).config.entries
    assert store.check(path, loaded).waiting() == ["hostile"]
    # Written in full for the user (add --force) replaces it: trusted.
    cs.add("hostile", ServerEntry(command="mine2"), force=True)
    assert store.check(path, load_config(path).config.entries).trusted


def test_an_add_force_that_changes_nothing_still_makes_the_server_the_users(
    tmp_path: Path, store: TrustStore
) -> None:
    path, _ = project(tmp_path, {"s": {"command": "s", "args": ["x"]}, "t": {"command": "t"}})
    before = path.read_bytes()
    cs = ConfigStore.from_paths(Paths.from_env(path))
    assert cs.add("s", ServerEntry(command="s", args=("x",)), force=True).replaced
    assert path.read_bytes() == before  # nothing to write
    assert store.check(path, load_config(path).config.entries).waiting() == ["t"]


def test_undo_restores_trust_only_for_content_trusted_before(
    tmp_path: Path, store: TrustStore
) -> None:
    path, entries = project(tmp_path, {"a": {"command": "a1"}})
    store.trust(path, entries)
    cs = ConfigStore.from_paths(Paths.from_env(path))
    cs.update(lambda doc: doc["a"].update(command="a2"), action="upgrade a")
    cs.undo()  # back to a1, approved before
    assert store.check(path, load_config(path).config.entries).trusted
    # A pull brings an unapproved b; mcpctl's next change is undone: b is still untrusted.
    write_config(path, {"a": {"command": "a1"}, "b": {"command": "b"}})
    cs.add("c", ServerEntry(command="c"))
    cs.undo()
    assert store.check(path, load_config(path).config.entries).waiting() == ["b"]
    # An undo --force to a version nobody approved trusts nothing of it.
    write_config(path, {"a": {"command": "evil"}})
    cs.add("d", ServerEntry(command="d"))
    write_config(path, {"a": {"command": "a1"}, "d": {"command": "d"}})
    cs.undo(force=True)
    assert store.check(path, load_config(path).config.entries).waiting() == ["a"]


def test_the_users_own_file_keeps_no_record(isolated: Path, store: TrustStore) -> None:
    cs = ConfigStore.from_paths(Paths.from_env(Paths.from_env().config_dir / "external-mcps.json"))
    cs.add("a", ServerEntry(command="a"))
    assert not store.record.exists()
    # A library caller's store of that file, made without the paths, knows it too.
    ConfigStore(cs.path).add("b", ServerEntry(command="b"))
    assert not store.record.exists()


def test_an_edit_that_cannot_record_trust_changes_nothing(
    tmp_path: Path, store: TrustStore
) -> None:
    path, _ = project(tmp_path, {"a": {"command": "a"}})
    store.record.parent.mkdir(parents=True, exist_ok=True)
    store.record.mkdir()
    before = path.read_text()
    with pytest.raises(StorageError):
        ConfigStore.from_paths(Paths.from_env(path)).add("b", ServerEntry(command="b"))
    assert path.read_text() == before


def test_a_library_store_keeps_the_trust_in_the_environments_state_dir(
    tmp_path: Path, store: TrustStore
) -> None:
    path, _ = project(tmp_path, {})
    ConfigStore(path).add("b", ServerEntry(command="b"))
    assert store.check(path, load_config(path).config.entries).trusted
    assert store.record == Paths.from_env().state_dir / RECORD_NAME


# --- what mutation testing found unpinned -------------------------------------------------


@pytest.mark.parametrize(
    ("env", "policy"),
    [
        ({"MCPCTL_TRUST": " TRUE "}, "MCPCTL_TRUST=1"), ({"MCPCTL_TRUST": "On"}, "MCPCTL_TRUST=1"),
        ({"CI": " Yes\n"}, "CI"), ({"MCPCTL_TRUST": " Off ", "CI": "true"}, None),
        ({"MCPCTL_TRUST": "NO", "CI": "1"}, None),
    ],
)  # fmt: skip
def test_the_environment_is_read_without_regard_to_case_or_blanks(
    env: dict[str, str], policy: str | None
) -> None:
    assert env_policy(env) == policy


def test_the_record_is_written_indented_with_sorted_keys_and_a_final_newline() -> None:
    from mcpctl.config.trustrecord import dump_record, load_record

    digest_a = "sha256:" + "a" * 64
    files = {"/p/x.json": {"servers": {"s": [digest_a]}, "trusted_at": "t", "client": "c"}}
    raw = dump_record(files)
    assert raw.decode("utf-8") == (
        '{\n  "files": {\n    "/p/x.json": {\n      "client": "c",\n      "servers": {\n'
        f'        "s": [\n          "{digest_a}"\n        ]\n      }},\n'
        '      "trusted_at": "t"\n    }\n  },\n  "mcpctl_trust": 1\n}\n'
    )
    assert load_record(raw) == files


def test_the_launchers_quick_check_agrees_with_the_store(tmp_path: Path, store: TrustStore) -> None:
    path, entries = project(tmp_path, {"a": {"command": "a"}, "b": {"command": "b"}})
    assert quick_trusted(str(path), "a", {"command": "a"}, {}) is False
    store.trust(path, {"a": entries["a"]})
    assert quick_trusted(str(path), "a", {"command": "a", "args": []}, {}) is True
    assert quick_trusted(str(path), "a", {"command": "a2"}, {}) is False  # changed since
    assert quick_trusted(str(path), "b", {"command": "b"}, {}) is False  # never approved
    link = tmp_path / "link.json"
    link.symlink_to(path)
    assert quick_trusted(str(link), "a", {"command": "a"}, {}) is True  # the file's real path
    elsewhere = write_config(tmp_path / "other.json", {"a": {"command": "a"}})
    assert quick_trusted(str(elsewhere), "a", {"command": "a"}, {}) is False
    # The environment trusts every file, as the store's policy does.
    assert quick_trusted(str(elsewhere), "a", {"command": "a"}, {"CI": "true"}) is True
    assert quick_trusted(str(elsewhere), "a", {"command": "a"}, {"MCPCTL_TRUST": "1"}) is True
    # The user's own file needs no record.
    Paths.from_env().config_dir.mkdir(parents=True)
    own = write_config(Paths.from_env().config_dir / "external-mcps.json", {"z": {"command": "z"}})
    assert quick_trusted(str(own), "z", {"command": "z"}, {}) is True


def test_the_first_digest_of_a_process_loads_sha256(monkeypatch: pytest.MonkeyPatch) -> None:
    import hashlib

    from mcpctl.config import trustrecord

    monkeypatch.setattr(trustrecord, "_SHA256", [])  # as in a fresh launcher process
    expected = "sha256:" + hashlib.sha256(b'{"command":"x"}').hexdigest()
    assert trustrecord.digest_of({"command": "x"}) == expected
    assert trustrecord.digest_of({"command": "x"}) == expected  # and again, from the cache


def test_the_users_own_file_as_named_or_resolved(tmp_path: Path) -> None:
    from mcpctl.config.trustrecord import is_own

    base, sibling = tmp_path / "cfg", tmp_path / "cfg2"
    for folder in (base, sibling):
        folder.mkdir()
        (folder / "f.json").write_text("{}")
    outside = tmp_path / "out.json"
    outside.write_text("{}")
    assert is_own(base / "f.json", base)
    assert not is_own(sibling / "f.json", base)  # a folder whose name only starts the same
    assert not is_own(outside, base)
    (base / "named.json").symlink_to(outside)
    assert is_own(base / "named.json", base)  # under the config dir as named
    (tmp_path / "resolved.json").symlink_to(base / "f.json")
    assert is_own(tmp_path / "resolved.json", base)  # under it once resolved


def test_the_record_keeps_only_what_has_its_shape() -> None:
    from mcpctl.config.trustrecord import MAX_HISTORY, parse_record

    good = "sha256:" + "b" * 64
    document = {
        "files": {
            "/a.json": 3,
            "relative.json": {"servers": {"s": [good]}},
            "/b.json": {"servers": {"s": ["sha256:x", 7, good], "t": "no", "u": []}, "client": "c"},
            "/c.json": {"servers": {"s": [good] * (MAX_HISTORY + 5)}},
        }
    }
    assert parse_record(document) == {
        "/b.json": {"servers": {"s": [good]}, "client": "c"},
        "/c.json": {"servers": {"s": [good] * MAX_HISTORY}},
    }


def test_a_files_servers_and_reason_shown_in_full(tmp_path: Path, store: TrustStore) -> None:
    path, entries = project(tmp_path, {"a": {"command": "a"}, "b": {"command": "b"}})
    store.trust(path, {"a": entries["a"]})
    status = store.check(path, entries)
    assert status.real == os.path.realpath(path) and status.client is None
    assert status.servers == {
        "a": ("a", "trusted", digest({"command": "a"})),
        "b": ("b", "new", digest({"command": "b"})),
    }
    # A file trusted whole: the servers are worked out only when asked for.
    trusting = TrustStore.from_paths(Paths.from_env(), environ={"CI": "true"})
    assert trusting.policy() == "CI" and trusting.check(path, entries).servers == {}
    assert trusting.check_digests(path, {"a": digest({"command": "a"})}).servers == {}
    shown = trusting.check(path, entries, always=True)
    assert shown.reason == "CI" and {n: s.state for n, s in shown.servers.items()} == {
        "a": "trusted", "b": "new"}  # fmt: skip
    assert store.policy() is None
    by_client = store.check_digests(path, {"a": digest({"command": "a"})}, client="cursor")
    assert by_client.client == "cursor" and by_client.trusted


def test_the_users_own_file_by_the_store(tmp_path: Path, store: TrustStore) -> None:
    config_dir = Paths.from_env().config_dir
    assert store.is_own(config_dir / "external-mcps.json")
    assert not store.is_own(tmp_path / "repo" / "external-mcps.json")
    assert not TrustStore(store.record).is_own(config_dir / "external-mcps.json")


def test_an_approval_is_dated_names_its_client_and_keeps_the_contents_before(
    tmp_path: Path, store: TrustStore
) -> None:
    from datetime import UTC, datetime, timedelta

    path, _ = project(tmp_path, {"a": {"command": "a1"}})
    store.trust_digests(path, {"a": digest({"command": "a1"})}, client="cursor")
    [listed] = store.files()
    assert listed.client == "cursor" and listed.trusted_at is not None
    at = datetime.fromisoformat(listed.trusted_at)
    assert at.tzinfo is not None and abs(datetime.now(UTC) - at) < timedelta(minutes=5)
    assert listed.to_dict() == {
        "path": os.path.realpath(path), "servers": ["a"], "trusted_at": listed.trusted_at,
        "client": "cursor", "exists": True}  # fmt: skip
    # Approved again as a2 and then a1 once more: a1 is not kept twice, a2 is kept.
    store.trust_digests(path, {"a": digest({"command": "a2"})})
    assert store.files()[0].client is None
    store.trust_digests(path, {"a": digest({"command": "a1"})})
    record = json.loads(store.record.read_text())["files"][os.path.realpath(path)]
    assert record["servers"]["a"] == [digest({"command": "a1"}), digest({"command": "a2"})]


def test_the_record_is_locked_where_the_store_is_told(tmp_path: Path) -> None:
    locks = tmp_path / "my-locks"
    store = TrustStore(tmp_path / "state" / "trust.json", locks=locks)
    path, entries = project(tmp_path, {"a": {"command": "a"}})
    store.trust(path, entries)
    assert [p.suffix for p in locks.iterdir()] == [".lock"]


def test_the_store_of_some_paths_or_the_platforms_dirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    given = Paths(home=tmp_path / "given")
    store = TrustStore.from_paths(given, environ={})
    assert store.record == tmp_path / "given" / "state" / RECORD_NAME
    assert store.config_dir == tmp_path / "given" / "config"
    assert store.locks == tmp_path / "given" / "state" / "locks" and store.environ == {}
    # No MCPCTL_HOME: the platform's dirs, as Paths finds them (XDG's rules here).
    monkeypatch.delenv("MCPCTL_HOME")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xc"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xs"))
    store = TrustStore.from_paths()
    paths = Paths.from_env()
    assert store.config_dir == paths.config_dir and store.record.parent == paths.state_dir
    if sys.platform == "linux":
        assert store.record == tmp_path / "xs" / "mcpctl" / RECORD_NAME
        assert store.config_dir == tmp_path / "xc" / "mcpctl"
        assert store.locks == tmp_path / "xs" / "mcpctl" / "locks"


def test_the_servers_a_change_writes() -> None:
    from mcpctl.config.trustkeep import touched

    before = {"$schema": "x", "a": {"command": "a"}, "b": {"command": "b"}}
    after = {"$schema": "y", "a": {"command": "a"}, "b": {"command": "b2"}, "c": {"command": "c"}}
    assert touched(before, after) == ["b", "c"]  # "$schema" is no server
    assert touched(before, after, authored=["a"]) == ["a", "b", "c"]


def test_what_an_edit_keeps_approved_in_the_record() -> None:
    from mcpctl.config.trustkeep import keep_edit

    a1, a2 = {"command": "a1"}, {"command": "a2"}
    d1, d2 = raw_digest("a", a1), raw_digest("a", a2)
    files: dict[str, dict[str, object]] = {}
    assert keep_edit(files, "/f", {"a": a1}, {"a": a1}) is False and files == {}
    assert keep_edit(files, "/f", {"a": a1}, {"a": a1}, authored=["a"]) is True
    assert files == {"/f": {"servers": {"a": [d1]}}}
    # A record's item of the wrong shape gets servers, keeping the rest.
    files = {"/f": {"servers": 3, "client": "c"}}
    assert keep_edit(files, "/f", {}, {"n": a1}) is True
    assert files == {"/f": {"servers": {"n": [raw_digest("n", a1)]}, "client": "c"}}
    # A server already approved as it is now is skipped, the next one still recorded.
    files = {"/f": {"servers": {"a": [d1]}}}
    assert keep_edit(files, "/f", {}, {"a": a1, "b": a2}) is True
    assert files["/f"]["servers"] == {"a": [d1], "b": [raw_digest("b", a2)]}
    # A change of an untrusted server adds nothing; of a trusted one, its new content.
    assert keep_edit({}, "/f", {"x": a1}, {"x": a2}) is False
    files = {"/f": {"servers": {"a": [d1]}}}
    assert keep_edit(files, "/f", {"a": a1}, {"a": a2}) is True
    assert files["/f"]["servers"] == {"a": [d2, d1]}


def test_an_invalid_entrys_digest_leaves_out_what_changes_nothing() -> None:
    assert raw_digest("s", {"command": 3, "description": "a"}) == raw_digest(
        "s", {"command": 3, "description": "b"}
    )


def test_a_listed_files_date_and_client_are_texts_or_nothing(
    tmp_path: Path, store: TrustStore
) -> None:
    path, entries = project(tmp_path, {"a": {"command": "a"}})
    store.trust(path, entries)
    record = json.loads(store.record.read_text())
    record["files"][os.path.realpath(path)].update(trusted_at=5, client=["cursor"])
    store.record.write_text(json.dumps(record))
    [listed] = store.files()
    assert listed.trusted_at is None and listed.client is None and listed.servers == ("a",)

"""Registries: the v0.1 client against a real local HTTP registry, the cache, conversion."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpctl.config.checks import entry_from_data
from mcpctl.errors import UsageError
from mcpctl.registry import DiscoveryCache, RegistryClient, RegistryError, entry_from_server_json
from mcpctl.registry.convert import default_name
from mcpctl.registry.records import clean_text, record_from_json, version_key
from mcpctl.registry.sources import RegistrySource, refresh, sync_source
from tests.conftest import Cli, write_config
from tests.registry.server import OFFICIAL, Registry, make_record, serve


@pytest.fixture
def registry() -> Iterator[tuple[Registry, str]]:
    records = [make_record(f"io.example/server-{i:03d}", updated=f"2025-11-01T00:00:{i % 60:02d}Z")
               for i in range(250)]  # fmt: skip
    records += [
        make_record("io.example/weather", "1.0.0", latest=False, title="Weather"),
        make_record("io.example/weather", "1.2.0", title="Weather", description="Forecasts"),
        make_record("com.acme/filesystem", title="Files", description="Read and write files"),
        make_record("org.other/notes", title="Notes", description="Keeps filesystem notes"),
        make_record("io.example/old", status="deprecated"),
    ]
    reg = Registry(records)
    server, url = serve(reg)
    yield reg, url
    server.shutdown()
    server.server_close()


def fast_client(url: str, **kw: Any) -> RegistryClient:
    return RegistryClient(url, timeout=kw.pop("timeout", 2.0), sleep=lambda s: None, **kw)


def test_full_sync_pages_through_everything(registry: tuple[Registry, str]) -> None:
    reg, url = registry
    cache = DiscoveryCache.memory()
    outcome = sync_source(cache, RegistrySource("local", "http", url),
                          client_factory=lambda u, timeout: fast_client(u))  # type: ignore[arg-type,misc]  # fmt: skip
    assert outcome.mode == "full" and outcome.records == 255
    assert sum("/v0.1/servers?" in r for r in reg.requests) == 3  # 100 + 100 + 55
    hits = cache.search("weather")
    assert hits[0].name == "io.example/weather" and hits[0].version == "1.2.0"


def test_incremental_sync_applies_changes_and_deletions(registry: tuple[Registry, str]) -> None:
    reg, url = registry
    cache = DiscoveryCache.memory()
    source = RegistrySource("local", "http", url)
    factory: Any = lambda u, timeout: fast_client(u)  # noqa: E731
    sync_source(cache, source, client_factory=factory)
    reg.records[0]["_meta"][OFFICIAL].update(status="deleted", updatedAt="2025-12-24T00:00:00Z")
    reg.records.append(make_record("io.example/new-thing", updated="2025-12-24T00:00:01Z"))
    reg.changed()
    reg.requests.clear()
    outcome = sync_source(cache, source, client_factory=factory)
    assert outcome.mode == "incremental" and outcome.records == 2
    assert all("updated_since=" in r for r in reg.requests)
    assert cache.search("new-thing")[0].name == "io.example/new-thing"
    assert not [h for h in cache.search("server-000") if h.name == "io.example/server-000"]
    assert cache.search("server-000", all_status=True)[0].status == "deleted"


def test_retries_honour_retry_after(registry: tuple[Registry, str]) -> None:
    reg, url = registry
    reg.fail_first = 2
    slept: list[float] = []
    client = RegistryClient(url, timeout=2, sleep=slept.append)
    assert len(list(client.iter_records())) == 255
    assert slept == [0.0, 0.0]


@pytest.mark.parametrize(("mode", "needle"), [
    ("500", "HTTP 500"), ("invalid_json", "not valid JSON"), ("huge", "larger than"), ("hang", "timed out"),
])  # fmt: skip
def test_faults_raise_registry_error_and_keep_the_cache(
    registry: tuple[Registry, str], mode: str, needle: str
) -> None:
    reg, url = registry
    cache = DiscoveryCache.memory()
    source = RegistrySource("local", "http", url)
    factory: Any = lambda u, timeout: fast_client(u, timeout=0.5, retries=1)  # noqa: E731
    sync_source(cache, source, client_factory=factory)
    before = cache.count("local")
    reg.mode = mode
    start = time.monotonic()
    with pytest.raises(RegistryError, match=needle):
        sync_source(cache, source, full=True, client_factory=factory)
    assert time.monotonic() - start < 4
    assert cache.count("local") == before


def test_wrong_field_types_are_skipped(registry: tuple[Registry, str]) -> None:
    reg, url = registry
    reg.mode = "wrong_types"
    assert list(fast_client(url).iter_records()) == []


def test_nothing_listening_fails_fast() -> None:
    start = time.monotonic()
    with pytest.raises(RegistryError, match="cannot reach"):
        list(fast_client("http://127.0.0.1:9").iter_records())
    assert time.monotonic() - start < 3


def test_versions_and_quoted_names(registry: tuple[Registry, str]) -> None:
    _, url = registry
    client = fast_client(url)
    assert sorted(r.version for r in client.versions("io.example/weather")) == ["1.0.0", "1.2.0"]
    assert client.version("io.example/weather").version == "1.2.0"
    with pytest.raises(RegistryError, match="404"):
        client.version("io.example/nope")


def test_ranking_weights_fields() -> None:
    cache = DiscoveryCache.memory()
    recs = [record_from_json(make_record(n, title=t, description=d)) for n, t, d in [
        ("org.other/notes", "Notes", "Keeps filesystem notes"),
        ("com.acme/filesystem-extra", "Extra", "More"),
        ("io.x/files", "Filesystem browser", "Browse"),
        ("com.acme/filesystem", "Files", "Read and write"),
    ]]  # fmt: skip
    cache.replace("r", [r for r in recs if r])
    assert [h.name for h in cache.search("filesystem")] == [
        "com.acme/filesystem", "com.acme/filesystem-extra", "io.x/files", "org.other/notes",
    ]  # fmt: skip


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


# --- conversion ---------------------------------------------------------------------------


def convert(server: dict[str, Any], **kw: Any) -> Any:
    rec = record_from_json({"server": {"name": "io.x/demo", "version": "2.0.0", **server}})
    assert rec is not None
    conv = entry_from_server_json(rec, registry="r", **kw)
    _, issues = entry_from_data("demo", conv.entry.to_data())
    assert issues == [], issues
    return conv


def test_npm_with_secret_env_and_args() -> None:
    conv = convert({"packages": [{
        "registryType": "npm", "identifier": "@x/demo", "version": "2.0.0",
        "environmentVariables": [{"name": "API_KEY", "isSecret": True, "isRequired": True},
                                 {"name": "REGION", "default": "eu"}],
        "packageArguments": [{"type": "positional", "value": "serve"},
                             {"type": "named", "name": "--port", "default": "8080"}],
    }]})  # fmt: skip
    e = conv.entry
    assert (e.command, e.args) == ("npx", ("-y", "@x/demo@2.0.0", "serve", "--port", "8080"))
    assert e.env == {"API_KEY": "${API_KEY}", "REGION": "eu"}
    assert conv.secrets == ["API_KEY"] and e.source is not None and e.source.version == "2.0.0"


def test_pypi_with_runtime_args_and_latest_quirk() -> None:
    conv = convert({"packages": [{"registryType": "pypi", "identifier": "demo-mcp", "version": "latest",
                                  "runtimeArguments": [{"type": "named", "name": "--python", "value": "3.12"}]}]})  # fmt: skip
    assert (conv.entry.command, conv.entry.args) == ("uvx", ("--python", "3.12", "demo-mcp==2.0.0"))
    assert conv.notes


def test_oci_and_nuget() -> None:
    oci = convert({"packages": [{"registryType": "oci", "identifier": "ghcr.io/x/demo", "version": "2.0.0",
                                 "environmentVariables": [{"name": "TOKEN", "isSecret": True}]}]})  # fmt: skip
    assert oci.entry.args == ("run", "-i", "--rm", "-e", "TOKEN", "ghcr.io/x/demo:2.0.0")
    assert oci.entry.env == {"TOKEN": "${TOKEN}"}
    nuget = convert({"packages": [{"registryType": "nuget", "identifier": "Demo.Mcp", "version": "2.0.0",
                                   "packageArguments": [{"type": "positional", "value": "x"}]}]})  # fmt: skip
    assert (nuget.entry.command, nuget.entry.args) == (
        "dnx",
        ("Demo.Mcp@2.0.0", "--yes", "--", "x"),
    )


def test_mcpb_only_is_a_clear_error() -> None:
    with pytest.raises(UsageError, match="mcpb"):
        convert({"packages": [{"registryType": "mcpb", "identifier": "https://x/demo.mcpb"}]})


def test_remote_with_secret_header_template_and_url_variable() -> None:
    conv = convert({"remotes": [{
        "type": "sse", "url": "https://{tenant}.example.com/sse",
        "variables": {"tenant": {"description": "Your tenant", "isRequired": True}},
        "headers": [{"name": "Authorization", "value": "Bearer {api_key}", "isSecret": True}],
    }]}, env={"TENANT": "acme"})  # fmt: skip
    e = conv.entry
    assert (e.url, e.transport) == ("https://acme.example.com/sse", "sse")
    assert e.headers == {"Authorization": "Bearer ${API_KEY}"} and conv.secrets == ["API_KEY"]


def test_missing_required_inputs_are_listed() -> None:
    conv = convert({"packages": [{"registryType": "pypi", "identifier": "d", "version": "1",
                                  "packageArguments": [{"type": "named", "name": "--repository", "isRequired": True}],
                                  "environmentVariables": [{"name": "HOST", "isRequired": True}]}]})  # fmt: skip
    assert [(m.name, m.flag) for m in conv.missing] == [
        ("HOST", "--env HOST=..."),
        ("REPOSITORY", "--env REPOSITORY=..."),
    ]


def test_prefer_and_package_type() -> None:
    server = {"packages": [{"registryType": "npm", "identifier": "@x/d", "version": "1"}],
              "remotes": [{"type": "streamable-http", "url": "https://x.example/mcp"}]}  # fmt: skip
    assert convert(server).entry.command == "npx"
    assert convert(server, prefer="remote").entry.url == "https://x.example/mcp"
    with pytest.raises(UsageError, match="no pypi package"):
        convert(server, package_type="pypi")


def test_default_name_rule() -> None:
    assert default_name("io.github.acme/weather") == "weather"
    assert default_name("io.github.acme/weather", {"weather"}) == "acme-weather"
    assert (
        default_name("io.github.acme/weather", {"weather", "acme-weather"})
        == "io-github-acme-weather"
    )
    assert default_name("io.x/we ird!") == "we-ird"


def test_every_record_of_a_dump_shaped_sample_converts_or_says_why() -> None:
    samples = [
        make_record("a/npm"),
        make_record("a/remote", packages=[], remotes=[{"type": "streamable-http", "url": "https://r.example/mcp",
                                                        "headers": [{"name": "X-Key", "isSecret": True}]}]),
        {"server": {"name": "a/quirky", "version": "1", "repository": {}, "packages": [
            {"registryType": "npm", "identifier": "q", "version": "latest",
             "packageArguments": [{"type": "", "value": "x", "format": "integer"}]}]}},
    ]  # fmt: skip
    for raw in samples:
        rec = record_from_json(raw)
        assert rec is not None
        conv = entry_from_server_json(rec, registry="r")
        assert entry_from_data("x", conv.entry.to_data())[1] == []


# --- CLI ----------------------------------------------------------------------------------


def test_cli_registry_file_discover_show_add(cli: Cli, config_path: Path, tmp_path: Path) -> None:
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps([
        make_record("io.team/approved-db", title="Approved DB", description="The database, approved",
                    packages=[{"registryType": "pypi", "identifier": "db-mcp", "version": "3.1.0",
                               "environmentVariables": [{"name": "DB_PASSWORD", "isSecret": True}]}])["server"],
    ]))  # fmt: skip
    assert cli("registry", "add", "team", str(catalog)).exit_code == 0
    assert cli("registry", "remove", "official").exit_code == 0
    r = cli("discover", "approved", "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json["data"]["results"][0]["name"] == "io.team/approved-db"
    assert r.json["data"]["results"][0]["needs_secrets"] is True
    r = cli("show", "io.team/approved-db", "--json")
    assert r.json["data"]["packages"][0]["identifier"] == "db-mcp"
    write_config(config_path, {})
    r = cli("add", "--from-registry", "io.team/approved-db", "--json")
    assert r.exit_code == 0, r.stdout
    assert r.json["data"]["name"] == "approved-db" and r.json["data"]["secrets"] == ["DB_PASSWORD"]
    entry = json.loads(config_path.read_text())["approved-db"]
    assert entry["args"] == ["db-mcp==3.1.0"] and entry["env"] == {"DB_PASSWORD": "${DB_PASSWORD}"}
    assert entry["source"] == {
        "registry": "team",
        "name": "io.team/approved-db",
        "version": "1.0.0",
    }
    r = cli("registry", "list", "--json")
    assert {x["id"] for x in r.json["data"]["registries"]} == {"builtin", "team"}


def test_cli_add_from_registry_missing_inputs_without_tty(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {})
    cli("registry", "remove", "official")
    r = cli("add", "--from-registry", "io.github.modelcontextprotocol/git", "--json")
    assert r.exit_code == 2
    assert (
        r.json["errors"][0]["code"] == "missing_input"
        and "--env REPOSITORY=" in r.json["errors"][0]["message"]
    )
    assert json.loads(config_path.read_text()) == {}


def test_cli_discover_builtin_offline_and_unreachable_registry(cli: Cli) -> None:
    r = cli("discover", "--registry", "builtin", "--offline", "--json")
    assert r.exit_code == 0 and len(r.json["data"]["results"]) >= 8
    cli("registry", "add", "dead", "http://127.0.0.1:9")
    r = cli("discover", "x", "--registry", "dead", "--json")
    assert r.exit_code == 3 and r.json["errors"][0]["code"] == "registry_unavailable"


def test_refresh_uses_cache_when_a_registry_fails(
    registry: tuple[Registry, str], tmp_path: Path
) -> None:
    reg, url = registry
    cache = DiscoveryCache.memory()
    src = RegistrySource("local", "http", url)
    assert refresh(cache, [src], force=True).failed == []
    reg.mode = "500"
    report = refresh(cache, [src], force=True, timeout=1)
    assert report.failed == [] and "using cached data" in report.warnings[0]


def test_cli_outdated_and_upgrade(cli: Cli, config_path: Path, tmp_path: Path) -> None:
    catalog = tmp_path / "catalog.json"

    def publish(version: str) -> None:
        pkg = {"registryType": "npm", "identifier": "@team/tool", "version": version,
               "environmentVariables": [{"name": "MODE", "default": "fast"}]}  # fmt: skip
        catalog.write_text(
            json.dumps([make_record("io.team/tool", version, packages=[pkg])["server"]])
        )

    publish("1.0.0")
    cli("registry", "remove", "official")
    cli("registry", "add", "team", str(catalog))
    write_config(config_path, {})
    assert cli("add", "--from-registry", "io.team/tool", "-e", "MODE=careful").exit_code == 0
    cli("disable", "tool")
    r = cli("outdated", "--json")
    assert r.exit_code == 0 and r.json["data"]["current"] == ["tool"]
    publish("1.1.0")
    cli("registry", "sync", "team")
    r = cli("outdated", "--json")
    assert r.exit_code == 1
    assert r.json["data"]["outdated"] == [{"name": "tool", "registry": "team", "server": "io.team/tool",
                                           "pinned": "1.0.0", "latest": "1.1.0"}]  # fmt: skip
    before = config_path.read_text()
    r = cli("upgrade", "--dry-run", "--json")
    assert r.json["data"]["upgrades"] == [{"name": "tool", "from": "1.0.0", "to": "1.1.0"}]
    assert config_path.read_text() == before
    assert cli("upgrade").exit_code == 0
    entry = json.loads(config_path.read_text())["tool"]
    assert entry["args"] == ["-y", "@team/tool@1.1.0"]
    assert entry["env"] == {"MODE": "careful"} and entry["enabled"] is False
    assert entry["source"]["version"] == "1.1.0"
    assert cli("outdated").exit_code == 0
    assert cli("undo").exit_code == 0
    assert json.loads(config_path.read_text())["tool"]["source"]["version"] == "1.0.0"


def test_cli_discover_export_is_a_registry(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "discovered_servers.json"
    r = cli("discover", "--registry", "builtin", "--offline", "--export", str(out), "--json")
    assert r.exit_code == 0 and r.json["data"]["exported"] >= 8
    items = json.loads(out.read_text())
    time_desc = next(i for i in items if i["name"] == "time")
    assert set(time_desc) == {"name", "transport", "command", "args", "env", "tools", "options"}
    assert time_desc["command"] == "uvx" and time_desc["transport"] == "stdio"
    github = next(i for i in items if i["options"]["source"]["name"] == "com.github/github")
    assert github["url"].startswith("https://") and github["options"]["secrets"] == ["GITHUB_TOKEN"]
    assert cli("registry", "add", "exported", str(out)).exit_code == 0
    r = cli("discover", "time", "--registry", "exported", "--json")
    assert r.json["data"]["results"][0]["name"] == "io.github.modelcontextprotocol/time"


SHARED = (
    Path(__file__).resolve().parent.parent.parent / "shared" / "reference" / "registry" / "data"
)


def reference_examples() -> list[Path]:
    files = sorted((SHARED / "examples").glob("*.json")) + sorted(
        (SHARED / "examples-real").glob("*.json")
    )
    return [f for f in files if f.name != "INDEX.json"]


@pytest.mark.skipif(
    not SHARED.is_dir(),
    reason="../shared/reference (the project's reference data) is not beside the checkout",
)
def test_every_reference_example_converts_or_explains() -> None:
    """The official examples and picked real records (read, not copied): every package type and
    argument form converts to a valid entry, and the rest fail with a clear reason."""
    converted, refused = 0, 0
    for path in reference_examples():
        rec = record_from_json(json.loads(path.read_text("utf-8-sig")))
        assert rec is not None, path.name
        for prefer in ("package", "remote"):
            try:
                conv = entry_from_server_json(rec, registry="official", prefer=prefer)  # type: ignore[arg-type]
            except UsageError as exc:
                assert "mcpb" in exc.message or "no package or remote" in exc.message, (
                    path.name,
                    exc.message,
                )
                refused += 1
                continue
            data = conv.entry.to_data()
            assert entry_from_data("x", data)[1] == [], (path.name, data)
            text = json.dumps(data)
            for secret in conv.secrets:
                assert f"${{{secret}}}" in text
            converted += 1
    assert converted > 20 and refused >= 1


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/reference is not beside the checkout")
def test_the_real_dump_loads_and_searches() -> None:
    dump = SHARED / "official-registry-v0-servers-2025-12-18.json"
    records = [
        r for r in (record_from_json(x) for x in json.loads(dump.read_text("utf-8-sig"))) if r
    ]
    cache = DiscoveryCache.memory()
    assert cache.replace("official", records) == len(records) > 2000
    assert cache.search("github", limit=1)[0].name == "io.github.github/github-mcp-server"


def test_two_processes_syncing_at_once(tmp_path: Path) -> None:
    import subprocess
    import sys

    catalog = tmp_path / "c.json"
    catalog.write_text(json.dumps([make_record(f"io.x/s{i}")["server"] for i in range(2000)]))
    script = (
        "import sys; from pathlib import Path; from mcpctl.registry.cache import DiscoveryCache;"
        "from mcpctl.registry.sources import RegistrySource, sync_source;"
        "c = DiscoveryCache.open(Path(sys.argv[1]));"
        "[sync_source(c, RegistrySource(sys.argv[2], 'file', sys.argv[3])) for _ in range(5)]"
    )
    db = tmp_path / "d.sqlite3"
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(db), f"r{i}", str(catalog)])
        for i in range(2)
    ]
    for p in procs:
        assert p.wait(timeout=120) == 0
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
        outs = [p.communicate(timeout=60) for p in procs]
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
    with pytest.raises(StorageError, match="cannot open the discovery cache"):
        DiscoveryCache.open(blocker / "d.sqlite3")  # its folder is a file


def test_a_corrupt_cache_is_rebuilt(tmp_path: Path) -> None:
    db = tmp_path / "d.sqlite3"
    db.write_bytes(b"not a database" * 100)
    cache = DiscoveryCache.open(db)
    assert cache.count("x") == 0
    cache.close()


def test_an_unreachable_registry_is_not_retried_at_once(registry: tuple[Registry, str]) -> None:
    reg, url = registry
    cache = DiscoveryCache.memory()
    src = RegistrySource("local", "http", url)
    refresh(cache, [src], force=True)
    reg.mode = "500"
    report = refresh(cache, [src], force=True, timeout=1)
    assert "using cached data" in report.warnings[0]
    reg.requests.clear()
    report = refresh(cache, [src], ttl=0)  # stale, but it failed a moment ago
    assert reg.requests == [] and "unreachable" in report.warnings[0]
    reg.mode = None
    assert refresh(cache, [src], force=True).synced  # --refresh tries again now
    assert cache.last_failure("local") is None

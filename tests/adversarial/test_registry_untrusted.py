"""Registry text is data, never control: the conversion refuses records that would write a
control character into the config, and the cache, search and commands take such records
without crashing and without letting a raw escape reach the terminal."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mcpctl.errors import UsageError
from mcpctl.registry import DiscoveryCache, entry_from_server_json, record_from_json
from mcpctl.registry.sources import RegistrySource
from mcpctl.registry.syncing import sync_source
from mcpctl.text import find_controls
from tests.conftest import Cli, Run, write_config
from tests.registry.conftest import Publish
from tests.registry.server import Registry, make_record, running

ESCAPES = {
    "sgr": "\x1b[31m",
    "osc-title": "\x1b]0;pwned\x07",
    "osc-link": "\x1b]8;;https://evil.example\x1b\\",
    "report": "\x1b[6n",
    "reset": "\x1bc",
    "dcs": "\x1bP1$r\x1b\\",
    "c1-csi": "\x9b2J",
    "backspace": "\x08\x08",
    "bell": "\x07",
    "bidi": "\u202e",
    "zero-width": "\u200b\u200c\u200d\u2060\ufeff",
    "bidi-marks": "\u200e\u200f\u061c",
    "separators": "\u2028\u2029",
}
EVERYTHING = "".join(ESCAPES.values())


def npm(**extra: Any) -> dict[str, Any]:
    return {"registryType": "npm", "identifier": "@evil/pkg", "version": "1.0.0", **extra}


def server(name: str = "io.evil/pkg", version: str = "1.0.0", **fields: Any) -> dict[str, Any]:
    return {"name": name, "version": version, "description": "A server", **fields}


def remote(url: str = "https://evil.example/mcp", **extra: Any) -> dict[str, Any]:
    return {"type": "streamable-http", "url": url, **extra}


# (what the record holds, the field the error names, --prefer)
CASES: dict[str, tuple[dict[str, Any], str, str | None]] = {
    "server name": (server(name="io.evil/pkg\x1b[31m", packages=[npm()]), "server name", None),
    "version": (server(version="1.0.0\x1b[6n", packages=[npm()]), "version", None),
    "identifier": (server(packages=[npm(identifier="@evil/pkg\x1b]0;t\x07")]), "argument", None),
    "package version": (server(packages=[npm(version="1.0\x9b2J")]), "argument", None),
    "positional argument": (
        server(packages=[npm(packageArguments=[{"type": "positional", "value": "\x08\x08x"}])]),
        "argument 3",
        None,
    ),
    "named argument value": (
        server(
            packages=[
                npm(
                    packageArguments=[
                        {"type": "named", "name": "--dir", "value": "/srv\u202etxt.exe"}
                    ]
                )
            ]
        ),
        "argument 4",
        None,
    ),
    "named argument name": (
        server(
            packages=[npm(runtimeArguments=[{"type": "named", "name": "--x\x1bc", "value": "1"}])]
        ),
        "argument 1",
        None,
    ),
    "env name": (
        server(packages=[npm(environmentVariables=[{"name": "MODE\x07", "default": "x"}])]),
        "environment variable name",
        None,
    ),
    "env value": (
        server(
            packages=[npm(environmentVariables=[{"name": "MODE", "default": "\x1bP1$r\x1b\\"}])]
        ),
        "environment variable MODE",
        None,
    ),
    "required env without a default": (
        server(packages=[npm(environmentVariables=[{"name": "DB\x1b[2J", "isRequired": True}])]),
        "environment variable",
        None,
    ),
    "url": (server(remotes=[remote("https://evil.example/\x1b]8;;x\x1b\\mcp")]), "url", "remote"),
    "url variable default": (
        server(
            remotes=[
                remote(
                    "https://evil.example/{region}/mcp",
                    variables={"region": {"default": "eu\x1b[1m"}},
                )
            ]
        ),
        "url",
        "remote",
    ),
    "header name": (
        server(remotes=[remote(headers=[{"name": "X-Key\x1b[2J", "value": "v"}])]),
        "header name",
        "remote",
    ),
    "header value": (
        server(remotes=[remote(headers=[{"name": "X-Key", "value": "Bearer \u202eabc"}])]),
        "header X-Key",
        "remote",
    ),
    "zero-width in a url": (
        server(remotes=[remote("https://pay\u200bpal.example/mcp")]),
        "url",
        "remote",
    ),
    "bidi mark in an identifier": (
        server(packages=[npm(identifier="@evil/pkg\u200f")]),
        "argument",
        None,
    ),
    "line separator in an env value": (
        server(packages=[npm(environmentVariables=[{"name": "MODE", "default": "a\u2028b"}])]),
        "environment variable MODE",
        None,
    ),
    "byte order mark in a header value": (
        server(remotes=[remote(headers=[{"name": "X-Key", "value": "\ufeffv"}])]),
        "header X-Key",
        "remote",
    ),
    "required header without a default": (
        server(remotes=[remote(headers=[{"name": "X-\x9bKey", "isRequired": True}])]),
        "input name",
        "remote",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_conversion_refuses_control_characters_in_written_fields(case: str) -> None:
    doc, field, prefer = CASES[case]
    record = record_from_json(doc)
    assert record is not None
    with pytest.raises(UsageError) as caught:
        entry_from_server_json(record, registry="evil", prefer=prefer)  # type: ignore[arg-type]
    message = caught.value.message
    assert f"the {field}" in message and "holds a control character (\\" in message, message
    assert find_controls(message) is None and find_controls(caught.value.hint or "") is None


def test_a_clean_record_converts_and_its_description_is_cleaned() -> None:
    doc = server(title="Nice\u202e", description="Does \x1b[31mthings\x1b[0m", packages=[npm()])
    record = record_from_json(doc)
    assert record is not None
    entry = entry_from_server_json(record, registry="r").entry
    assert entry.args == ("-y", "@evil/pkg@1.0.0") and entry.description == "Nice: Does things"


def test_an_unknown_package_type_is_named_escaped() -> None:
    record = record_from_json(server(packages=[npm(registryType="npm\x1b[31m")]))
    assert record is not None
    with pytest.raises(UsageError, match=r"npm\\x1b\[31m packages are not supported") as caught:
        entry_from_server_json(record)
    assert find_controls(caught.value.message) is None


# --- the cache and search take anything --------------------------------------------------


def hostile(name: str = "io.evil/everything", text: str = EVERYTHING) -> dict[str, Any]:
    """A record with ``text`` in every field a registry fills."""
    pkg = npm(identifier="@evil/pkg" + text, version="1.0.0" + text, runtimeHint="npx" + text,
              transport={"type": "stdio" + text},
              environmentVariables=[{"name": "API" + text, "description": text, "default": text}],
              packageArguments=[{"type": "positional", "value": text, "valueHint": text}])  # fmt: skip
    doc = server(
        name=name + text, version="2.0.0", title="Evil " + text, description="Evil " + text,
        websiteUrl="https://evil.example/" + text, repository={"url": "https://r.example/" + text},
        packages=[pkg, npm(registryType="npm" + text)],
        remotes=[remote("https://evil.example/mcp" + text, type="sse" + text,
                        headers=[{"name": "X-Key" + text, "value": text, "description": text}])],
    )  # fmt: skip
    return {"server": doc, "_meta": {"io.modelcontextprotocol.registry/official": {
        "status": "active" + text, "updatedAt": "2025-12-01T00:00:00Z" + text, "isLatest": True}}}  # fmt: skip


def test_the_cache_and_search_take_hostile_text_and_lone_surrogates() -> None:
    records = [
        record_from_json(hostile()),
        record_from_json(hostile("io.evil/sur", "\ud800x\udfff")),
    ]
    cache = DiscoveryCache.memory()
    assert cache.replace("evil", [r for r in records if r is not None]) == 2
    hits = cache.search("evil")
    assert {h.name for h in hits} == {"io.evil/everything2J", "io.evil/surx"}  # cleaned
    for hit in hits:
        for text in (hit.name, hit.title, hit.description, *hit.transports, *hit.package_types):
            assert find_controls(text) is None, text
    [(_, again)] = cache.versions("io.evil/surx")
    assert again.server["name"] == "io.evil/sur\ud800x\udfff"  # the document, as sent
    assert cache.names_like("\udcff") == [] and len(cache.search("\udcff evil")) == 2
    assert cache.versions("\udcff") == [] and cache.search("", package_type="\udcff") == []


def test_syncing_hostile_records_from_an_http_registry() -> None:
    reg = Registry([hostile(), hostile("io.evil/sur", "\ud800")])
    with running(reg) as url:
        cache = DiscoveryCache.memory()
        outcome = sync_source(cache, RegistrySource("evil", "http", url))
    assert outcome.records == 2 and len(cache.search("evil")) == 2


# --- the commands ------------------------------------------------------------------------

RAW = ("\x1b", "\x9b", "\u202e", "\x07", "\x08", "\u200b", "\u200f", "\u2028", "\ufeff")


def assert_no_raw_controls(run: Run) -> None:
    for stream in (run.stdout, run.stderr):
        assert not [c for c in RAW if c in stream], stream
        assert find_controls(stream) is None, stream


@pytest.fixture
def evil(cli: Cli, catalog: Publish) -> Callable[..., Run]:
    """A file registry of hostile records, the only one besides builtin."""
    assert cli("registry", "remove", "official").exit_code == 0
    path = catalog(hostile(), hostile("io.evil/sur", "\ud800"), make_record("io.evil/clean"))
    assert cli("registry", "add", "evil", str(path)).exit_code == 0
    return cli


@pytest.mark.parametrize("args", [
    ["discover", "evil"], ["discover", "evil", "--json"], ["discover", "--all-status", "--json"],
    ["show", "io.evil/everything2J"], ["show", "io.evil/everything2J", "--json"],
    ["show", "io.evil/sur", "--json"], ["registry", "list"], ["registry", "sync", "evil"],
], ids=" ".join)  # fmt: skip
def test_commands_over_hostile_records_do_not_crash_nor_print_controls(
    evil: Callable[..., Run], args: list[str]
) -> None:
    r = evil(*args)
    assert r.exit_code == 0, r.stdout + r.stderr
    assert_no_raw_controls(r)
    if "--json" in args:
        json.loads(r.stdout)


def test_discover_export_leaves_out_what_would_write_controls(
    evil: Callable[..., Run], tmp_path: Path
) -> None:
    out = tmp_path / "found.json"
    r = evil("discover", "evil", "--export", str(out), "--json")
    assert r.exit_code == 0 and r.json["data"]["exported"] == 1, r.stdout
    assert [i["name"] for i in json.loads(out.read_text())] == ["clean"]
    assert any("not exported" in w and "control character" in w for w in r.json["warnings"])
    assert_no_raw_controls(r)


@pytest.mark.parametrize("prefer", ["package", "remote"])
def test_add_from_registry_refuses_and_writes_nothing(
    evil: Callable[..., Run], config_path: Path, prefer: str
) -> None:
    write_config(config_path, {})
    before = config_path.read_bytes()
    r = evil("add", "--from-registry", "io.evil/everything2J", "--prefer", prefer, "--json")
    assert r.exit_code == 2 and r.json["errors"][0]["code"] == "usage_error", r.stdout
    assert "control character" in r.json["errors"][0]["message"]
    assert config_path.read_bytes() == before
    assert_no_raw_controls(r)
    r = evil("add", "--from-registry", "io.evil/everything2J", "--prefer", prefer)
    assert r.exit_code == 2 and "control character (\\x1b)" in r.stderr, r.stderr
    assert_no_raw_controls(r)


def test_upgrade_to_a_hostile_version_is_refused(
    cli: Cli, config_path: Path, catalog: Publish
) -> None:
    assert cli("registry", "remove", "official").exit_code == 0
    clean = make_record("io.team/tool", "1.0.0", remotes=[remote("https://t.example/mcp")],
                        packages=[])  # fmt: skip
    assert cli("registry", "add", "team", str(catalog(clean))).exit_code == 0
    write_config(config_path, {})
    assert cli("add", "--from-registry", "io.team/tool", "--prefer", "remote").exit_code == 0
    before = config_path.read_bytes()
    evil = make_record("io.team/tool", "1.1.0", packages=[],
                       remotes=[remote("https://t.example/\x1b]8;;https://evil.example\x1b\\mcp")])  # fmt: skip
    catalog(clean, evil)
    assert cli("registry", "sync", "team").exit_code == 0
    r = cli("upgrade", "--json")
    assert r.exit_code == 2 and "the url holds a control character" in r.stdout, r.stdout
    assert config_path.read_bytes() == before
    assert_no_raw_controls(r)

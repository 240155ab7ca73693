"""server.json -> config entries: every package type, remotes, inputs, and real records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpctl.config.checks import entry_from_data
from mcpctl.errors import UsageError
from mcpctl.registry import entry_from_server_json
from mcpctl.registry.convert import default_name
from mcpctl.registry.export import descriptors
from mcpctl.registry.records import record_from_json
from tests.registry.conftest import DATA
from tests.registry.server import make_record


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


def test_discovery_descriptors_name_apart_and_skip_what_cannot_convert() -> None:
    recs = [
        record_from_json(make_record("io.a/weather")),
        record_from_json(make_record("io.b/weather", remotes=[{"type": "sse", "url": "https://w.example/sse"}], packages=[])),
        record_from_json(make_record("io.c/bundle", packages=[{"registryType": "mcpb", "identifier": "https://x/b.mcpb"}])),
    ]  # fmt: skip
    items, notes = descriptors([("r", r) for r in recs if r is not None])
    assert [(i["name"], i["transport"]) for i in items] == [
        ("weather", "stdio"),
        ("b-weather", "sse"),
    ]
    assert set(items[0]) == {"name", "transport", "command", "args", "env", "tools", "options"}
    assert items[1]["url"] == "https://w.example/sse" and "command" not in items[1]
    assert len(notes) == 1 and "io.c/bundle" in notes[0] and "mcpb" in notes[0]


# --- real records (tests/data/registry) ---------------------------------------------


def reference_examples() -> list[Path]:
    return sorted((DATA / "examples").glob("*.json")) + sorted((DATA / "real").glob("*.json"))


def test_the_reference_records_are_there() -> None:
    # They are part of the repository: a missing folder is a broken checkout, not a skip.
    assert len(reference_examples()) >= 20


@pytest.mark.parametrize("path", reference_examples(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_reference_record_converts_or_explains(path: Path) -> None:
    """Each official example and real record converts to a valid entry with secrets as
    ${VAR} (packages first, then remotes first), or fails with a clear reason."""
    rec = record_from_json(json.loads(path.read_text("utf-8-sig")))
    assert rec is not None
    for prefer in ("package", "remote"):
        try:
            conv = entry_from_server_json(rec, registry="official", prefer=prefer)
        except UsageError as exc:
            assert "mcpb" in exc.message or "no package or remote" in exc.message, exc.message
            continue
        data = conv.entry.to_data()
        assert entry_from_data("x", data)[1] == [], data
        assert data["source"] == {"registry": "official", "name": rec.name, "version": rec.version}
        text = json.dumps(data)
        for secret in conv.secrets:
            assert f"${{{secret}}}" in text
        for missing in conv.missing:
            assert missing.flag.startswith(("--env", "--header"))


def test_the_reference_records_cover_every_kind() -> None:
    """The set above stays representative: every package type and remote kind converts,
    every input form occurs, and both refusals happen."""
    kinds: set[str] = set()
    refusals: set[str] = set()
    secrets = missing = templates = 0
    for path in reference_examples():
        rec = record_from_json(json.loads(path.read_text("utf-8-sig")))
        assert rec is not None
        for prefer in ("package", "remote"):
            try:
                conv = entry_from_server_json(rec, registry="r", prefer=prefer)
            except UsageError as exc:
                refusals.add("mcpb" if "mcpb" in exc.message else "nothing usable")
                continue
            kinds.add(conv.kind if conv.kind != "remote" else f"remote:{conv.entry.transport}")
            secrets += len(conv.secrets)
            missing += len(conv.missing)
            templates += sum(
                "{" in json.dumps(r.get("url", "")) for r in rec.server.get("remotes") or []
            )
    assert kinds >= {"npm", "pypi", "oci", "nuget", "remote:sse", "remote:streamable-http"}
    assert refusals == {"mcpb", "nothing usable"}
    assert secrets and missing and templates

"""Discovery descriptors (``discover --export``): what each holds, and names kept apart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcpctl.registry.export import descriptor, descriptors
from mcpctl.registry.fileregistry import load_file_registry
from mcpctl.registry.records import Record, record_from_json
from tests.registry.server import make_record


def record(name: str, **kwargs: Any) -> Record:
    found = record_from_json(make_record(name, **kwargs))
    assert found is not None
    return found


NPM = record(
    "io.a/weather",
    version="1.2.0",
    description="Forecasts",
    packages=[{
        "registryType": "npm", "identifier": "@a/weather", "version": "1.2.0",
        "transport": {"type": "stdio"},
        "environmentVariables": [
            {"name": "API_KEY", "isSecret": True, "isRequired": True},
            {"name": "REGION", "isRequired": True, "description": "where"},
            {"name": "MODE", "default": "fast"},
        ],
        "packageArguments": [{"type": "positional", "value": "serve"}],
    }],
)  # fmt: skip
REMOTE = record(
    "io.b/weather",
    packages=[],
    remotes=[{
        "type": "streamable-http", "url": "https://w.example/mcp",
        "headers": [{"name": "Authorization", "value": "Bearer {token}", "isRequired": True,
                     "variables": {"token": {"isSecret": True}}}],
    }],
)  # fmt: skip
BUNDLE = record(
    "io.c/bundle", packages=[{"registryType": "mcpb", "identifier": "https://x/b.mcpb"}]
)


def test_a_package_descriptor_holds_the_command_and_what_to_fill_in() -> None:
    assert descriptor(NPM, "team", "w") == {
        "name": "w",
        "transport": "stdio",
        "command": "npx",
        "args": ["-y", "@a/weather@1.2.0", "serve"],
        "env": {"API_KEY": "${API_KEY}", "REGION": "${REGION}", "MODE": "fast"},
        "tools": [],
        "options": {
            "description": "weather: Forecasts",
            "headers": {},
            "secrets": ["API_KEY"],
            "missing": ["REGION"],
            "source": {"registry": "team", "name": "io.a/weather", "version": "1.2.0"},
            "server": NPM.server,
        },
    }


def test_a_remote_descriptor_holds_the_url_and_its_headers() -> None:
    item = descriptor(REMOTE, "r", "bw")
    assert item == {
        "name": "bw",
        "transport": "streamable-http",
        "url": "https://w.example/mcp",
        "args": [],
        "env": {},
        "tools": [],
        "options": {
            "description": "weather: The weather server",
            "headers": {"Authorization": "Bearer ${TOKEN}"},
            "secrets": ["TOKEN"],
            "missing": [],
            "source": {"registry": "r", "name": "io.b/weather", "version": "1.0.0"},
            "server": REMOTE.server,
        },
    }


def test_names_are_kept_apart_from_each_other_and_from_those_taken() -> None:
    items, warnings = descriptors([("a", NPM), ("r", BUNDLE), ("b", REMOTE)], {"weather"})
    assert [i["name"] for i in items] == ["a-weather", "b-weather"]
    assert [i["options"]["source"]["registry"] for i in items] == ["a", "b"]
    assert warnings == [
        "not exported: io.c/bundle is only published as an MCP bundle (mcpb), which mcpctl "
        "cannot install yet"
    ]
    items, _ = descriptors([("r", NPM), ("r", REMOTE)])
    assert [i["name"] for i in items] == ["weather", "b-weather"]


def test_a_name_refused_for_one_server_is_free_for_the_next() -> None:
    bundle = record("io.c/weather", packages=[{"registryType": "mcpb", "identifier": "x"}])
    items, warnings = descriptors([("r", bundle), ("r", NPM)])
    assert [i["name"] for i in items] == ["weather"]
    assert len(warnings) == 1


def test_the_taken_names_given_are_not_changed() -> None:
    taken = {"weather"}
    descriptors([("r", NPM)], taken)
    assert taken == {"weather"}


def test_an_exported_file_reads_back_as_a_file_registry(tmp_path: Path) -> None:
    items, _ = descriptors([("r", NPM), ("r", REMOTE)])
    path = tmp_path / "export.json"
    path.write_text(json.dumps(items), "utf-8")
    assert [(r.name, r.version, r.server) for r in load_file_registry(path)] == [
        ("io.a/weather", "1.2.0", NPM.server),
        ("io.b/weather", "1.0.0", REMOTE.server),
    ]

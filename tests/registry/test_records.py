"""Registry records read tolerantly: what a record says, cleaned for display and search."""

from __future__ import annotations

from typing import Any

import pytest

from mcpctl.registry.records import (
    OFFICIAL_META,
    Record,
    clean_text,
    describe_delivery,
    describe_inputs,
    record_from_json,
    slug_of,
    version_key,
)


def rec(server: dict[str, Any], meta: dict[str, Any] | None = None) -> Record:
    raw: dict[str, Any] = {"server": {"name": "io.x/demo", "version": "1.0.0", **server}}
    if meta is not None:
        raw["_meta"] = {OFFICIAL_META: meta}
    found = record_from_json(raw)
    assert found is not None
    return found


@pytest.mark.parametrize(
    ("text", "clean"),
    [
        ("plain", "plain"),
        ("\x1b[31mred\x1b[0m", "red"),
        ("\x1b]0;title\x07after", "after"),
        ("\x1b]8;;https://x\x1b\\link\x1b]8;;\x1b\\", "link"),
        ("a\x1bPdevice\x1b\\b", "ab"),
        ("a\x1bcb", "ab"),
        ("a\x1b", "a"),
        ("tab\there\x9bx\u202eevil", "tab\therexevil"),
    ],
)
def test_clean_text_removes_escape_sequences_and_controls(text: str, clean: str) -> None:
    assert clean_text(text) == clean


def test_clean_text_of_anything_but_a_string_is_empty_and_long_text_is_cut() -> None:
    assert clean_text(None) == clean_text(3) == clean_text(["a"]) == ""
    assert clean_text("x" * 3000) == "x" * 2000
    assert clean_text("\x1b[1m" + "y" * 20, limit=5) == "yyyyy"


def test_slug_of_is_the_last_segment() -> None:
    assert slug_of("io.github.user/my-server") == "my-server"
    assert slug_of("a/b/c") == "c" and slug_of("plain") == "plain"


def test_versions_sort_as_numbers_with_pre_releases_first() -> None:
    versions = ["1.10.0", "1.2.0", "1.2.0-rc1", "1.2.0-beta", "0.9", "2.0.0+build", "1.2.x"]
    assert sorted(versions, key=version_key) == [
        "0.9", "1.2.0-beta", "1.2.0-rc1", "1.2.0", "1.2.x", "1.10.0", "2.0.0+build",
    ]  # fmt: skip
    assert version_key("1.2.0") == (((0, 1, ""), (0, 2, ""), (0, 0, "")), 1, "")


def test_a_record_from_the_api_carries_its_status_and_latest_mark() -> None:
    meta = {"status": "deprecated", "isLatest": False, "updatedAt": "2025-02-01T00:00:00Z",
            "publishedAt": "2025-01-01T00:00:00Z"}  # fmt: skip
    found = rec({}, meta)
    assert (found.name, found.version, found.status, found.is_latest, found.updated_at) == (
        "io.x/demo", "1.0.0", "deprecated", False, "2025-02-01T00:00:00Z",
    )  # fmt: skip
    published = rec({}, {"publishedAt": "2025-01-01T00:00:00Z", "isLatest": "yes"})
    assert (published.status, published.is_latest, published.updated_at) == (
        "active", None, "2025-01-01T00:00:00Z",
    )  # fmt: skip


def test_a_bare_server_json_and_an_exported_descriptor_are_records() -> None:
    server = {"name": "io.x/demo", "version": "2.0.0", "description": "Demo"}
    for raw in (server, {"name": "demo", "transport": "stdio", "options": {"server": server}}):
        found = record_from_json(raw)
        assert found is not None
        assert (found.name, found.version, found.status, found.is_latest, found.updated_at) == (
            "io.x/demo", "2.0.0", "active", None, "",
        )  # fmt: skip
        assert found.server == server


@pytest.mark.parametrize(
    "raw",
    [None, [], "x", {}, {"name": "", "version": "1"}, {"name": " \x1b[0m ", "version": "1"},
     {"name": 3, "version": "1"}, {"name": "a", "version": 1}, {"server": {"name": "a"}},
     {"transport": "stdio", "options": {"server": "x"}, "name": "a"}],
)  # fmt: skip
def test_what_is_not_a_server_is_no_record(raw: object) -> None:
    assert record_from_json(raw) is None


def test_names_and_versions_are_cleaned_and_cut() -> None:
    found = rec({"name": "io.x/\x1b[31mdemo" + "n" * 300, "version": "\x071" + "0" * 200})
    assert found.name == ("io.x/demo" + "n" * 300)[:200]
    assert found.version == ("1" + "0" * 200)[:100]
    assert rec({}, {"status": "s" * 100}).status == "s" * 40


def test_title_and_description_fall_back_and_are_cleaned() -> None:
    assert rec({"title": "\x1b[1mDemo\x1b[0m", "description": "Does\x07 it"}).title == "Demo"
    assert rec({"description": "Does\x07 it"}).description == "Does it"
    assert rec({"title": "\x1b[1m"}).title == "demo"
    assert rec({}).description == ""


def test_transports_and_package_types_in_document_order_once_each() -> None:
    found = rec({
        "packages": [
            {"registryType": "npm", "transport": {"type": "stdio"}},
            {"registryType": "pypi"},
            {"registryType": "npm", "transport": {"type": "streamable-http"}},
            {"registryType": "", "transport": "x"},
            "junk",
        ],
        "remotes": [{"type": "sse"}, {"type": "streamable-http"}, {"type": ""}, {}, 3],
    })  # fmt: skip
    assert found.transports() == ["stdio", "streamable-http", "sse"]
    assert found.package_types() == ["npm", "pypi"]
    assert rec({"packages": {}, "remotes": "x"}).transports() == []
    assert rec({"remotes": [{"type": "sse"}]}).transports() == ["sse"]


def test_needs_secrets_looks_at_variables_and_headers_everywhere() -> None:
    assert not rec({}).needs_secrets()
    secret = {"name": "K", "isSecret": True}
    assert not rec(
        {"packages": [{"environmentVariables": [{"name": "K", "isSecret": "yes"}]}]}
    ).needs_secrets()
    assert rec({"packages": [{"environmentVariables": [secret]}]}).needs_secrets()
    assert rec({"packages": [{"transport": {"headers": [secret]}}]}).needs_secrets()
    assert rec({"remotes": [{"headers": [{"name": "A"}, secret]}]}).needs_secrets()
    assert not rec({"packages": [{"runtimeArguments": [secret]}]}).needs_secrets()


def test_describe_inputs_lists_what_a_server_asks_for() -> None:
    server = {
        "packages": [{
            "environmentVariables": [
                {"name": "API_KEY", "isRequired": True, "isSecret": True, "description": "Key\x07"},
                {"name": "MODE"},
            ],
            "runtimeArguments": [{"type": "named", "name": "--port", "isRequired": "yes"}],
            "packageArguments": [
                {"type": "positional", "valueHint": "path"},
                {"value": "serve"},
                {"type": "\x1b[1m", "name": "--x"},
            ],
        }],
        "remotes": [{"headers": [{"name": "Authorization", "isSecret": True}]}],
    }  # fmt: skip

    def item(kind: str, name: str, required: bool = False, secret: bool = False,
             description: str = "") -> dict[str, Any]:  # fmt: skip
        return {"kind": kind, "name": name, "required": required, "secret": secret,
                "description": description}  # fmt: skip

    assert describe_inputs(server) == [
        item("env", "API_KEY", required=True, secret=True, description="Key"),
        item("env", "MODE"),
        item("argument (named)", "--port"),
        item("argument (positional)", "path"),
        item("argument (positional)", "serve"),
        item("argument (positional)", "--x"),
        item("header", "Authorization", secret=True),
    ]
    assert describe_inputs({"packages": "x", "remotes": [3]}) == []


def test_describe_delivery_lists_packages_and_remotes_cleaned() -> None:
    server = {
        "packages": [
            {"registryType": "npm", "identifier": "@x/\x1b[1mdemo", "version": "1.0.0",
             "runtimeHint": "npx", "extra": "dropped"},
            {"registryType": "pypi"},
        ],
        "remotes": [{"type": "sse", "url": "https://x.example/\x07sse", "headers": []}, {}],
    }  # fmt: skip
    assert describe_delivery(server) == (
        [
            {
                "registryType": "npm",
                "identifier": "@x/demo",
                "version": "1.0.0",
                "runtimeHint": "npx",
            },
            {"registryType": "pypi", "identifier": "", "version": "", "runtimeHint": ""},
        ],
        [{"type": "sse", "url": "https://x.example/sse"}, {"type": "", "url": ""}],
    )
    assert describe_delivery({}) == ([], [])


def test_types_and_dates_are_cut_to_their_length() -> None:
    long = "t" * 100
    found = rec(
        {"packages": [{"registryType": long, "transport": {"type": long}}],
         "remotes": [{"type": "r" * 100}]},
        {"updatedAt": "2" * 100},
    )  # fmt: skip
    assert found.package_types() == ["t" * 40]
    assert found.transports() == ["t" * 40, "r" * 40]
    assert found.updated_at == "2" * 60


def test_a_secret_of_a_package_counts_beside_a_remote() -> None:
    found = rec({
        "packages": [{"environmentVariables": [{"name": "K", "isSecret": True}]}],
        "remotes": [{"headers": [{"name": "X-Plain"}]}],
    })  # fmt: skip
    assert found.needs_secrets()


def test_a_server_json_with_a_transport_key_is_not_taken_for_a_descriptor() -> None:
    server = {"name": "io.x/demo", "version": "1.0.0", "transport": "stdio"}
    found = record_from_json(server)
    assert found is not None and found.server == server

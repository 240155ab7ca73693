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


# --- what mutation testing found unpinned ----------------------------------------------------


def npm(**pkg: Any) -> dict[str, Any]:
    return {"packages": [{"registryType": "npm", "identifier": "@x/d", "version": "1", **pkg}]}


def args_of(*arguments: dict[str, Any], **kw: Any) -> tuple[str, ...]:
    """The arguments after the package of an npm server with these package arguments."""
    args: tuple[str, ...] = convert(npm(packageArguments=list(arguments)), **kw).entry.args
    assert args[:2] == ("-y", "@x/d@1")
    return args[2:]


@pytest.mark.parametrize(
    ("text", "name"),
    [("api_key", "API_KEY"), ("X-API-Key", "X_API_KEY"), ("__a b__", "A_B"),
     ("2fa", "VAR_2FA"), ("--", "VAR_"), ("x.y", "X_Y")],
)  # fmt: skip
def test_var_name(text: str, name: str) -> None:
    from mcpctl.registry.convert import var_name

    assert var_name(text) == name


def test_default_name_in_full() -> None:
    assert default_name("weather") == "weather"  # no namespace: the slug alone, then numbered
    assert default_name("weather", {"weather"}) == "weather-2"
    assert default_name("a/b/weather", {"weather"}) == "a-b-weather"  # the last namespace part
    assert default_name("io.github.acme/Weather") == "Weather"
    assert default_name("io.x/-!-", set()) == "server"
    assert default_name("io.x/" + "w" * 70) == "w" * 64
    assert default_name("io.x/-" + "w" * 70 + "-") == "w" * 64
    taken = {"weather", "acme-weather", "io-github-acme-weather", "io-github-acme-weather-2",
             "io-github-acme-weather-3"}  # fmt: skip
    assert default_name("io.github.acme/weather", taken) == "io-github-acme-weather-4"
    assert default_name("io.github.acme/weather", taken - {"io-github-acme-weather-2"}) == (
        "io-github-acme-weather-2"
    )


def test_named_and_positional_arguments() -> None:
    assert args_of({"name": "--flag", "value": "v"}) == ("--flag", "v")  # named by its dash
    assert args_of({"name": "plain", "value": "v"}) == ("v",)  # positional, no type
    assert args_of({"type": "positional", "name": "--x", "value": "v"}) == ("v",)
    # Optional without a value: left out, and the arguments after it kept.
    assert args_of({"type": "named", "name": "--opt"}, {"type": "positional", "value": "after"},
                   {"type": "named", "value": "no name"}, {"type": "positional", "value": "z"}) == (
        "after", "z")  # fmt: skip
    # A bare flag: a boolean with an empty value; another empty value is kept as one.
    assert args_of({"type": "named", "name": "--verbose", "value": "", "format": "boolean"}) == (
        "--verbose",
    )
    assert args_of({"type": "named", "name": "--label", "value": "", "format": "string"}) == (
        "--label", "")  # fmt: skip
    assert args_of({"type": "named", "name": "--on", "value": "true", "format": "boolean"}) == (
        "--on", "true")  # fmt: skip


def test_a_required_argument_without_a_value() -> None:
    conv = convert(npm(packageArguments=[
        {"type": "named", "name": "--api-key", "isRequired": True, "isSecret": True},
        {"type": "named", "name": "--repo", "isRequired": True, "description": "The repo\x1b"},
        {"type": "positional", "valueHint": "target_dir", "isRequired": True},
        {"type": "positional", "name": "where", "isRequired": True},
        {"type": "positional", "isRequired": True},
        {"type": "positional", "isRequired": False},
    ]))  # fmt: skip
    assert conv.entry.args[2:] == ("--api-key", "${API_KEY}", "--repo", "${REPO}",
                                   "${TARGET_DIR}", "${WHERE}", "${VALUE}")  # fmt: skip
    assert conv.secrets == ["API_KEY"]
    assert [(m.name, m.flag, m.description) for m in conv.missing] == [
        ("REPO", "--env REPO=...", "The repo"),
        ("TARGET_DIR", "--env TARGET_DIR=...", ""),
        ("WHERE", "--env WHERE=...", ""),
        ("VALUE", "--env VALUE=...", ""),
    ]
    given = convert(npm(packageArguments=[
        {"type": "named", "name": "--repo", "isRequired": True},
        {"type": "positional", "valueHint": "dir", "isRequired": True},
    ]), env={"REPO": "acme/demo", "DIR": "/srv"})  # fmt: skip
    assert given.entry.args[2:] == ("--repo", "acme/demo", "/srv") and given.missing == []


def test_a_required_argument_named_only_by_dashes_is_asked_for_as_value() -> None:
    """``--`` names nothing once its dashes are stripped: its value is asked for as ``VALUE``,
    like a positional argument without a hint, and put after it."""
    conv = convert(npm(packageArguments=[{"type": "named", "name": "--", "isRequired": True}]))
    assert conv.entry.args[2:] == ("--", "${VALUE}")
    assert [(m.name, m.flag) for m in conv.missing] == [("VALUE", "--env VALUE=...")]
    given = convert(npm(packageArguments=[{"type": "named", "name": "--", "isRequired": True}]),
                    env={"VALUE": "serve"})  # fmt: skip
    assert given.entry.args[2:] == ("--", "serve") and given.missing == []


def test_a_required_named_argument_without_a_name_is_left_out_unasked() -> None:
    # It has no name to put its value after, so its value is not asked for either: an
    # add without a terminal would otherwise fail for want of a value that is never used.
    for nameless in ({"type": "named", "isRequired": True}, {"type": "named", "name": "",
                     "isRequired": True, "valueHint": "port"}, {"type": "named", "name": 7,
                     "isRequired": True, "isSecret": True}):  # fmt: skip
        conv = convert(npm(packageArguments=[nameless, {"type": "positional", "value": "x"}]))
        assert conv.entry.args[2:] == ("x",) and conv.missing == []
        assert not conv.entry.env  # no secret asked for it either


def test_argument_values_fill_their_templates() -> None:
    assert args_of({"type": "named", "name": "--url", "value": "https://{host}/x",
                    "variables": {"host": {"default": "h.example"}}}) == (
        "--url", "https://h.example/x")  # fmt: skip
    assert args_of({"type": "positional", "default": "{token}"}) == ("${TOKEN}",)


def test_environment_variables_in_full() -> None:
    conv = convert(npm(environmentVariables=[
        {"name": "AUTH", "isSecret": True, "value": "Bearer {api_key}"},
        {"name": "PLAIN_SECRET", "isSecret": True, "value": "fixed"},
        {"value": "no name"},
        {"name": "FROM_TEMPLATE", "value": "{region}-x", "variables": {"region": {"default": "eu"}}},
        {"name": "SECRET_TEMPLATE", "isSecret": True, "value": "{region}",
         "variables": {"region": {"default": "eu"}}},
        {"name": "OPTIONAL"},
        {"name": "REQUIRED", "isRequired": True, "description": "needed"},
        {"name": "LAST", "default": "d"},
    ]))  # fmt: skip
    assert conv.entry.env == {
        "AUTH": "Bearer ${API_KEY}", "PLAIN_SECRET": "${PLAIN_SECRET}",
        "FROM_TEMPLATE": "eu-x", "SECRET_TEMPLATE": "${REGION}", "REQUIRED": "${REQUIRED}",
        "LAST": "d",
    }  # fmt: skip
    assert conv.secrets == ["API_KEY", "PLAIN_SECRET", "REGION"]
    assert [(m.name, m.flag, m.description) for m in conv.missing] == [
        ("REQUIRED", "--env REQUIRED=...", "needed")
    ]


def test_template_values_looked_up_and_secret_by_name() -> None:
    conv = convert(npm(environmentVariables=[
        {"name": "A", "value": "{Api_Password}"},  # looks secret, no spec: a placeholder
        {"name": "B", "value": "{user}", "variables": {"user": {"value": "fixed"}}},
        {"name": "C", "value": "{user_name}", "variables": {"user_name": {"description": "d"}}},
        {"name": "D", "value": "{plain}"},
    ]), env={"PLAIN": "given"})  # fmt: skip
    assert conv.entry.env == {"A": "${API_PASSWORD}", "B": "fixed", "C": "${USER_NAME}",
                              "D": "given"}  # fmt: skip
    assert conv.secrets == ["API_PASSWORD"]
    assert [(m.name, m.description) for m in conv.missing] == [("USER_NAME", "d")]


def test_remote_headers_in_full() -> None:
    conv = convert({"remotes": [{
        "type": "streamable-http", "url": "https://x.example/mcp",
        "headers": [
            {"name": "X-Given", "value": "from the registry"},
            {"value": "no name"},
            {"name": "X-Default", "default": "d"},
            {"name": "X-Key", "isSecret": True},
            {"name": "X-Templated", "isSecret": True, "value": "{region}",
             "variables": {"region": {"default": "eu"}}},
            {"name": "X-Optional"},
            {"name": "X-Required", "isRequired": True, "description": "needed\x07"},
            {"name": "X-Last", "value": "v"},
        ],
    }]}, headers={"X-Given": "mine"})  # fmt: skip
    assert conv.entry.headers == {"X-Given": "mine", "X-Default": "d", "X-Key": "${X_KEY}",
                                  "X-Templated": "${REGION}", "X-Last": "v"}  # fmt: skip
    assert conv.secrets == ["X_KEY", "REGION"] and conv.notes == [] and conv.kind == "remote"
    assert [(m.name, m.flag, m.description) for m in conv.missing] == [
        ("X-Required", "--header 'X-Required: ...'", "needed")
    ]


@pytest.mark.parametrize(
    ("kind", "transport"),
    [(None, "streamable-http"), ("sse", "sse"), ("stdio", "streamable-http"),
     ("carrier-pigeon", "streamable-http")],
)  # fmt: skip
def test_a_remote_s_transport(kind: str | None, transport: str) -> None:
    remote = {"url": "https://x.example/mcp", **({"type": kind} if kind else {})}
    assert convert({"remotes": [remote]}).entry.transport == transport


def test_a_required_named_argument_is_asked_for_by_its_name() -> None:
    conv = convert(npm(packageArguments=[
        {"type": "named", "name": "--repo", "valueHint": "owner_slash_name", "isRequired": True},
        {"type": "named", "name": "--X-Api", "isRequired": True},
    ]))  # fmt: skip
    assert [m.name for m in conv.missing] == ["REPO", "X_API"]
    assert conv.entry.args[2:] == ("--repo", "${REPO}", "--X-Api", "${X_API}")


def test_default_name_keeps_capitals_and_numbers_the_first_free() -> None:
    assert default_name("io.x/Xenon-X") == "Xenon-X"
    taken = {"w", "x-w", "io-x-w", "io-x-w-2", "io-x-w-4"}
    assert default_name("io.x/w", taken) == "io-x-w-3"


# --- found unpinned by the whole mutation run -------------------------------------------------


def test_an_image_keeps_its_own_tag_or_digest_and_else_gets_the_version() -> None:
    def image(ident: str) -> str:
        conv = convert({"packages": [{"registryType": "oci", "identifier": ident, "version": "2"}]})
        assert conv.entry.command == "docker" and conv.entry.args[:3] == ("run", "-i", "--rm")
        return str(conv.entry.args[-1])

    assert image("demo") == "demo:2"
    assert image("x/demo:1.5") == "x/demo:1.5"
    assert image("localhost:5000/demo") == "localhost:5000/demo:2"  # a port is no tag
    assert image("x/demo@sha256:" + "a" * 64) == "x/demo@sha256:" + "a" * 64


def test_nuget_without_package_arguments_has_no_separator() -> None:
    conv = convert(
        {"packages": [{"registryType": "nuget", "identifier": "Demo.Mcp", "version": "2"}]}
    )
    assert conv.entry.args == ("Demo.Mcp@2", "--yes")


def test_a_package_serving_another_transport_is_added_as_a_command_with_a_note() -> None:
    served = {"type": "streamable-http", "url": "http://localhost:8080/mcp"}
    conv = convert(npm(transport=served))
    assert conv.entry.command == "npx" and conv.notes == [
        "this package serves streamable-http at http://localhost:8080/mcp; added as a stdio command"
    ]
    assert convert(npm(transport={"type": "stdio"})).notes == []


def test_a_package_without_a_version_is_pinned_to_the_server_s_with_a_note() -> None:
    conv = convert({"packages": [{"registryType": "npm", "identifier": "@x/d"}]})
    assert conv.entry.args == ("-y", "@x/d@2.0.0")
    assert conv.notes == ["the package does not name a version; pinned to the server's 2.0.0"]


def test_a_package_without_an_identifier_or_a_known_type_is_refused() -> None:
    with pytest.raises(UsageError, match=r"io\.x/demo: a package without an identifier"):
        convert({"packages": [{"registryType": "npm", "version": "1"}]})
    with pytest.raises(UsageError, match=r"io\.x/demo: \? packages are not supported"):
        convert({"packages": [{"identifier": "d", "version": "1"}]})
    with pytest.raises(UsageError, match=r"np\\nm packages are not supported"):
        convert({"packages": [{"registryType": "np\nm", "identifier": "d", "version": "1"}]})


def test_an_environment_variable_given_with_env_wins_over_the_registry_s_default() -> None:
    conv = convert(npm(environmentVariables=[{"name": "MODE", "default": "slow"}]),
                   env={"MODE": "fast"})  # fmt: skip
    assert conv.entry.env == {"MODE": "fast"}


def test_a_template_value_may_be_given_by_its_name_as_written() -> None:
    conv = convert(npm(environmentVariables=[{"name": "D", "value": "{region}"}]),
                   env={"region": "eu"})  # fmt: skip
    assert conv.entry.env == {"D": "eu"}


def test_a_value_that_is_not_text_is_ignored() -> None:
    conv = convert(npm(environmentVariables=[{"name": "PORT", "default": 8080}]))
    assert conv.entry.env == {}


def test_a_long_description_is_cut_to_300_characters() -> None:
    conv = convert({"description": "d" * 400, "packages": npm()["packages"]})
    assert conv.entry.description is not None and len(conv.entry.description) == 300


def test_the_package_type_asked_for_is_taken_and_a_missing_remote_falls_back() -> None:
    server = {"packages": [{"registryType": "npm", "identifier": "@x/d", "version": "1"},
                           {"registryType": "pypi", "identifier": "d", "version": "1"}]}  # fmt: skip
    assert convert(server, package_type="pypi").entry.command == "uvx"
    assert convert(server, prefer="remote").entry.command == "npx"


def test_a_conversion_without_a_registry_names_it_unknown() -> None:
    rec = record_from_json({"server": {"name": "io.x/demo", "version": "2.0.0", **npm()}})
    assert rec is not None
    source = entry_from_server_json(rec).entry.source
    assert source is not None and source.registry == "?"


def test_an_mcpb_only_server_s_refusal_says_what_to_do_instead() -> None:
    with pytest.raises(UsageError) as caught:
        convert({"packages": [{"registryType": "mcpb", "identifier": "https://x/demo.mcpb"}]})
    assert caught.value.hint == (
        "install the bundle in a client that supports it (e.g. Claude Desktop), or look for the "
        "same server as an npm/PyPI package or a remote with 'mcpctl discover'"
    )


def test_a_control_character_is_refused_beside_environment_variables_and_headers() -> None:
    with pytest.raises(UsageError, match="the argument 3 holds a control character") as caught:
        convert(npm(environmentVariables=[{"name": "MODE", "default": "x"}],
                    packageArguments=[{"type": "positional", "value": "a\x1bb"}]))  # fmt: skip
    assert caught.value.hint == (
        "registries are untrusted: report it to the registry, or add the server by hand with "
        "'mcpctl add NAME -- COMMAND' after checking it"
    )
    with pytest.raises(UsageError, match="the url holds a control character"):
        convert({"remotes": [{"url": "https://x.example/\x1b", "headers": [
            {"name": "X-Key", "value": "v"}]}]})  # fmt: skip

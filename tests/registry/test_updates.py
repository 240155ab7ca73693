"""Pinned versions against the registries' latest: what is outdated, and the upgraded entry."""

from __future__ import annotations

from typing import Any

import pytest

from mcpctl.config.model import ServerEntry, Source, ToolFilter
from mcpctl.errors import MissingInputError, UsageError
from mcpctl.registry.cache import DiscoveryCache
from mcpctl.registry.convert import Conversion, MissingInput
from mcpctl.registry.records import Record, record_from_json
from mcpctl.registry.updates import Update, carried_over, find_updates, plan_upgrades, upgrade_entry
from tests.registry.server import make_record


def record(name: str, version: str, **kwargs: Any) -> Record:
    found = record_from_json(make_record(name, version, **kwargs))
    assert found is not None
    return found


def pinned(name: str, version: str, registry: str = "team") -> ServerEntry:
    return ServerEntry(command="npx", source=Source(registry, name, version))


def test_outdated_up_to_date_and_unknown_entries() -> None:
    cache = DiscoveryCache.memory()
    cache.replace("team", [
        record("io.x/old", "1.0.0", latest=False), record("io.x/old", "1.10.0"),
        record("io.x/same", "2.0.0"),
        record("io.x/ahead", "1.0.0"),
        record("io.x/gone", "1.0.0", status="deleted"),
    ])  # fmt: skip
    cache.replace("other", [record("io.x/same", "9.0.0"), record("io.x/elsewhere", "1.0.0")])
    entries = {
        "local": ServerEntry(command="echo"),
        "old": pinned("io.x/old", "1.9.0"),
        "same": pinned("io.x/same", "2.0.0"),
        "ahead": pinned("io.x/ahead", "1.0.1"),
        "gone": pinned("io.x/gone", "0.1.0"),
        "elsewhere": pinned("io.x/elsewhere", "0.1.0"),
    }
    outdated, current, unknown = find_updates(entries, cache)
    assert outdated == [
        Update("old", "team", "io.x/old", "1.9.0", "1.10.0", cache.versions("io.x/old")[0][1])
    ]
    assert current == ["same", "ahead"]
    assert unknown == ["gone", "elsewhere"]


def test_the_version_marked_latest_wins_over_a_higher_one() -> None:
    cache = DiscoveryCache.memory()
    cache.replace("team", [record("io.x/s", "2.0.0-rc1", latest=False), record("io.x/s", "1.5.0")])
    outdated, _, _ = find_updates({"s": pinned("io.x/s", "1.0.0")}, cache)
    assert [(u.latest, u.record.version) for u in outdated] == [("1.5.0", "1.5.0")]


def test_a_deleted_latest_falls_back_to_the_newest_live_version() -> None:
    cache = DiscoveryCache.memory()
    cache.replace("team", [
        record("io.x/s", "1.0.0", latest=False), record("io.x/s", "1.2.0", latest=False),
        record("io.x/s", "2.0.0", status="deleted"),
    ])  # fmt: skip
    outdated, _, _ = find_updates({"s": pinned("io.x/s", "1.0.0")}, cache)
    assert [u.latest for u in outdated] == ["1.2.0"]


BOTH = {
    "packages": [
        {"registryType": "pypi", "identifier": "both-mcp", "version": "2.0.0",
         "environmentVariables": [{"name": "MODE", "default": "fast"}]},
        {"registryType": "npm", "identifier": "@x/both", "version": "2.0.0",
         "environmentVariables": [{"name": "MODE", "default": "fast"}]},
    ],
    "remotes": [{"type": "streamable-http", "url": "https://both.example/mcp",
                 "headers": [{"name": "X-Team", "isRequired": True}]}],
}  # fmt: skip


def update_to(rec: Record, name: str = "s", pinned_version: str = "1.0.0") -> Update:
    return Update(name, "team", rec.name, pinned_version, rec.version, rec)


def test_an_upgrade_keeps_the_package_type_and_what_the_user_set() -> None:
    rec = record("io.x/both", "2.0.0", **BOTH)
    entry = ServerEntry(
        command="npx", args=("-y", "@x/both@1.0.0"), env={"MODE": "careful"}, cwd="/srv",
        allow_literal=("MODE",), timeout=30, sensitive=True, description="mine",
        enabled=False, tools=ToolFilter(deny=("delete_*",)),
        source=Source("team", "io.x/both", "1.0.0"),
    )  # fmt: skip
    new = upgrade_entry(entry, update_to(rec)).entry
    assert (new.command, new.args) == ("npx", ("-y", "@x/both@2.0.0"))
    assert dict(new.env) == {"MODE": "careful"}
    assert new.source == Source("team", "io.x/both", "2.0.0")
    assert (new.cwd, new.allow_literal, new.timeout, new.sensitive) == ("/srv", ("MODE",), 30, True)
    assert (new.description, new.enabled, new.tools) == (
        "mine",
        False,
        ToolFilter(deny=("delete_*",)),
    )


def test_an_upgrade_of_a_uvx_entry_stays_on_pypi_and_takes_the_new_description() -> None:
    rec = record("io.x/both", "2.0.0", description="Both ways", **BOTH)
    entry = ServerEntry(command="uvx", args=("both-mcp==1.0.0",))
    new = upgrade_entry(entry, update_to(rec)).entry
    assert (new.command, new.args) == ("uvx", ("both-mcp==2.0.0",))
    assert new.description == "both: Both ways"
    assert (new.enabled, new.sensitive, new.tools, new.timeout) == (True, False, None, None)


def test_an_upgrade_of_another_command_takes_the_first_package() -> None:
    rec = record("io.x/both", "2.0.0", **BOTH)
    new = upgrade_entry(ServerEntry(command="node", args=("x.js",)), update_to(rec)).entry
    assert new.command == "uvx"


def test_an_upgrade_of_a_remote_entry_stays_remote_with_its_headers() -> None:
    rec = record("io.x/both", "2.0.0", **BOTH)
    entry = ServerEntry(url="https://both.example/mcp", headers={"X-Team": "acme"}, cwd=None)
    conversion = upgrade_entry(entry, update_to(rec))
    new = conversion.entry
    assert (new.url, dict(new.headers), new.command, new.cwd) == (
        "https://both.example/mcp", {"X-Team": "acme"}, None, None,
    )  # fmt: skip
    assert conversion.missing == []


def pypi(version: str, *arguments: dict[str, Any], **more: Any) -> Record:
    pkg = {"registryType": "pypi", "identifier": "needy-mcp", "version": version,
           "packageArguments": list(arguments), **more}  # fmt: skip
    return record("io.x/needy", version, packages=[pkg])


NAMED = {"type": "named", "name": "--repository", "isRequired": True}
POSITIONAL = {"type": "positional", "valueHint": "path", "isRequired": True}


def test_a_value_given_after_a_flag_is_carried_over() -> None:
    entry = ServerEntry(command="uvx", args=("needy-mcp==1.0.0", "--repository", "acme/app"))
    conversion = upgrade_entry(entry, update_to(pypi("2.0.0", NAMED)))
    assert conversion.missing == []
    assert conversion.entry.args == ("needy-mcp==2.0.0", "--repository", "acme/app")


def test_a_flag_last_in_the_old_arguments_has_no_value_to_carry() -> None:
    entry = ServerEntry(command="uvx", args=("needy-mcp==1.0.0", "--repository"))
    conversion = upgrade_entry(entry, update_to(pypi("2.0.0", NAMED)))
    assert [m.name for m in conversion.missing] == ["REPOSITORY"]


def test_a_positional_value_is_carried_over_when_the_arguments_line_up() -> None:
    entry = ServerEntry(command="uvx", args=("needy-mcp==1.0.0", "/data"))
    conversion = upgrade_entry(entry, update_to(pypi("2.0.0", POSITIONAL)))
    assert conversion.entry.args == ("needy-mcp==2.0.0", "/data")
    entry = ServerEntry(command="uvx", args=("needy-mcp==1.0.0", "-v", "/data"))
    conversion = upgrade_entry(entry, update_to(pypi("2.0.0", POSITIONAL)))
    assert [m.name for m in conversion.missing] == ["PATH"]


def test_only_missing_inputs_are_carried_over() -> None:
    new = upgrade_entry(ServerEntry(command="uvx"), update_to(pypi("2.0.0", NAMED, POSITIONAL)))
    assert new.entry.args == ("needy-mcp==2.0.0", "--repository", "${REPOSITORY}", "${PATH}")
    old = ServerEntry(command="uvx", args=("needy-mcp==1.0.0", "--repository", "r", "/p"))
    new.missing = [m for m in new.missing if m.name == "PATH"]
    assert carried_over(old, new) == {"PATH": "/p"}
    new.missing = []
    assert carried_over(old, new) == {}


def remote(url: str) -> Record:
    spec = {"type": "sse", "url": url, "variables": {
        "tenant": {"isRequired": True}, "region": {"isRequired": True}, "v": {"default": "2"}}}  # fmt: skip
    return record("io.x/tenant", "2.0.0", packages=[], remotes=[spec])


@pytest.mark.parametrize(
    ("old", "new", "kept"),
    [
        ("https://acme.eu.example/sse", "https://{tenant}.{region}.example/sse",
         {"TENANT": "acme", "REGION": "eu"}),
        ("https://acme.example/sse?x=1", "https://{tenant}.example/sse?x=1", {"TENANT": "acme"}),
        ("https://x.example/a/b/sse", "https://x.example/{tenant}/sse", {}),
        ("https://acme.example/v2/sse", "https://{tenant}.example/v{v}/sse", {"TENANT": "acme"}),
        ("https://acme.example/sse", "https://acme.example/sse", {}),
    ],
)  # fmt: skip
def test_values_in_the_url_are_carried_over_from_the_same_place(
    old: str, new: str, kept: dict[str, str]
) -> None:
    conversion = upgrade_entry(
        ServerEntry(url="https://placeholder.example"), update_to(remote(new))
    )
    assert carried_over(ServerEntry(url=old), conversion) == kept


def test_a_url_of_another_shape_carries_nothing() -> None:
    conversion = upgrade_entry(
        ServerEntry(url="https://x.example/a/sse"),
        update_to(remote("https://{tenant}.example/sse")),
    )
    assert [m.name for m in conversion.missing] == ["TENANT"]
    assert carried_over(ServerEntry(command="x"), conversion) == {}


def test_plan_upgrades_uses_values_given_for_a_new_input() -> None:
    entries = {"n": ServerEntry(command="uvx", args=("needy-mcp==1.0.0",), env={"A": "1"})}
    update = update_to(pypi("2.0.0", NAMED), "n")
    planned = plan_upgrades(entries, [update], {"REPOSITORY": "acme/app"})
    assert planned["n"].args == ("needy-mcp==2.0.0", "--repository", "acme/app")
    assert dict(entries["n"].env) == {"A": "1"}  # the entries given are not changed


def test_plan_upgrades_asks_for_a_new_input_by_its_flag() -> None:
    entries = {"n": ServerEntry(command="uvx", args=("needy-mcp==1.0.0",))}
    update = update_to(pypi("2.0.0", NAMED, POSITIONAL), "n")
    with pytest.raises(MissingInputError) as caught:
        plan_upgrades(entries, [update])
    assert caught.value.message == (
        "n: io.x/needy@2.0.0 needs new values: --env REPOSITORY=... --env PATH=..."
    )
    assert caught.value.hint == "mcpctl upgrade n --env REPOSITORY=... --env PATH=..."


def test_plan_upgrades_is_all_or_none() -> None:
    entries = {
        "a": ServerEntry(command="uvx", args=("needy-mcp==1.0.0",)),
        "b": ServerEntry(command="uvx", args=("needy-mcp==1.0.0", "--repository", "r")),
    }
    updates = [update_to(pypi("2.0.0", NAMED), "b"), update_to(pypi("2.0.0", NAMED), "a")]
    with pytest.raises(MissingInputError, match=r"^a: "):
        plan_upgrades(entries, updates)
    assert list(plan_upgrades(entries, updates[:1])) == ["b"]


def needing(args: tuple[str, ...], *names: str) -> Conversion:
    """A conversion whose new arguments hold ``${NAME}`` for each missing input ``names``."""
    missing = [MissingInput(n, f"--env {n}=...", "") for n in names]
    return Conversion(ServerEntry(command="uvx", args=args), "pypi", missing=missing)


def old(*args: str) -> ServerEntry:
    return ServerEntry(command="uvx", args=args)


def test_a_flagged_value_is_found_wherever_the_flag_is() -> None:
    new = needing(("needy-mcp==2.0.0", "--repository", "${REPOSITORY}"), "REPOSITORY")
    assert carried_over(old("needy-mcp==1", "-v", "--repository", "acme/app"), new) == {
        "REPOSITORY": "acme/app"
    }
    first = needing(("--python", "${PYTHON}", "needy-mcp==2.0.0"), "PYTHON")
    assert carried_over(old("-q", "--python", "3.12", "needy-mcp==1"), first) == {"PYTHON": "3.12"}


def test_a_leading_placeholder_has_no_flag_before_it() -> None:
    new = needing(("${PATH}", "needy-mcp==2.0.0", "--verbose"), "PATH")
    assert carried_over(old("needy-mcp==1", "--verbose", "extra", "more"), new) == {}
    assert carried_over(old("/p", "needy-mcp==1", "--verbose"), new) == {"PATH": "/p"}


def test_only_a_whole_placeholder_is_a_missing_input() -> None:
    for lookalike in ("--PATH}", "--PATHS"):
        new = needing(("needy-mcp==2.0.0", "${PATH}", lookalike), "PATH")
        assert carried_over(old("needy-mcp==1", "/p", lookalike), new) == {"PATH": "/p"}


def test_plan_upgrades_refuses_a_new_version_that_converts_to_an_invalid_entry() -> None:
    entries = {"n": ServerEntry(command="uvx", args=("needy-mcp==1.0.0",))}
    bad = {"name": "A=B", "value": "1"}
    update = update_to(pypi("2.0.0", environmentVariables=[bad]), "n")
    with pytest.raises(UsageError) as caught:
        plan_upgrades(entries, [update])
    assert caught.value.message == (
        "n: the new version converts to an invalid entry: "
        "'A=B' is not a valid environment variable name"
    )

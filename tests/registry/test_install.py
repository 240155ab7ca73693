"""Adding servers from a registry and upgrading them, through the library (no CLI)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from mcpctl.config.loader import read_config
from mcpctl.config.model import ServerEntry, Source
from mcpctl.config.store import ConfigStore
from mcpctl.errors import (
    MissingInputError,
    PlaintextSecretError,
    ServerExistsError,
    ServerNotFoundError,
    UsageError,
)
from mcpctl.registry import DiscoveryCache
from mcpctl.registry.convert import MissingInput
from mcpctl.registry.install import (
    UpgradePlan,
    apply_add,
    apply_upgrade,
    plan_add,
    plan_upgrade,
)
from mcpctl.registry.sources import RegistrySource
from mcpctl.registry.syncing import sync_source
from tests.registry.conftest import Publish
from tests.registry.server import Registry, make_record, running


def tool(version: str = "1.0.0", *more: dict[str, Any]) -> dict[str, Any]:
    """io.team/tool at ``version``: an npm package with a defaulted MODE variable (and
    ``more`` environment variables)."""
    variables = [{"name": "MODE", "default": "fast"}, *more]
    pkg = {"registryType": "npm", "identifier": "@team/tool", "version": version,
           "environmentVariables": variables}  # fmt: skip
    return make_record("io.team/tool", version, packages=[pkg])


def needy() -> dict[str, Any]:
    """A server with two required inputs that have no default (an env var, an argument)."""
    pkg = {"registryType": "pypi", "identifier": "needy-mcp", "version": "2.0.0",
           "environmentVariables": [{"name": "HOST", "isRequired": True, "description": "DB host"}],
           "packageArguments": [{"type": "named", "name": "--repository", "isRequired": True}]}  # fmt: skip
    return make_record("io.team/needy", "2.0.0", packages=[pkg])


def tenant_remote() -> dict[str, Any]:
    """A remote with a required header and a secret one."""
    remote = {"type": "streamable-http", "url": "https://mcp.example.com/mcp",
              "headers": [{"name": "X-Tenant", "isRequired": True},
                          {"name": "Authorization", "value": "Bearer {token}", "isSecret": True}]}  # fmt: skip
    return make_record("io.team/remote", "3.0.0", packages=[], remotes=[remote])


class World:
    """A file registry "team", a cache, and a config file with its backups."""

    def __init__(self, tmp_path: Path, publish: Publish) -> None:
        self.publish = publish
        self.catalog = publish(tool(), needy(), tenant_remote())
        self.source = RegistrySource("team", "file", str(self.catalog))
        self.cache = DiscoveryCache.memory()
        self.store = ConfigStore(tmp_path / "external-mcps.json", backups=tmp_path / "backups")

    @property
    def entries(self) -> dict[str, ServerEntry]:
        return dict(read_config(self.store.path).config.entries)

    def data(self) -> dict[str, Any]:
        return dict(json.loads(self.store.path.read_text("utf-8")))

    def plan(self, spec: str = "io.team/tool", **kw: Any) -> Any:
        return plan_add(self.cache, [self.source], spec, self.entries, **kw)

    def republish(self, *records: dict[str, Any]) -> None:
        self.publish(*records)
        sync_source(self.cache, self.source)


@pytest.fixture
def world(tmp_path: Path, catalog: Publish) -> World:
    return World(tmp_path, catalog)


def test_adding_the_same_registry_server_twice_changes_nothing(world: World) -> None:
    first = world.plan(env={"MODE": "careful"})
    assert (first.name, first.existing, first.unchanged) == ("tool", None, False)
    outcome = apply_add(world.store, first)
    assert outcome is not None and not outcome.replaced
    before = world.store.path.read_bytes()
    backups = len(world.store.history())
    # The registry has moved on since: "the same server" is any version of it.
    world.republish(tool("1.1.0"), needy(), tenant_remote())
    again = world.plan()
    assert again.unchanged and again.existing == "tool" and again.name == "tool"
    assert again.record.version == "1.1.0"
    assert apply_add(world.store, again) is None
    assert world.store.path.read_bytes() == before
    assert len(world.store.history()) == backups
    # Naming the entry it already has is the same request.
    assert world.plan(name="tool").unchanged


def test_a_server_already_added_is_not_asked_for_again(world: World) -> None:
    apply_add(world.store, world.plan("io.team/needy", env={"HOST": "h", "REPOSITORY": "r"}))
    before = world.store.path.read_bytes()

    def ask(missing: MissingInput) -> str:
        raise AssertionError(f"asked for {missing.name}")

    plan = world.plan("io.team/needy", ask=ask)
    assert plan.unchanged and plan.existing == "needy"
    assert world.plan("io.team/needy").unchanged  # no ask: no MissingInputError either
    assert apply_add(world.store, plan) is None
    assert world.store.path.read_bytes() == before


def test_force_replaces_the_existing_entry_under_its_name(world: World) -> None:
    apply_add(world.store, world.plan(name="mine", env={"MODE": "careful"}))
    world.republish(tool("1.1.0"), needy(), tenant_remote())
    plan = world.plan(force=True)
    assert (plan.name, plan.existing, plan.unchanged) == ("mine", "mine", False)
    outcome = apply_add(world.store, plan)
    assert outcome is not None and outcome.replaced
    data = world.data()
    assert list(data) == ["mine"]
    assert data["mine"]["args"] == ["-y", "@team/tool@1.1.0"]
    assert data["mine"]["source"]["version"] == "1.1.0"


def test_an_explicit_new_name_adds_a_second_copy(world: World) -> None:
    apply_add(world.store, world.plan())
    plan = world.plan(name="tool-eu", env={"MODE": "eu"})
    assert (plan.name, plan.existing, plan.unchanged) == ("tool-eu", "tool", False)
    apply_add(world.store, plan)
    data = world.data()
    assert list(data) == ["tool", "tool-eu"]
    assert data["tool"]["env"] == {"MODE": "fast"} and data["tool-eu"]["env"] == {"MODE": "eu"}
    assert data["tool"]["source"] == data["tool-eu"]["source"]


def test_an_explicit_name_taken_by_another_server_needs_force(world: World) -> None:
    world.store.add("db", ServerEntry(command="echo"))
    plan = world.plan("io.team/needy", name="db", env={"HOST": "h", "REPOSITORY": "r"})
    with pytest.raises(ServerExistsError):
        apply_add(world.store, plan)
    assert world.data()["db"] == {"command": "echo"}
    apply_add(world.store, plan, force=True)
    assert world.data()["db"]["command"] == "uvx"


def test_ask_is_called_for_each_missing_input(world: World) -> None:
    asked: list[MissingInput] = []
    answers = {"HOST": "db.internal", "REPOSITORY": "acme/app", "X-Tenant": "acme"}

    def ask(missing: MissingInput) -> str:
        asked.append(missing)
        return answers[missing.name]

    plan = world.plan("io.team/needy", ask=ask)
    assert [(m.name, m.flag) for m in asked] == [
        ("HOST", "--env HOST=..."),
        ("REPOSITORY", "--env REPOSITORY=..."),
    ]
    assert asked[0].description == "DB host"
    assert plan.entry.env == {"HOST": "db.internal"}
    assert plan.entry.args == ("needy-mcp==2.0.0", "--repository", "acme/app")
    assert plan.conversion.missing == []
    asked.clear()
    remote = world.plan("io.team/remote", ask=ask)
    assert [(m.name, m.flag) for m in asked] == [("X-Tenant", "--header 'X-Tenant: ...'")]
    assert remote.entry.headers == {"X-Tenant": "acme", "Authorization": "Bearer ${TOKEN}"}
    apply_add(world.store, remote)
    assert world.data()["remote"]["headers"]["X-Tenant"] == "acme"


def test_values_given_up_front_are_not_asked_for(world: World) -> None:
    def ask(missing: MissingInput) -> str:
        raise AssertionError(f"asked for {missing.name}")

    plan = world.plan("io.team/needy", ask=ask, env={"HOST": "h", "REPOSITORY": "r"})
    assert plan.entry.env == {"HOST": "h"}


def test_without_ask_missing_inputs_are_an_error_listing_the_flags(world: World) -> None:
    with pytest.raises(MissingInputError) as caught:
        world.plan("io.team/needy")
    message = caught.value.message
    assert "--env HOST=..." in message and "--env REPOSITORY=..." in message
    assert "DB host" in message
    assert not world.store.path.exists()


def test_a_server_missing_while_a_registry_is_down_says_so(world: World) -> None:
    dead = RegistrySource("dead", "http", "http://127.0.0.1:9")
    world.cache.note_failure("dead")
    with pytest.raises(UsageError, match=r"no server 'io\.dead/thing'") as caught:
        plan_add(world.cache, [world.source, dead], "io.dead/thing", {})
    assert "'dead'" in (caught.value.hint or "")
    assert "mcpctl registry sync dead" in (caught.value.hint or "")


# --- upgrades -----------------------------------------------------------------------


def test_upgrade_is_one_write_and_one_undo(world: World) -> None:
    apply_add(world.store, world.plan(env={"MODE": "careful"}))
    apply_add(world.store, world.plan("io.team/needy", env={"HOST": "h", "REPOSITORY": "r"}))
    world.store.set_enabled("tool", False)
    before = world.store.path.read_bytes()
    backups = len(world.store.history())
    needy_2 = needy()
    needy_2["server"]["version"] = "2.1.0"
    needy_2["server"]["packages"][0]["version"] = "2.1.0"
    world.republish(tool("1.1.0"), needy_2, tenant_remote())
    plan = plan_upgrade(world.cache, [world.source], world.entries)
    assert [(u.name, u.pinned, u.latest) for u in plan.updates] == [
        ("tool", "1.0.0", "1.1.0"),
        ("needy", "2.0.0", "2.1.0"),
    ]
    assert world.store.path.read_bytes() == before  # planning writes nothing
    assert apply_upgrade(world.store, plan) is True
    assert len(world.store.history()) == backups + 1
    assert world.store.history()[-1].action == "upgrade tool needy"
    data = world.data()
    assert data["tool"]["args"] == ["-y", "@team/tool@1.1.0"]
    assert data["tool"]["env"] == {"MODE": "careful"} and data["tool"]["enabled"] is False
    assert data["needy"]["args"] == ["needy-mcp==2.1.0", "--repository", "r"]
    world.store.undo()
    assert world.store.path.read_bytes() == before
    assert len(world.store.history()) == backups
    # Up to date: nothing planned, nothing written.
    apply_upgrade(world.store, plan_upgrade(world.cache, [world.source], world.entries))
    after = world.store.path.read_bytes()
    again = plan_upgrade(world.cache, [world.source], world.entries)
    assert again.updates == [] and again.entries == {}
    assert apply_upgrade(world.store, again) is False
    assert world.store.path.read_bytes() == after


def test_upgrade_keeps_values_given_for_arguments_and_url_variables(world: World) -> None:
    """Values given at add time that went into the arguments or the URL (not the env) are
    carried over, not asked for again."""

    def tenant(version: str) -> dict[str, Any]:
        remote = {"type": "sse", "url": "https://{tenant}.example.com/v" + version[0] + "/sse",
                  "variables": {"tenant": {"isRequired": True}}}  # fmt: skip
        return make_record("io.team/tenant", version, packages=[], remotes=[remote])

    world.republish(tool(), needy(), tenant("1.0.0"))
    apply_add(world.store, world.plan("io.team/needy", env={"HOST": "h", "REPOSITORY": "acme/app"}))
    apply_add(world.store, world.plan("io.team/tenant", env={"TENANT": "acme"}))
    assert world.data()["tenant"]["url"] == "https://acme.example.com/v1/sse"
    needy_2 = needy()
    needy_2["server"]["version"] = "2.1.0"
    needy_2["server"]["packages"][0]["version"] = "2.1.0"
    world.republish(tool(), needy_2, tenant("1.5.0"))
    plan = plan_upgrade(world.cache, [world.source], world.entries)
    assert plan.entries["needy"].args == ("needy-mcp==2.1.0", "--repository", "acme/app")
    assert plan.entries["tenant"].url == "https://acme.example.com/v1/sse"
    # A new URL shape has nothing to match: the value is asked for again.
    world.republish(tool(), needy_2, tenant("2.0.0"))
    with pytest.raises(MissingInputError, match="TENANT"):
        plan_upgrade(world.cache, [world.source], world.entries)


def test_upgrade_of_named_servers_only(world: World) -> None:
    apply_add(world.store, world.plan())
    apply_add(world.store, world.plan(name="other"))
    world.republish(tool("2.0.0"), needy(), tenant_remote())
    plan = plan_upgrade(world.cache, [world.source], world.entries, ["other"])
    assert [u.name for u in plan.updates] == ["other"] and list(plan.entries) == ["other"]


def test_upgrade_of_an_unknown_name_is_server_not_found(world: World) -> None:
    apply_add(world.store, world.plan())
    with pytest.raises(ServerNotFoundError) as caught:
        plan_upgrade(world.cache, [world.source], world.entries, ["tol"])
    assert caught.value.code == "server_not_found" and "tool" in (caught.value.hint or "")


def test_upgrade_of_a_server_not_from_a_registry_is_a_usage_error(world: World) -> None:
    world.store.add("local", ServerEntry(command="echo"))
    with pytest.raises(UsageError, match="not added from a registry") as caught:
        plan_upgrade(world.cache, [world.source], world.entries, ["local"])
    assert type(caught.value) is UsageError and caught.value.code == "usage_error"


def test_upgrade_asks_only_the_registries_concerned(world: World) -> None:
    apply_add(world.store, world.plan())
    dead = RegistrySource("dead", "http", "http://127.0.0.1:9")
    world.cache.note_failure("dead")
    plan = plan_upgrade(world.cache, [world.source, dead], world.entries)
    assert plan.warnings == [] and plan.updates == []


def test_an_upgrade_to_a_literal_secret_is_refused(world: World) -> None:
    """A new version whose (non-secret) default looks like a credential would put it into
    the file: the store refuses the whole upgrade, and the file stays as it was."""
    apply_add(world.store, world.plan())
    before = world.store.path.read_bytes()
    backups = len(world.store.history())
    leaky = {"name": "SERVICE_KEY", "default": "sk-live-4f9aT2qLx8Zr7NwB3cVd"}
    world.republish(tool("1.1.0", leaky), needy(), tenant_remote())
    plan = plan_upgrade(world.cache, [world.source], world.entries)
    assert plan.entries["tool"].env["SERVICE_KEY"].startswith("sk-")
    with pytest.raises(PlaintextSecretError, match=r"tool\.env\.SERVICE_KEY"):
        apply_upgrade(world.store, plan)
    assert world.store.path.read_bytes() == before
    assert len(world.store.history()) == backups


def test_a_hand_made_upgrade_plan_with_a_literal_secret_is_refused(world: World) -> None:
    apply_add(world.store, world.plan())
    before = world.store.path.read_bytes()
    entry = world.entries["tool"]
    leaked = replace(
        entry, env={**entry.env, "GITHUB_TOKEN": "ghp_16C7e42F292c6912E7710c838347Ae178B4a"}
    )
    with pytest.raises(PlaintextSecretError):
        apply_upgrade(world.store, UpgradePlan(updates=[], entries={"tool": leaked}))
    assert world.store.path.read_bytes() == before


# --- what mutation testing found unpinned ----------------------------------------------------


def test_a_plan_names_its_registry_and_a_free_name(world: World) -> None:
    world.store.add("tool", ServerEntry(command="mine"))
    plan = world.plan()
    assert plan.registry == "team" and plan.existing is None
    assert plan.name == "team-tool" and plan.warnings == []
    assert plan.entry.source is not None and plan.entry.source.registry == "team"


def test_what_is_missing_is_listed_with_its_flag_and_description(world: World) -> None:
    with pytest.raises(MissingInputError) as caught:
        world.plan("io.team/needy")
    assert caught.value.message == (
        "io.team/needy needs values that have no default: HOST (--env HOST=...): DB host; "
        "REPOSITORY (--env REPOSITORY=...)"
    )
    assert caught.value.hint == "pass them with the flags shown (there is no terminal to ask on)"


def test_overrides_and_allowed_literals_reach_the_entry(world: World) -> None:
    plan = world.plan(overrides={"description": "mine", "allow_literal": ["MODE"]},
                      env={"MODE": "literal-value"})  # fmt: skip
    assert plan.entry.description == "mine"
    assert "MODE" in plan.entry.allow_literal
    apply_add(world.store, plan)
    # already added: the plan changes nothing, so nothing is allowed either
    again = world.plan(overrides={"allow_literal": ["OTHER"]})
    assert again.unchanged and "OTHER" not in again.entry.allow_literal


def test_offline_the_registry_is_not_read(world: World) -> None:
    with pytest.raises(UsageError):
        world.plan(offline=True)
    assert world.cache.sync_state("team") is None
    plan = world.plan()  # online: the stale cache is refreshed first
    assert plan.record.name == "io.team/tool"
    assert world.cache.sync_state("team") is not None


def test_the_registry_named_is_the_one_used(world: World, catalog: Publish) -> None:
    other = catalog(tool("9.0.0"))
    second = RegistrySource("other", "file", str(other))
    plan = plan_add(world.cache, [world.source, second], "io.team/tool", {}, registry="other")
    assert plan.registry == "other" and plan.record.version == "9.0.0"


def test_an_upgrade_is_recorded_under_its_servers_names(world: World) -> None:
    apply_add(world.store, world.plan())
    world.republish(tool("1.1.0"), needy(), tenant_remote())
    plan = plan_upgrade(world.cache, [world.source], world.entries)
    assert apply_upgrade(world.store, plan) is True
    assert world.store.history()[-1].action == "upgrade tool"


def test_only_the_registries_of_the_servers_concerned_are_refreshed(world: World) -> None:
    apply_add(world.store, world.plan())
    dead = RegistrySource("dead", "http", "http://127.0.0.1:9")
    off = ServerEntry(command="x")
    entries = {**world.entries, "local": off}
    plan = plan_upgrade(world.cache, [world.source, dead], entries, refresh_timeout=5)
    assert plan.warnings == []  # "dead" is no server's registry: never asked
    plan = plan_upgrade(world.cache, [world.source], entries, ["tool"], offline=True)
    assert plan.updates == [] and plan.warnings == []
    from mcpctl.config.model import Source

    gone = ServerEntry(command="x", source=Source("dead", "io.dead/x", "1.0.0"))
    plan = plan_upgrade(world.cache, [world.source, dead], {**entries, "gone": gone},
                        refresh_timeout=5)  # fmt: skip
    assert any("dead" in w for w in plan.warnings), plan.warnings
    # offline it is not asked; nor when the server from it is not among those named
    both = [world.source, dead]
    plan = plan_upgrade(world.cache, both, {**entries, "gone": gone}, offline=True)
    assert plan.warnings == ["registry 'dead' has never been synced (offline)"]
    plan = plan_upgrade(world.cache, both, {**entries, "gone": gone}, ["tool"], refresh_timeout=5)
    assert plan.warnings == []


def both_kinds() -> dict[str, Any]:
    """io.team/both: an npm and a pypi package, and a remote."""
    packages = [{"registryType": "npm", "identifier": "@team/both", "version": "1.0.0"},
                {"registryType": "pypi", "identifier": "both-mcp", "version": "1.0.0"}]  # fmt: skip
    remotes = [{"type": "streamable-http", "url": "https://both.example.com/mcp"}]
    return make_record("io.team/both", "1.0.0", packages=packages, remotes=remotes)


def test_the_kind_asked_for_is_the_one_planned(world: World) -> None:
    world.republish(tool(), needy(), tenant_remote(), both_kinds())
    assert world.plan("io.team/both").entry.command == "npx"  # a package first, the first one
    remote = world.plan("io.team/both", prefer="remote").entry
    assert (remote.url, remote.command) == ("https://both.example.com/mcp", None)
    pypi = world.plan("io.team/both", package_type="pypi").entry
    assert (pypi.command, pypi.args) == ("uvx", ("both-mcp==1.0.0",))


def test_a_server_missing_offline_says_only_the_cache_was_searched(world: World) -> None:
    sync_source(world.cache, world.source)
    with pytest.raises(UsageError) as caught:
        world.plan("io.team/nothing", offline=True)
    assert caught.value.message == (
        "no server 'io.team/nothing' in the registries' cache (offline: the network was not used)"
    )


def test_the_refresh_warnings_are_the_plans(world: World) -> None:
    dead = RegistrySource("dead", "http", "http://127.0.0.1:9")
    world.cache.note_failure("dead")
    plan = plan_add(world.cache, [world.source, dead], "io.team/tool", {})
    [warning] = plan.warnings
    assert warning.startswith("registry 'dead' was unreachable")


def test_the_refresh_is_given_the_time_asked_for(world: World) -> None:
    """A registry that never answers is waited for ``refresh_timeout`` seconds, as said in
    its warning (the default, 15 s, would say so), when adding and when upgrading."""
    reg = Registry([tool()])
    reg.mode = "hang"
    with running(reg) as url:
        slow = RegistrySource("slow", "http", url)
        plan = plan_add(world.cache, [world.source, slow], "io.team/tool", {},
                        refresh_timeout=0.5)  # fmt: skip
        assert len(plan.warnings) == 1 and "within 0.5 s" in plan.warnings[0], plan.warnings
        fresh = DiscoveryCache.memory()  # the first cache remembers the failure
        entries = {"x": ServerEntry(command="x", source=Source("slow", "io.team/tool", "0.9.0"))}
        upgrade = plan_upgrade(fresh, [slow], entries, refresh_timeout=0.5)
        assert len(upgrade.warnings) == 1 and "within 0.5 s" in upgrade.warnings[0]


def test_an_upgrade_refreshes_the_registries_unless_offline(world: World) -> None:
    """A registry never synced is read before upgrading (not when offline)."""
    entries = {"x": ServerEntry(command="x", source=Source("team", "io.team/tool", "0.9.0"))}
    offline = plan_upgrade(world.cache, [world.source], entries, offline=True)
    assert offline.updates == [] and offline.warnings == [
        "registry 'team' has never been synced (offline)"
    ]
    online = plan_upgrade(world.cache, [world.source], entries)
    assert [(u.name, u.latest) for u in online.updates] == [("x", "1.0.0")]
    assert online.warnings == []


def test_the_values_given_for_an_upgrade_are_used(world: World) -> None:
    apply_add(world.store, world.plan())
    token = {"name": "REGION", "isRequired": True}
    world.republish(tool("1.1.0", token), needy(), tenant_remote())
    with pytest.raises(MissingInputError, match="REGION"):
        plan_upgrade(world.cache, [world.source], world.entries)
    plan = plan_upgrade(world.cache, [world.source], world.entries, env={"REGION": "eu"})
    assert plan.entries["tool"].env == {"MODE": "fast", "REGION": "eu"}

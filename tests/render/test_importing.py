"""import: what each server becomes, literal secrets lifted into the keyring, conflicts."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.config.store import ConfigStore
from mcpctl.config.trust import TrustStore
from mcpctl.errors import KeyringUnavailableError, ServerNotFoundError, UsageError
from mcpctl.render.base import Places
from mcpctl.render.importing import (
    apply_import,
    client_targets,
    here,
    plan_import,
    read_source,
    scan,
)

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def test_plain_entries_are_added_and_same_ones_are_unchanged() -> None:
    entries = {"time": ServerEntry(command="uvx", args=("mcp-server-time",))}
    items = plan_import(entries, {})
    assert [(i.name, i.action, i.as_name) for i in items] == [("time", "add", "time")]
    items = plan_import(entries, dict(entries))
    assert items[0].action == "unchanged"


@pytest.mark.parametrize(
    ("on_conflict", "action", "as_name"),
    [("skip", "skip", "time"), ("overwrite", "overwrite", "time"), ("rename", "rename", "time-3")],
)
def test_conflicts(on_conflict: str, action: str, as_name: str) -> None:
    existing = {"time": ServerEntry(command="other"), "time-2": ServerEntry(command="x")}
    items = plan_import(
        {"time": ServerEntry(command="uvx")},
        existing,
        on_conflict=on_conflict,  # type: ignore[arg-type]
    )
    assert (items[0].action, items[0].as_name) == (action, as_name)


def test_literal_secrets_become_placeholders_and_values_travel_separately() -> None:
    entry = ServerEntry(
        command="npx", env={"GITHUB_TOKEN": TOKEN, "MODE": "fast"},
    )  # fmt: skip
    remote = ServerEntry(url="https://api.example.com/mcp", headers={"X-Api-Key": TOKEN + "x"})
    items = plan_import({"gh": entry, "api": remote}, {})
    gh, api = items
    assert gh.entry is not None and api.entry is not None
    assert gh.entry.env == {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "MODE": "fast"}
    assert gh.secrets == {"GITHUB_TOKEN": TOKEN}
    assert api.entry.headers == {"X-Api-Key": "${X_API_KEY}"}
    assert TOKEN not in json.dumps([i.to_dict() for i in items])


def test_a_different_secret_under_a_taken_name_gets_another_name() -> None:
    entries = {
        "a": ServerEntry(command="x", env={"GITHUB_TOKEN": TOKEN}),
        "b": ServerEntry(command="x", env={"GITHUB_TOKEN": TOKEN[:-1] + "Z"}),
        "c": ServerEntry(command="x", env={"GITHUB_TOKEN": TOKEN}),
    }
    a, b, c = plan_import(entries, {})
    assert list(a.secrets) == ["GITHUB_TOKEN"] and list(b.secrets) == ["GITHUB_TOKEN_2"]
    assert list(c.secrets) == ["GITHUB_TOKEN"], "the same value shares its variable"
    taken = plan_import(
        {"a": entries["b"]}, {}, taken_secrets=lambda n: "other" if n == "GITHUB_TOKEN" else None
    )
    assert list(taken[0].secrets) == ["GITHUB_TOKEN_2"]


def test_a_keyring_that_cannot_be_asked_still_plans_the_import() -> None:
    from mcpctl.errors import KeyringUnavailableError

    def unreachable(name: str) -> str | None:
        raise KeyringUnavailableError("no usable keyring: no bus", reason="no bus")

    entries = {"a": ServerEntry(command="x", env={"GITHUB_TOKEN": TOKEN})}
    (item,) = plan_import(entries, {}, taken_secrets=unreachable)  # storing it says why
    assert item.action == "add" and list(item.secrets) == ["GITHUB_TOKEN"]


def test_only_unknown_name() -> None:
    with pytest.raises(ServerNotFoundError):
        plan_import({"a": ServerEntry(command="x")}, {}, only=["b"])


def test_apply_stores_secrets_first_and_never_writes_them(tmp_path: Path) -> None:
    store = ConfigStore(tmp_path / "c.json", backups=tmp_path / "backups")
    kept: dict[str, str] = {}
    entries = {
        "gh": ServerEntry(command="npx", env={"GITHUB_TOKEN": TOKEN}),
        "time": ServerEntry(command="uvx"),
    }
    items = apply_import(store, plan_import(entries, {}), keep_secret=kept.__setitem__, source="t")
    assert [i.action for i in items] == ["add", "add"]
    assert kept == {"GITHUB_TOKEN": TOKEN}
    text = (tmp_path / "c.json").read_text()
    assert TOKEN not in text and json.loads(text)["gh"]["env"] == {
        "GITHUB_TOKEN": "${GITHUB_TOKEN}"
    }
    assert [b.action for b in store.history()] == ["import t"], "one change, one undo step"


def test_apply_without_a_keyring_skips_entries_with_secrets(tmp_path: Path) -> None:
    store = ConfigStore(tmp_path / "c.json")
    entries = {
        "gh": ServerEntry(command="npx", env={"GITHUB_TOKEN": TOKEN}),
        "time": ServerEntry(command="uvx"),
    }

    def broken(name: str, value: str) -> None:
        raise KeyringUnavailableError("no keyring here")

    items = apply_import(store, plan_import(entries, {}), keep_secret=broken, source="t")
    assert [i.action for i in items] == ["skip", "add"]
    assert "no keyring here" in (items[0].reason or "")
    assert list(json.loads((tmp_path / "c.json").read_text())) == ["time"]
    items = apply_import(store, plan_import(entries, {}), keep_secret=None, source="t")
    assert items[0].action == "skip" and "literal secret" in (items[0].reason or "")


def test_literals_under_secret_names_are_lifted_like_tokens_unless_allowed() -> None:
    entry = ServerEntry(command="npx", env={"BRAVE_API_KEY": "mypassword123", "MODE": "fast",
                                            "MY_PAT": "not-a-secret"})  # fmt: skip
    remote = ServerEntry(url="https://api.example.com/mcp", headers={"Authorization": "Bearer abc"})
    brave, api = plan_import({"brave": entry, "api": remote}, {})
    assert brave.entry is not None and api.entry is not None
    assert brave.entry.env == {"BRAVE_API_KEY": "${BRAVE_API_KEY}", "MODE": "fast",
                               "MY_PAT": "${MY_PAT}"}  # fmt: skip
    assert brave.secrets == {"BRAVE_API_KEY": "mypassword123", "MY_PAT": "not-a-secret"}
    # The whole value moves, as a token-shaped one does.
    assert api.entry.headers == {"Authorization": "${AUTHORIZATION}"}
    assert api.secrets == {"AUTHORIZATION": "Bearer abc"}
    [kept] = plan_import({"brave": entry}, {}, allow_literal=["MY_PAT", "NOT_THERE"])
    assert kept.entry is not None
    assert kept.entry.env["MY_PAT"] == "not-a-secret" and kept.entry.allow_literal == ("MY_PAT",)
    assert kept.secrets == {"BRAVE_API_KEY": "mypassword123"}


# --- finding other tools' files -------------------------------------------------------


def cursor_file(folder: Path, text: str) -> Path:
    (folder / ".cursor").mkdir(parents=True, exist_ok=True)
    path = folder / ".cursor" / "mcp.json"
    path.write_text(text, "utf-8")
    return path


def test_scan_reports_each_file_with_its_servers_or_its_error(tmp_path: Path) -> None:
    home, proj = tmp_path / "home", tmp_path / "proj"
    user = cursor_file(home, json.dumps({"mcpServers": {"a": {"command": "x"},
                                                        "b": {"command": "y", "weird": 1}}}))  # fmt: skip
    broken = cursor_file(proj, "{not json")
    (proj / ".vscode").mkdir()
    (proj / ".vscode" / "mcp.json").write_bytes(b"\xff\xfe")
    (proj / "opencode.json").mkdir()  # a folder where a file goes: not a file, not found
    found = scan(Places(home, proj, "linux", {}))
    assert [(f.source, f.path, f.scope) for f in found] == [
        ("vscode", proj / ".vscode" / "mcp.json", "project"),
        ("cursor", user, "user"),
        ("cursor", broken, "project"),
    ]
    vscode, good, bad = found
    assert vscode.error == f"{proj / '.vscode' / 'mcp.json'}:1:1: not UTF-8 text (byte 0xff)"
    assert (vscode.servers, vscode.warnings) == ([], [])
    assert good.servers == ["a", "b"] and good.error is None
    assert good.warnings == ["b: weird is not imported: a Cursor setting mcpctl does not have"]
    assert bad.servers == [] and bad.error == (
        "this is not a Cursor file: Expecting property name enclosed in double quotes "
        "(line 1, column 2)"
    )


def test_scan_lists_a_file_that_is_both_the_users_and_the_projects_once(tmp_path: Path) -> None:
    path = cursor_file(tmp_path, json.dumps({"mcpServers": {"a": {"command": "x"}}}))
    found = scan(Places(tmp_path, tmp_path, "linux", {}))
    assert [(f.source, f.path, f.scope, f.servers) for f in found] == [
        ("cursor", path, "user", ["a"])
    ]


def test_read_source_takes_the_projects_file_before_the_users(tmp_path: Path) -> None:
    home, proj = tmp_path / "home", tmp_path / "proj"
    cursor_file(home, json.dumps({"mcpServers": {"u": {"command": "x"}}}))
    places = Places(home, proj, "linux", {})
    path, parsed = read_source("cursor", None, places)
    assert path == home / ".cursor" / "mcp.json" and list(parsed.entries) == ["u"]
    project = cursor_file(proj, json.dumps({"mcpServers": {"p": {"command": "x"}}}))
    path, parsed = read_source("cursor", None, places)
    assert path == project and list(parsed.entries) == ["p"]
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"mcpServers": {"o": {"command": "x"}}}), "utf-8")
    path, parsed = read_source("cursor", other, places)
    assert path == other and list(parsed.entries) == ["o"]


def test_read_source_refusals_name_the_file_once(tmp_path: Path) -> None:
    home, proj = tmp_path / "home", tmp_path / "proj"
    places = Places(home, proj, "linux", {})

    def refusal(source: str, path: Path | None) -> tuple[str, str | None]:
        with pytest.raises(UsageError) as caught:
            read_source(source, path, places)
        return caught.value.message, caught.value.hint

    assert refusal("zed", None) == (
        f"no zed config found (looked in {proj / '.zed' / 'settings.json'}, "
        f"{home / '.config' / 'zed' / 'settings.json'})",
        "give its PATH",
    )
    assert refusal("mcp-proxy", None) == (
        "mcp-proxy has no config file of its own to look for",
        "give its PATH",
    )
    broken = cursor_file(proj, "{not json")
    assert refusal("cursor", None) == (
        f"{broken}: this is not a Cursor file: Expecting property name enclosed in double "
        "quotes (line 1, column 2)",
        None,
    )
    assert refusal("cursor", proj / "nope.json") == (f"{proj / 'nope.json'} does not exist", None)
    bad = proj / "bad.json"
    bad.write_bytes(b"\xff")
    assert refusal("cursor", bad) == (f"{bad}:1:1: not UTF-8 text (byte 0xff)", None)
    assert refusal("cursor", home.parent) == (
        f"{home.parent} is a directory, not a regular file",
        "mcpctl reads only regular files",
    )


def test_here_is_this_machine_with_the_given_environment() -> None:
    assert here({"A": "1"}) == Places(Path.home(), Path.cwd(), sys.platform, {"A": "1"})
    assert here().environ == dict(os.environ)


def test_the_import_sources_are_the_clients_with_files() -> None:
    names = [t.name for t in client_targets()]
    assert "claude-desktop" in names and "opencode" in names and "cursor" in names
    assert "mcp-proxy" not in names and "toolhive" not in names


# --- planning and applying, in detail -------------------------------------------------


def test_a_secret_flag_keeps_its_name_and_the_value_moves() -> None:
    entry = ServerEntry(command="x", args=("--password=hunter2xx", "--key=plain-value-1"))
    (item,) = plan_import({"s": entry}, {})
    assert item.entry is not None
    assert item.entry.args == ("--password=${PASSWORD}", "--key=${KEY}")
    assert item.secrets == {"PASSWORD": "hunter2xx", "KEY": "plain-value-1"}


def test_token_shaped_args_and_a_url_with_a_secret_are_named_after_the_server() -> None:
    (args,) = plan_import({"s": ServerEntry(command="x", args=("--token=" + TOKEN, TOKEN))}, {})
    assert args.entry is not None and args.entry.args == ("${S_TOKEN}", "${S_TOKEN_2}")
    assert args.secrets == {"S_TOKEN": "--token=" + TOKEN, "S_TOKEN_2": TOKEN}
    (url,) = plan_import({"s": ServerEntry(url="https://h/mcp?key=" + TOKEN)}, {})
    assert url.entry is not None and url.entry.url == "${S_URL}"
    assert url.secrets == {"S_URL": "https://h/mcp?key=" + TOKEN}


def test_an_allowed_header_is_matched_without_case() -> None:
    remote = ServerEntry(url="https://h/mcp", headers={"x-api-key": "plain-value-1"})
    (item,) = plan_import({"s": remote}, {}, allow_literal=["X-API-KEY", "X-API-KEY"])
    assert item.entry is not None and item.entry.headers == {"x-api-key": "plain-value-1"}
    assert item.entry.allow_literal == ("X-API-KEY",) and item.secrets == {}


def test_secrets_travel_only_with_an_entry_that_is_written() -> None:
    entry = ServerEntry(command="x", env={"GITHUB_TOKEN": TOKEN})
    clean = ServerEntry(command="x", env={"GITHUB_TOKEN": "${GITHUB_TOKEN}"})
    other = {"s": ServerEntry(command="y")}
    items = {
        how: plan_import({"s": entry}, other, on_conflict=how)[0]  # type: ignore[arg-type]
        for how in ("skip", "overwrite", "rename")
    }
    assert [(i.action, i.as_name, i.reason, i.secrets) for i in items.values()] == [
        ("skip", "s", "a server of that name is configured", {}),
        ("overwrite", "s", None, {"GITHUB_TOKEN": TOKEN}),
        ("rename", "s-2", None, {"GITHUB_TOKEN": TOKEN}),
    ]
    (same,) = plan_import({"s": entry}, {"s": clean})
    assert (same.action, same.reason, same.secrets) == (
        "unchanged", "already configured the same way", {}
    )  # fmt: skip
    assert same.entry == clean


def test_renamed_servers_of_one_import_do_not_take_each_others_names() -> None:
    # Two names alike in their first 60 characters are both renamed from those 60.
    one, two = "n" * 60 + "x", "n" * 60 + "y"
    taken = {one: ServerEntry(command="old"), two: ServerEntry(command="old")}
    items = plan_import({one: ServerEntry(command="a"), two: ServerEntry(command="b")}, taken,
                        on_conflict="rename")  # fmt: skip
    assert [i.as_name for i in items] == ["n" * 60 + "-2", "n" * 60 + "-3"]


def test_a_rename_gives_up_after_ten_thousand_namesakes() -> None:
    taken = {"a": ServerEntry(command="old")} | {
        f"a-{i}": ServerEntry(command="old") for i in range(2, 10_000)
    }
    with pytest.raises(UsageError) as caught:
        plan_import({"a": ServerEntry(command="new")}, taken, on_conflict="rename")
    assert caught.value.message == "no free name for 'a'"


def test_a_secret_gives_up_after_a_thousand_variables_taken() -> None:
    entry = ServerEntry(command="x", env={"GITHUB_TOKEN": TOKEN})
    with pytest.raises(UsageError) as caught:
        plan_import({"s": entry}, {}, taken_secrets=lambda _: "another value")
    assert caught.value.message == "no free variable name for GITHUB_TOKEN"
    last = "GITHUB_TOKEN_999"
    (item,) = plan_import({"s": entry}, {}, taken_secrets=lambda n: None if n == last else "v")
    assert list(item.secrets) == [last]
    with pytest.raises(UsageError):
        plan_import(
            {"s": entry}, {}, taken_secrets=lambda n: None if n == "GITHUB_TOKEN_1000" else "v"
        )


def test_only_an_args_flag_keeps_its_name_before_the_value() -> None:
    entry = ServerEntry(command="x", env={"API_KEY": "API_KEY=hunter2xx"})
    (item,) = plan_import({"s": entry}, {})
    assert item.entry is not None and item.entry.env == {"API_KEY": "${API_KEY}"}
    assert item.secrets == {"API_KEY": "API_KEY=hunter2xx"}


def test_only_picks_the_named_servers_in_the_sources_order() -> None:
    entries = {n: ServerEntry(command=n) for n in ("a", "b", "c")}
    items = plan_import(entries, {}, only=["c", "a", "c"])
    assert [i.name for i in items] == ["a", "c"]
    with pytest.raises(ServerNotFoundError) as caught:
        plan_import(entries, {}, only=["a", "zz", "yy"])
    assert "zz" in str(caught.value) and "yy" in str(caught.value)


def test_the_json_view_of_an_item() -> None:
    item = plan_import({"s": ServerEntry(command="x", env={"GITHUB_TOKEN": TOKEN,
                                                            "API_TOKEN": TOKEN + "y"})}, {})[0]  # fmt: skip
    assert item.to_dict() == {
        "name": "s", "action": "add", "as": "s", "secrets": ["API_TOKEN", "GITHUB_TOKEN"],
        "reason": None,
    }  # fmt: skip


def test_apply_writes_renames_and_overwrites_and_leaves_skips(tmp_path: Path) -> None:
    store = ConfigStore(tmp_path / "c.json", backups=tmp_path / "backups")
    store.update(
        lambda doc: doc.update(a={"command": "old"}, b={"command": "old"}), action="set up"
    )
    existing = {"a": ServerEntry(command="old"), "b": ServerEntry(command="old")}
    incoming = {"a": ServerEntry(command="new"), "b": ServerEntry(command="new")}
    renamed = plan_import({"a": incoming["a"]}, existing, on_conflict="rename")
    overwritten = plan_import({"b": incoming["b"]}, existing, on_conflict="overwrite")
    skipped = plan_import({"a": incoming["a"]}, existing)
    items = apply_import(store, renamed + overwritten + skipped, keep_secret=None, source="x")
    assert [i.action for i in items] == ["rename", "overwrite", "skip"]
    assert json.loads((tmp_path / "c.json").read_text()) == {
        "a": {"command": "old"}, "b": {"command": "new"}, "a-2": {"command": "new"},
    }  # fmt: skip
    assert [b.action for b in store.history()] == ["set up", "import x"]


def test_apply_with_nothing_to_write_changes_nothing(tmp_path: Path) -> None:
    store = ConfigStore(tmp_path / "c.json", backups=tmp_path / "backups")
    entry = ServerEntry(command="x", env={"GITHUB_TOKEN": TOKEN})
    items = apply_import(store, plan_import({"s": entry}, {}), keep_secret=None, source="x")
    assert [(i.action, i.reason) for i in items] == [
        ("skip", "it holds a literal secret and no keyring is set")
    ]
    assert not (tmp_path / "c.json").exists() and store.history() == []


def test_apply_says_why_the_keyring_failed_and_stores_nothing_for_a_skip(tmp_path: Path) -> None:
    store = ConfigStore(tmp_path / "c.json", backups=tmp_path / "backups")
    entry = ServerEntry(command="x", env={"GITHUB_TOKEN": TOKEN})
    calls: list[str] = []

    def broken(name: str, value: str) -> None:
        calls.append(name)
        raise KeyringUnavailableError("no keyring here")

    items = apply_import(store, plan_import({"s": entry}, {}), keep_secret=broken, source="x")
    assert items[0].reason == "it holds a literal secret and the keyring failed: no keyring here"
    other = {"s": ServerEntry(command="y")}
    kept: dict[str, str] = {}
    skipped = apply_import(
        store, plan_import({"s": entry}, other), keep_secret=kept.__setitem__, source="x"
    )
    assert skipped[0].action == "skip" and kept == {} and calls == ["GITHUB_TOKEN"]


def test_apply_stores_the_secrets_of_every_item(tmp_path: Path) -> None:
    store = ConfigStore(tmp_path / "c.json", backups=tmp_path / "backups")
    entries = {
        "time": ServerEntry(command="uvx"),
        "gh": ServerEntry(command="npx", env={"GITHUB_TOKEN": TOKEN}),
        "api": ServerEntry(command="npx", env={"API_TOKEN": TOKEN + "y"}),
    }
    kept: dict[str, str] = {}
    apply_import(store, plan_import(entries, {}), keep_secret=kept.__setitem__, source="t")
    assert kept == {"GITHUB_TOKEN": TOKEN, "API_TOKEN": TOKEN + "y"}
    store2 = ConfigStore(tmp_path / "d.json", backups=tmp_path / "backups2")
    items = apply_import(store2, plan_import(entries, {}), keep_secret=None, source="t")
    assert [i.action for i in items] == ["add", "skip", "skip"]
    assert list(json.loads((tmp_path / "d.json").read_text())) == ["time"]


def test_a_server_overwritten_by_import_is_approved(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    path = tmp_path / "proj" / "c.json"
    path.write_text(json.dumps({"a": {"command": "old"}}), "utf-8")  # written by hand
    store = ConfigStore(path, backups=tmp_path / "backups")
    store.trust_record, store.config_dir = tmp_path / "trust.json", tmp_path / "config"
    items = plan_import({"a": ServerEntry(command="new")}, {"a": ServerEntry(command="old")},
                        on_conflict="overwrite")  # fmt: skip
    apply_import(store, items, keep_secret=None, source="x")
    trust = TrustStore(tmp_path / "trust.json", config_dir=tmp_path / "config", environ={})
    assert trust.is_trusted(path, "a", ServerEntry(command="new"))


def test_scan_looks_past_a_clients_first_location(tmp_path: Path) -> None:
    home = tmp_path / "home"
    second = home / ".cline" / "data" / "settings" / "cline_mcp_settings.json"
    second.parent.mkdir(parents=True)
    second.write_text(json.dumps({"mcpServers": {"c": {"command": "x"}}}), "utf-8")
    found = scan(Places(home, tmp_path / "proj", "linux", {}))
    assert [(f.source, f.path, f.servers) for f in found] == [("cline", second, ["c"])]


@pytest.mark.parametrize("order", [("a", "a-2"), ("a-2", "a")])
def test_a_rename_does_not_take_the_name_of_a_server_the_import_adds(
    order: tuple[str, str],
) -> None:
    incoming = {name: ServerEntry(command=f"from-{name}") for name in order}
    items = plan_import(incoming, {"a": ServerEntry(command="mine")}, on_conflict="rename")
    written = {i.as_name: i.name for i in items if i.action in ("add", "rename")}
    assert written == {"a-3": "a", "a-2": "a-2"}


def test_a_rename_may_take_the_name_of_a_server_left_out_of_the_import() -> None:
    incoming = {name: ServerEntry(command=f"from-{name}") for name in ("a", "a-2")}
    items = plan_import(
        incoming, {"a": ServerEntry(command="mine")}, on_conflict="rename", only=["a"]
    )
    assert [(i.name, i.action, i.as_name) for i in items] == [("a", "rename", "a-2")]

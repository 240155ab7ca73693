"""import: what each server becomes, literal secrets lifted into the keyring, conflicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.config.store import ConfigStore
from mcpctl.errors import KeyringUnavailableError, ServerNotFoundError
from mcpctl.render.importing import apply_import, plan_import

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

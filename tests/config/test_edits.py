"""The edits of a config file the CLI and the daemon make: add, remove, enable, disable, and
groups; each says what it did, refuses what it cannot do in words that name it, and leaves
the file as it was when it refuses (mcpctl.config.edits)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpctl import ConfigStore, ServerEntry
from mcpctl.config.edits import AddOutcome, checked_entry, with_allowed_literals
from mcpctl.errors import (
    ConfigInvalidError,
    GroupNotFoundError,
    InvalidEntryError,
    PlaintextSecretError,
    ServerExistsError,
    ServerNotFoundError,
)


def _store(tmp_path: Path, doc: dict[str, object] | None = None) -> ConfigStore:
    path = tmp_path / "c.json"
    if doc is not None:
        path.write_text(json.dumps(doc))
    return ConfigStore(path, backups=tmp_path / "backups")


def _doc(store: ConfigStore) -> dict[str, object]:
    return json.loads(store.path.read_text())


def _actions(store: ConfigStore) -> list[str]:
    return [b.action for b in store.history()]


# --- add ------------------------------------------------------------------------------------


def test_add_says_whether_it_created_the_file_or_replaced_a_server(tmp_path: Path) -> None:
    store = _store(tmp_path)
    assert store.add("a", ServerEntry(command="x")) == AddOutcome("a", False, True)
    assert store.add("b", ServerEntry(command="y")) == AddOutcome("b", False, False)
    assert store.add("a", ServerEntry(command="z"), force=True) == AddOutcome("a", True, False)
    assert _doc(store) == {"a": {"command": "z"}, "b": {"command": "y"}}
    assert _actions(store) == ["add a", "add b", "add a"]


def test_add_refuses_a_name_taken_unless_forced(tmp_path: Path) -> None:
    store = _store(tmp_path, {"a": {"command": "x"}})
    with pytest.raises(ServerExistsError) as caught:
        store.add("a", ServerEntry(command="y"))
    assert caught.value.message == f"server 'a' already exists in {store.path}"
    assert caught.value.hint == "use --force to replace it, or 'mcpctl remove a' first"
    assert _doc(store) == {"a": {"command": "x"}} and _actions(store) == []


def test_add_refuses_a_bad_name_or_entry_in_the_models_words(tmp_path: Path) -> None:
    store = _store(tmp_path)
    with pytest.raises(InvalidEntryError) as caught:
        store.add("bad name!", ServerEntry(command="y"))
    assert caught.value.message == (
        "server name 'bad name!' may only contain letters, digits, '_' and '-'"
    )
    with pytest.raises(InvalidEntryError) as caught:
        store.add("s", ServerEntry(command="y", timeout=-1))
    assert caught.value.message == "s.timeout: timeout must be between 1 and 3600000 ms"
    assert not store.path.exists()


def test_add_refuses_a_literal_secret_unless_allowed(tmp_path: Path) -> None:
    store = _store(tmp_path)
    secret = ServerEntry(command="y", env={"API_KEY": "sk-abcdefghijklmnop1234"})
    with pytest.raises(PlaintextSecretError):
        store.add("s", secret)
    assert not store.path.exists()
    store.add("s", secret, allow_secrets=True)
    assert _doc(store) == {"s": {"command": "y", "env": {"API_KEY": "sk-abcdefghijklmnop1234"}}}


def test_add_keeps_the_literals_allowed_in_the_file(tmp_path: Path) -> None:
    store = _store(tmp_path)
    entry = ServerEntry(command="y", env={"API_KEY": "public"})
    with pytest.raises(PlaintextSecretError):  # a literal under a secret's name
        store.add("s", entry)
    store.add("s", entry, allow_literal=["API_KEY"])
    assert _doc(store)["s"] == {
        "command": "y",
        "env": {"API_KEY": "public"},
        "allow_literal": ["API_KEY"],
    }
    with pytest.raises(InvalidEntryError, match="allow_literal names 'NOPE'"):
        store.add("t", entry, allow_literal=["NOPE"])


# --- the literals an entry allows ---------------------------------------------------------


def test_allowing_no_literal_changes_nothing() -> None:
    entry = ServerEntry(command="y", env={"A": "1"})
    assert with_allowed_literals(entry, []) is entry
    assert with_allowed_literals(entry, iter(())) is entry


def test_an_allowed_literal_is_an_env_key_a_header_in_any_case_or_a_secret_flag() -> None:
    remote = ServerEntry(url="https://h", headers={"X-Key": "1"}, env={"E": "2"},
                         allow_literal=("E",))  # fmt: skip
    got = with_allowed_literals(remote, ["x-key", "E", "x-key", "X-KEY"])
    assert got.allow_literal == ("E", "x-key", "X-KEY")
    flagged = ServerEntry(command="y", args=("--api-key", "v"))
    assert with_allowed_literals(flagged, ["--api-key"]).allow_literal == ("--api-key",)


@pytest.mark.parametrize(
    ("entry", "hint"),
    [
        (ServerEntry(command="y"), "it has no env or headers"),
        (ServerEntry(command="y", env={"A": "1", "B": "2"}), "its keys: A, B"),
        (ServerEntry(url="https://h", headers={"X-Key": "1"}), "its keys: X-Key"),
        (
            ServerEntry(command="y", args=("--token", "t", "--api-key", "v"), env={"A": "1"}),
            "its keys: A, --api-key, --token",
        ),
    ],
)
def test_allowing_a_key_the_entry_lacks_is_refused_naming_its_keys(
    entry: ServerEntry, hint: str
) -> None:
    with pytest.raises(InvalidEntryError) as caught:
        with_allowed_literals(entry, ["A", "Q"] if "A" in entry.env else ["Q"])
    assert caught.value.message == (
        "allow_literal names 'Q', which is neither an env variable, a header nor a secret "
        "flag of the entry's arguments"
    )
    assert caught.value.hint == hint
    assert caught.value.subjects == ("Q",)


def test_an_entry_is_checked_as_the_write_would_check_it() -> None:
    assert checked_entry("s", ServerEntry(command="y", args=("a",))) == {
        "command": "y",
        "args": ["a"],
    }
    with pytest.raises(InvalidEntryError, match=r"^s.command contains the control character"):
        checked_entry("s", ServerEntry(command="y\x1b"))
    secret = ServerEntry(command="y", env={"API_KEY": "sk-abcdefghijklmnop1234"})
    with pytest.raises(PlaintextSecretError):
        checked_entry("s", secret)
    assert checked_entry("s", secret, allow_secrets=True)["env"] == {
        "API_KEY": "sk-abcdefghijklmnop1234"
    }
    with pytest.raises(InvalidEntryError, match=r"^server name 'a b' may only contain"):
        checked_entry("a b", ServerEntry(command="y"))


# --- remove ---------------------------------------------------------------------------------


def test_remove_takes_out_every_name_or_none(tmp_path: Path) -> None:
    store = _store(tmp_path, {"$schema": "s", "alpha": {"command": "x"}, "b": {"command": "y"}})
    with pytest.raises(ServerNotFoundError) as caught:
        store.remove(["alpah", "b", "$schema"])
    assert caught.value.message == f"no servers 'alpah', '$schema' in {store.path}"
    assert caught.value.hint == "did you mean 'alpha'?"
    assert list(_doc(store)) == ["$schema", "alpha", "b"] and _actions(store) == []
    assert store.remove(["b", "alpha", "b"]) == ["b", "alpha"]
    assert _doc(store) == {"$schema": "s"}
    assert _actions(store) == ["remove b alpha"]


def test_remove_with_missing_ok_takes_out_the_names_there_are(tmp_path: Path) -> None:
    store = _store(tmp_path, {"$schema": "s", "a": {"command": "x"}, "b": {"command": "y"}})
    assert store.remove(["zz", "a", "$schema"], missing_ok=True) == ["a"]
    assert _doc(store) == {"$schema": "s", "b": {"command": "y"}}
    assert _actions(store) == ["remove zz a $schema"]


# --- enable, disable ------------------------------------------------------------------------


def test_disable_and_enable_say_which_servers_changed_in_the_order_given(tmp_path: Path) -> None:
    store = _store(tmp_path, {"a": {"command": "x"}, "b": {"command": "y"}})
    assert store.set_enabled_many(["b", "a", "b"], False) == ["b", "a"]
    assert _doc(store) == {"a": {"command": "x", "enabled": False},
                           "b": {"command": "y", "enabled": False}}  # fmt: skip
    assert store.set_enabled_many(["a", "b"], False) == []
    assert store.set_enabled("a", True) is True
    assert _doc(store)["a"] == {"command": "x"}  # true is the default: the key goes
    assert store.set_enabled("a", True) is False
    assert store.set_enabled("a", False) is True
    assert _actions(store) == ["disable b a", "enable a", "disable a"]


def test_an_entry_written_enabled_true_is_already_enabled(tmp_path: Path) -> None:
    store = _store(tmp_path, {"a": {"command": "x", "enabled": True}})
    assert store.set_enabled_many(["a"], True) == []
    assert store.set_enabled_many(["a"], False) == ["a"]
    assert _doc(store) == {"a": {"command": "x", "enabled": False}}


def test_enabling_unknown_servers_names_each_and_changes_nothing(tmp_path: Path) -> None:
    store = _store(tmp_path, {"$schema": "s", "a": {"command": "x", "enabled": False}})
    with pytest.raises(ServerNotFoundError) as caught:
        store.set_enabled_many(["a", "x", "$schema"], True)
    assert caught.value.message == f"no servers 'x', '$schema' in {store.path}"
    assert _doc(store)["a"] == {"command": "x", "enabled": False}


def test_enabling_an_entry_that_is_not_an_object_is_refused(tmp_path: Path) -> None:
    store = _store(tmp_path, {"a": {"command": "x", "enabled": False}, "n": 5})
    with pytest.raises(ConfigInvalidError) as caught:
        store.set_enabled_many(["a", "n"], True)
    assert caught.value.message == "server 'n' is not a JSON object"
    assert _doc(store)["a"] == {"command": "x", "enabled": False}


# --- groups ---------------------------------------------------------------------------------


def test_group_edits_are_recorded_by_what_they_did(tmp_path: Path) -> None:
    store = _store(tmp_path, {"a": {"command": "x"}, "b": {"command": "y"}})
    assert store.add_to_group("g", ["b", "a", "b"]) == ["b", "a"]
    assert store.remove_from_group("g", ["a"]) == ["a"]
    assert store.add_to_group("g", ["a"]) == ["a"]
    assert store.remove_from_group("g") == ["a", "b"]  # every member, in file order
    assert _doc(store) == {"a": {"command": "x"}, "b": {"command": "y"}}
    assert _actions(store) == ["group add g b a", "group remove g a", "group add g a",
                               "group remove g"]  # fmt: skip


def test_a_bad_group_name_is_refused_naming_it(tmp_path: Path) -> None:
    store = _store(tmp_path, {"a": {"command": "x"}})
    with pytest.raises(InvalidEntryError) as caught:
        store.add_to_group("no good", ["a"])
    assert caught.value.subjects == ("no good",)
    assert "'no good'" in caught.value.message


def test_groups_are_written_in_their_place_among_the_fields(tmp_path: Path) -> None:
    store = _store(tmp_path, {
        "a": {"x-own": 1, "command": "x", "enabled": False},
        "b": {"command": "y", "description": "d"},
    })  # fmt: skip
    store.add_to_group("g", ["a", "b"])
    doc = _doc(store)
    assert list(doc["a"]) == ["x-own", "command", "groups", "enabled"]  # type: ignore[arg-type]
    assert list(doc["b"]) == ["command", "description", "groups"]  # type: ignore[arg-type]


def test_a_group_no_server_is_in_is_refused_with_the_groups_there_are(tmp_path: Path) -> None:
    store = _store(tmp_path, {
        "$x": {"groups": ["zeta"]},
        "a": {"command": "x", "groups": ["work", "alpha", "work", 3]},
        "b": {"command": "y", "groups": ["alpha"]},
        "n": 5,
        "c": {"command": "y", "groups": "work"},
    })  # fmt: skip
    with pytest.raises(GroupNotFoundError) as caught:
        store.remove_from_group("wrok")
    assert caught.value.message == "no group 'wrok'"
    assert caught.value.hint == "did you mean 'work'? the groups: alpha, work"
    with pytest.raises(GroupNotFoundError) as caught:
        store.remove_from_group("zeta")
    assert caught.value.hint == "the groups: alpha, work"
    (tmp_path / "other").mkdir()
    empty = _store(tmp_path / "other", {"a": {"command": "x"}})
    with pytest.raises(GroupNotFoundError) as caught:
        empty.remove_from_group("g")
    assert caught.value.hint == (
        "no server is in a group yet; add some with 'mcpctl group add GROUP NAME...'"
    )


def test_a_group_edit_naming_unknown_servers_changes_nothing(tmp_path: Path) -> None:
    store = _store(tmp_path, {"$s": {}, "a": {"command": "x", "groups": ["g"]}})
    with pytest.raises(ServerNotFoundError) as caught:
        store.add_to_group("g", ["a", "zz", "$s"])
    assert caught.value.message == f"no servers 'zz', '$s' in {store.path}"
    with pytest.raises(ServerNotFoundError) as caught:
        store.remove_from_group("g", ["a", "zz", "$s"])
    assert caught.value.message == f"no servers 'zz', '$s' in {store.path}"
    assert _doc(store)["a"] == {"command": "x", "groups": ["g"]} and _actions(store) == []


def test_a_group_edit_of_a_broken_entry_is_refused_not_hidden(tmp_path: Path) -> None:
    store = _store(tmp_path, {"a": {"command": "x", "groups": ["g", 1]}, "n": 5,
                              "s": {"command": "x", "groups": "g"}})  # fmt: skip
    for name in ("a", "s"):
        with pytest.raises(ConfigInvalidError) as caught:
            store.add_to_group("h", [name])
        assert caught.value.message == f"server {name!r} has a 'groups' that is not a list of names"
        assert caught.value.hint == "fix it by hand ('mcpctl validate' shows where)"
    with pytest.raises(ConfigInvalidError) as caught:
        store.add_to_group("h", ["n"])
    assert caught.value.message == "server 'n' is not a JSON object"
    assert _actions(store) == []


def test_taking_several_servers_out_of_a_group_names_each_in_the_history(tmp_path: Path) -> None:
    store = _store(tmp_path, {"a": {"command": "x", "groups": ["g"]},
                              "b": {"command": "y", "groups": ["g"]}})  # fmt: skip
    assert store.remove_from_group("g", ["b", "a"]) == ["b", "a"]
    assert _actions(store) == ["group remove g b a"]


def test_a_dollar_key_is_never_suggested_for_a_server_name(tmp_path: Path) -> None:
    store = _store(tmp_path, {"$schema": "s", "other": {"command": "x"}})
    with pytest.raises(ServerNotFoundError) as caught:
        store.remove(["schema"])
    assert caught.value.hint == "run 'mcpctl list' to see the servers"

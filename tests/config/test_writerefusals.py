"""What every write refuses: literals under env and header keys named like secrets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpctl import ConfigStore, ServerEntry
from mcpctl.config.jsontext import dump_config
from mcpctl.config.writerefusals import refuse_control_characters, refuse_literal_secrets
from mcpctl.errors import InvalidEntryError, PlaintextSecretError

VALUE = "mypassword123"  # no token shape: only the key's name says it is secret


def read(path: Path) -> dict:
    return json.loads(path.read_text())


@pytest.mark.parametrize(
    ("entry", "path"),
    [
        (ServerEntry(command="npx", env={"BRAVE_API_KEY": VALUE}), "brave.env.BRAVE_API_KEY"),
        (ServerEntry(command="npx", env={"DB_PASS": VALUE}), "brave.env.DB_PASS"),
        (ServerEntry(url="https://x.example/mcp", headers={"Authorization": "Basic abc"}),
         "brave.headers.Authorization"),
        (ServerEntry(url="https://x.example/mcp", headers={"X-Api-Key": VALUE}),
         "brave.headers.X-Api-Key"),
    ],
)  # fmt: skip
def test_library_writes_refuse_a_literal_under_a_secret_name(
    tmp_path: Path, entry: ServerEntry, path: str
) -> None:
    store = ConfigStore(tmp_path / "c.json")
    with pytest.raises(PlaintextSecretError) as info:
        store.add("brave", entry)
    err = info.value
    assert err.code == "plaintext_secret" and err.exit_code == 2
    assert err.message.startswith(f"{path} holds a literal value; a key named like a secret")
    assert "mcpctl secret set" in str(err.hint) and "--allow-literal" in str(err.hint)
    assert VALUE not in err.message + str(err.hint)
    assert path in err.subjects
    # Every write, not only add.
    with pytest.raises(PlaintextSecretError):
        store.update(lambda doc: doc.update({"brave": entry.to_data()}), action="t")
    assert not store.path.exists()


def test_the_hint_keeps_the_auth_scheme_and_never_the_value(tmp_path: Path) -> None:
    store = ConfigStore(tmp_path / "c.json")
    entry = ServerEntry(url="https://x.example/mcp", headers={"Authorization": "Bearer abc"})
    with pytest.raises(PlaintextSecretError) as info:
        store.add("linear", entry)
    assert "-H 'Authorization: Bearer ${LINEAR_TOKEN}'" in str(info.value.hint)
    assert "abc" not in info.value.message + str(info.value.hint)


@pytest.mark.parametrize(
    "value", ["${BRAVE_API_KEY}", "Bearer ${TOKEN}", "${BRAVE_API_KEY:-}", "${A:-x}", "", "false"]
)
def test_placeholders_and_non_secrets_are_written(tmp_path: Path, value: str) -> None:
    store = ConfigStore(tmp_path / "c.json")
    store.add("s", ServerEntry(command="npx", env={"BRAVE_API_KEY": value}))
    store.add(
        "r", ServerEntry(url="https://h.example", headers={"Authorization": value}), force=True
    )
    assert read(store.path)["s"]["env"]["BRAVE_API_KEY"] == value


def test_allow_literal_is_kept_in_the_entry_and_heeded_by_later_writes(tmp_path: Path) -> None:
    store = ConfigStore(tmp_path / "c.json")
    entry = ServerEntry(command="npx", env={"MY_PAT": "not-a-secret", "B_TOKEN": "${B}"})
    store.add("s", entry, allow_literal=["MY_PAT"])
    assert read(store.path)["s"]["allow_literal"] == ["MY_PAT"]
    # Later writes of the entry (disable, a replacement written from the file) pass.
    assert store.set_enabled("s", False)
    data = read(store.path)["s"]
    store.update(lambda doc: doc.update({"copy": data}), action="copy")
    # The entry's own field does the same for library callers that build it.
    store.add("t", ServerEntry(command="npx", env={"MY_PAT": "x1"}, allow_literal=("MY_PAT",)))
    with pytest.raises(InvalidEntryError, match="'OTHER'"):
        store.add("u", ServerEntry(command="npx", env={"MY_PAT": "x1"}), allow_literal=["OTHER"])
    # Header names in any case; an allowance is only for the name rule, never a token.
    store.add("h", ServerEntry(url="https://h.example", headers={"X-Api-Key": "demo"}),
              allow_literal=["x-api-key"])  # fmt: skip
    token = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
    with pytest.raises(PlaintextSecretError, match="looks like a literal secret"):
        store.add(
            "g", ServerEntry(command="npx", env={"GH_TOKEN": token}), allow_literal=["GH_TOKEN"]
        )


def test_a_literal_already_in_the_file_does_not_block_other_changes(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_bytes(dump_config({"s": {"command": "npx", "env": {"BRAVE_API_KEY": VALUE}}}))
    store = ConfigStore(path)
    assert store.set_enabled("s", False)  # the literal was there: the write does not add it
    assert read(path)["s"]["env"]["BRAVE_API_KEY"] == VALUE
    # Changing the value, or putting it under another name, is a write of a literal.
    with pytest.raises(PlaintextSecretError):
        store.update(lambda doc: doc["s"].update(env={"BRAVE_API_KEY": "other"}), action="t")
    with pytest.raises(PlaintextSecretError):
        store.update(lambda doc: doc.update({"t": doc["s"]}), action="t")


def test_allow_secrets_still_writes_anything(tmp_path: Path) -> None:
    store = ConfigStore(tmp_path / "c.json")
    store.add("s", ServerEntry(command="npx", env={"BRAVE_API_KEY": VALUE}), allow_secrets=True)
    assert read(store.path)["s"]["env"]["BRAVE_API_KEY"] == VALUE


# --- what mutation testing found unpinned ------------------------------------------------

TOKEN = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
TOKEN2 = "ghp_26C7e42F292c6912E7710c838347Ae178B4b"


def test_a_literal_secret_refusal_names_the_place_and_the_placeholder_to_write() -> None:
    with pytest.raises(PlaintextSecretError) as info:
        refuse_literal_secrets({}, {"gh": {"command": "npx", "env": {"API_TOKEN": TOKEN}}})
    err = info.value
    assert err.message == (
        "gh.env.API_TOKEN looks like a literal secret; mcpctl does not write secrets into the "
        "config file"
    )
    assert err.hint == (
        'write "${API_TOKEN}" in env.API_TOKEN instead and keep the value in the keyring: '
        "mcpctl secret set API_TOKEN (or export API_TOKEN=... where mcpctl and the host run)"
    )
    assert err.subjects == ("gh.env.API_TOKEN", "env.API_TOKEN")
    assert TOKEN not in err.message + str(err.hint)
    # An argument has no key: the variable is named after the server.
    with pytest.raises(PlaintextSecretError) as info:
        refuse_literal_secrets({}, {"gh": {"command": "npx", "args": ["-y", TOKEN]}})
    assert info.value.hint == (
        'write "${GH_TOKEN}" in args[1] instead and keep the value in the keyring: '
        "mcpctl secret set GH_TOKEN (or export GH_TOKEN=... where mcpctl and the host run)"
    )
    assert info.value.subjects == ("gh.args[1]", "args[1]")


def test_only_server_entries_are_looked_at_and_every_one_of_them() -> None:
    after = {
        "$comment": {"env": {"GH_TOKEN": TOKEN}},  # not a server
        "n": 5,  # not an object: validation's business
        "gh": {"command": "npx", "env": {"GH_TOKEN": TOKEN}},
    }
    with pytest.raises(PlaintextSecretError, match=r"^gh\.env\.GH_TOKEN "):
        refuse_literal_secrets({}, after)
    refuse_literal_secrets({}, {"$comment": {"env": {"GH_TOKEN": TOKEN}}, "n": "x"})


def test_a_secret_already_there_does_not_hide_a_new_one_beside_it() -> None:
    before = {"s": {"command": "npx", "env": {"A_TOKEN": TOKEN}}}
    after = {"s": {"command": "npx", "env": {"A_TOKEN": TOKEN, "B_TOKEN": TOKEN2}}}
    with pytest.raises(PlaintextSecretError, match=r"^s\.env\.B_TOKEN "):
        refuse_literal_secrets(before, after)
    refuse_literal_secrets(before, {"s": {"command": "uvx", "env": {"A_TOKEN": TOKEN}}})


@pytest.mark.parametrize(
    "old_args",
    [
        ["-y", "harmless"],  # the argument changed to a token
        ["-y"],  # the argument is new
        {"0": "-y", "1": TOKEN},  # args was not a list
        "-y " + TOKEN,
    ],
)  # fmt: skip
def test_a_token_written_into_an_argument_is_refused_whatever_was_there(old_args: object) -> None:
    before = {"s": {"command": "npx", "args": old_args}}
    with pytest.raises(PlaintextSecretError, match=r"^s\.args\[1\] looks like"):
        refuse_literal_secrets(before, {"s": {"command": "npx", "args": ["-y", TOKEN]}})


@pytest.mark.parametrize("old_env", [["GH_TOKEN"], "GH_TOKEN", None])
def test_a_token_written_over_an_env_that_was_not_an_object_is_refused(old_env: object) -> None:
    before = {"s": {"command": "npx", "env": old_env}}
    with pytest.raises(PlaintextSecretError, match=r"^s\.env\.GH_TOKEN looks like"):
        refuse_literal_secrets(before, {"s": {"command": "npx", "env": {"GH_TOKEN": TOKEN}}})


def test_a_control_character_refusal_names_the_place_and_what_to_do() -> None:
    with pytest.raises(InvalidEntryError) as info:
        refuse_control_characters({}, {"s": {"command": "npx", "env": {"K": "v\x1b[31m"}}})
    assert info.value.message == (
        "s.env.K contains the control character \\x1b; mcpctl does not write terminal "
        "controls into the config file"
    )
    assert info.value.hint == "remove it (a shell may have put it there: check the quoting)"
    with pytest.raises(InvalidEntryError, match=r"^\['s\\x07'\] contains .* \\x07;"):
        refuse_control_characters({}, {"s\x07": {"command": "npx"}})


def test_only_new_or_changed_entries_are_refused_for_a_control_character() -> None:
    hand_written = {"a": {"command": "npx", "args": ["\x1b[1mbold\x1b[0m"]}}
    refuse_control_characters(hand_written, dict(hand_written))  # there already: allowed
    refuse_control_characters({}, {"$comment": {"command": "\x1b[31m"}})  # not a server
    with pytest.raises(InvalidEntryError, match=r"^b\.args\[0\] contains"):
        refuse_control_characters(
            hand_written, {**hand_written, "b": {"command": "x", "args": ["\x07"]}}
        )

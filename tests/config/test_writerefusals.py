"""What every write refuses: literals under env and header keys named like secrets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpctl import ConfigStore, ServerEntry
from mcpctl.config.jsontext import dump_config
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

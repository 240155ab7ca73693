"""The keyring-backed secret store and the keyring source of placeholders."""

from __future__ import annotations

import pytest

from mcpctl.auth.secrets import SecretStore, keyring_source
from mcpctl.config.model import ServerEntry
from mcpctl.config.placeholders import resolve_entry, resolve_text
from mcpctl.errors import KeyringUnavailableError, SecretUnreachableError, UsageError
from tests.conftest import MemoryKeyring


def test_set_get_list_delete(memory_keyring: MemoryKeyring) -> None:
    store = SecretStore()
    store.set("GITHUB_TOKEN", "ghp-value-1")
    store.set("DB_PASSWORD", "hunter2")
    assert store.get("GITHUB_TOKEN") == "ghp-value-1"
    assert store.names() == ["DB_PASSWORD", "GITHUB_TOKEN"]
    assert store.delete("DB_PASSWORD") and not store.delete("DB_PASSWORD")
    assert store.names() == ["GITHUB_TOKEN"] and store.get("DB_PASSWORD") is None
    assert ("mcpctl", "secret:GITHUB_TOKEN") in memory_keyring.items  # one service, keyed
    assert store.backend_name() == "memory (tests)"


@pytest.mark.parametrize("name", ["lower", "1ABC", "A-B", ""])
def test_only_placeholder_names(memory_keyring: MemoryKeyring, name: str) -> None:
    with pytest.raises(UsageError):
        SecretStore().set(name, "v")


def test_resolution_order_env_then_keyring_then_default(memory_keyring: MemoryKeyring) -> None:
    SecretStore().set("TOKEN", "from-keyring")
    entry = ServerEntry(command="x", env={"A": "${TOKEN}", "B": "${OTHER:-dflt}"})
    resolved = resolve_entry("s", entry, environ={}, secrets=keyring_source())
    assert resolved is not None and dict(resolved.entry.env) == {"A": "from-keyring", "B": "dflt"}
    resolved = resolve_entry("s", entry, environ={"TOKEN": "from-env"}, secrets=keyring_source())
    assert resolved is not None and resolved.entry.env["A"] == "from-env"


def test_no_usable_keyring_is_said_plainly() -> None:
    import keyring
    from keyring.backends import fail

    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        with pytest.raises(KeyringUnavailableError) as info:
            SecretStore().set("X_TOKEN", "v")
        assert info.value.exit_code == 3 and "PYTHON_KEYRING_BACKEND" in str(info.value.hint)
        # The backend's own reason, not keyring's generic "no recommended backend".
        assert "recommended" not in info.value.message and info.value.reason
        # "Could not ask" is not "not stored": the source says so, and so does resolution.
        source = keyring_source()
        for _ in range(2):  # every lookup, without asking again
            with pytest.raises(KeyringUnavailableError):
                source("X_TOKEN")
        with pytest.raises(SecretUnreachableError) as unreachable:
            resolve_text("${X_TOKEN}", environ={}, secrets=source)
        assert unreachable.value.exit_code == 3 and unreachable.value.variable == "X_TOKEN"
        assert "is not set" not in unreachable.value.message
        assert "could not be asked" in unreachable.value.message
        assert resolve_text("${X_TOKEN:-d}", environ={}, secrets=source) == "d"
        assert resolve_text("${X_TOKEN}", environ={"X_TOKEN": "e"}, secrets=source) == "e"
    finally:
        keyring.set_keyring(previous)


class _BrokenBus(MemoryKeyring):
    """A backend failing its own way, as secretstorage does when D-Bus goes away."""

    def get_password(self, service: str, username: str) -> str | None:
        raise ConnectionError("the D-Bus connection was closed")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise OSError(13, "Permission denied")


@pytest.mark.parametrize("use", ["get", "set"])
def test_any_backend_failure_is_one_keyring_error(use: str) -> None:
    store = SecretStore(_BrokenBus())
    with pytest.raises(KeyringUnavailableError) as caught:
        store.get("TOKEN") if use == "get" else store.set("TOKEN", "x" * 12)
    assert "ConnectionError" in caught.value.message or "PermissionError" in caught.value.message
    assert caught.value.hint

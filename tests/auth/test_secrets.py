"""The keyring items of mcpctl in this process: a real Secret Service holding them, and
what is said when there is no usable keyring or it fails.

``test_secret_store.py`` covers the store over the in-memory test backend; mutation testing
found these unpinned.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import keyring
import pytest
from keyring.errors import PasswordDeleteError

from mcpctl.auth import secrets
from mcpctl.auth.secrets import SecretStore, check_secret_name, keyring_source, stored_names
from mcpctl.errors import KeyringUnavailableError, UsageError
from tests.conftest import MemoryKeyring

REMEDIES = (
    "run a Secret Service (gnome-keyring, KeePassXC) in this session, choose another backend "
    "with PYTHON_KEYRING_BACKEND, or give the value as an environment variable instead"
)
NO_BUS = (
    "Unable to initialize SecretService: Environment variable DBUS_SESSION_BUS_ADDRESS is unset"
)


@pytest.fixture
def real_keyring(secret_service: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """This process uses the test's real Secret Service (gnome-keyring on its own bus)."""
    from keyring.backends import SecretService

    for name in ("HOME", "XDG_RUNTIME_DIR", "XDG_DATA_HOME", "XDG_CACHE_HOME",
                 "XDG_CONFIG_HOME", "DBUS_SESSION_BUS_ADDRESS"):  # fmt: skip
        monkeypatch.setenv(name, secret_service[name])
    previous = keyring.get_keyring()
    backend = SecretService.Keyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        for key in ("secret:API_TOKEN", "secret:DB_PASSWORD", "index", "oauth:docs"):
            with contextlib.suppress(PasswordDeleteError):
                backend.delete_password("mcpctl", key)
        keyring.set_keyring(previous)


@pytest.fixture
def no_bus(no_keyring: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """No D-Bus session: the Secret Service cannot be reached, and ``keyring`` found nothing
    else (its fail backend)."""
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)


@pytest.mark.integration
def test_a_real_secret_service_holds_the_secrets(real_keyring: Any) -> None:
    store = SecretStore()
    assert store.backend_name() == "SecretService Keyring"
    assert store.get("API_TOKEN") is None and store.names() == []
    store.set("API_TOKEN", "value-of-the-token")
    store.set("DB_PASSWORD", "hunter2")
    assert real_keyring.get_password("mcpctl", "secret:API_TOKEN") == "value-of-the-token"
    # The index of names, compact JSON (the keyring cannot list its items).
    assert real_keyring.get_password("mcpctl", "index") == '{"secrets":["API_TOKEN","DB_PASSWORD"]}'
    assert store.names() == stored_names() == ["API_TOKEN", "DB_PASSWORD"]
    assert keyring_source()("API_TOKEN") == "value-of-the-token"
    assert keyring_source()("NOT_STORED") is None
    assert store.delete("API_TOKEN") is True and store.delete("API_TOKEN") is False
    assert store.get("API_TOKEN") is None and store.names() == ["DB_PASSWORD"]
    store.set_json("oauth:docs", {"token": "t", "expires": [2, 1], "a": None})
    assert real_keyring.get_password("mcpctl", "oauth:docs") == (
        '{"a":null,"expires":[2,1],"token":"t"}'
    )
    assert store.get_json("oauth:docs") == {"token": "t", "expires": [2, 1], "a": None}


def test_no_session_bus_is_said_with_the_secret_service_s_reason(no_bus: None) -> None:
    with pytest.raises(KeyringUnavailableError) as raised:
        SecretStore().get("API_TOKEN")
    error = raised.value
    assert error.reason == NO_BUS
    assert (
        error.message
        == f"no usable keyring: {NO_BUS} (mcpctl keeps secrets only in the OS keyring)"
    )
    assert error.hint == REMEDIES
    assert stored_names() == []  # a check that only warns: none


def test_a_named_backend_that_fails_as_it_is_made(monkeypatch: pytest.MonkeyPatch) -> None:
    import keyring.core

    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.SecretService.Keyring")
    monkeypatch.setattr(keyring.core, "_keyring_backend", None)  # chosen again, from the variable
    with pytest.raises(KeyringUnavailableError) as raised:
        SecretStore().set("API_TOKEN", "v")
    assert raised.value.reason == NO_BUS
    assert raised.value.message.startswith(f"no usable keyring: {NO_BUS} (")


def test_a_chain_of_no_backends_is_no_keyring(monkeypatch: pytest.MonkeyPatch) -> None:
    from keyring.backends.chainer import ChainerBackend

    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)

    class Empty(ChainerBackend):
        """keyring's chain when no backend it knows works here."""

        backends = []  # type: ignore[assignment]  # noqa: RUF012

    previous = keyring.get_keyring()
    keyring.set_keyring(Empty())
    try:
        with pytest.raises(KeyringUnavailableError) as raised:
            SecretStore().get("API_TOKEN")
    finally:
        keyring.set_keyring(previous)
    assert raised.value.reason == NO_BUS


def test_no_reason_from_any_backend(no_bus: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(secrets, "_WHY_BACKENDS", ())
    with pytest.raises(KeyringUnavailableError) as raised:
        SecretStore().get("API_TOKEN")
    assert raised.value.reason == "no keyring backend is installed for this system"


def test_a_store_given_its_backend_uses_it(no_bus: None) -> None:
    backend = MemoryKeyring()
    store = SecretStore(backend)
    store.set("API_TOKEN", "v")
    assert backend.items[("mcpctl", "secret:API_TOKEN")] == "v"
    assert keyring_source(store)("API_TOKEN") == "v"
    assert stored_names(store) == ["API_TOKEN"]
    assert store.backend_name() == "memory (tests)"


class Plain:
    """A backend object with no name, returning what it was given."""

    def __init__(self, value: object = None) -> None:
        self.value = value

    def get_password(self, service: str, username: str) -> object:
        return self.value


def test_a_backend_without_a_name_is_named_by_its_type() -> None:
    assert SecretStore(Plain()).backend_name() == "Plain"
    unnamed = MemoryKeyring()
    unnamed.name = ""  # type: ignore[misc]
    assert SecretStore(unnamed).backend_name() == "MemoryKeyring"


def test_what_is_not_text_is_not_a_value() -> None:
    assert SecretStore(Plain(b"bytes")).get("API_TOKEN") is None
    assert SecretStore(Plain(7)).get_item("index") is None
    assert SecretStore(Plain("[1, 2]")).get_json("index") is None
    assert SecretStore(Plain("not json")).get_json("index") is None
    assert SecretStore(Plain('{"a": 1}')).get_json("index") == {"a": 1}
    assert SecretStore(Plain('{"secrets": "A_TOKEN"}')).names() == []
    assert SecretStore(Plain('{"secrets": ["B_TOKEN", 3, "A_TOKEN"]}')).names() == [
        "A_TOKEN", "B_TOKEN"]  # fmt: skip


class Failing(MemoryKeyring):
    """A backend that fails its own way, with ``said`` as its exception's text."""

    def __init__(self, said: str, deleting: type[Exception] = OSError) -> None:
        super().__init__()
        self.said = said
        self.deleting = deleting

    def get_password(self, service: str, username: str) -> str | None:
        if username == "index":
            return None
        raise ConnectionError(self.said)

    def set_password(self, service: str, username: str, password: str) -> None:
        raise PermissionError(self.said)


@pytest.mark.parametrize(
    ("said", "reason"),
    [
        ("the D-Bus connection was closed", "ConnectionError: the D-Bus connection was closed"),
        ("", "ConnectionError"),
        ("closed by X", "ConnectionError: closed by X"),
    ],
)
def test_a_failing_backend_is_said_with_what_it_was_doing(said: str, reason: str) -> None:
    store = SecretStore(Failing(said))
    with pytest.raises(KeyringUnavailableError) as raised:
        store.get("API_TOKEN")
    assert raised.value.message == f"the keyring could not be read: {reason}"
    assert raised.value.reason == reason and raised.value.hint == REMEDIES
    with pytest.raises(KeyringUnavailableError) as raised:
        store.set_item("secret:API_TOKEN", "v")
    assert raised.value.message == f"the keyring could not store the value: Permission{reason[10:]}"


class DeleteFails(MemoryKeyring):
    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error
        self.items[("mcpctl", "secret:API_TOKEN")] = "v"

    def delete_password(self, service: str, username: str) -> None:
        raise self.error


def test_a_failed_delete() -> None:
    # Gone by the time it was deleted (another process): it was not there to delete.
    assert (
        SecretStore(DeleteFails(PasswordDeleteError("gone"))).delete_item("secret:API_TOKEN")
        is False
    )
    with pytest.raises(KeyringUnavailableError) as raised:
        SecretStore(DeleteFails(OSError("locked"))).delete_item("secret:API_TOKEN")
    assert raised.value.message == "the keyring could not delete the value: OSError: locked"
    assert raised.value.reason == "OSError: locked" and raised.value.hint == REMEDIES


def test_names_and_values_refused(memory_keyring: MemoryKeyring) -> None:
    with pytest.raises(UsageError) as raised:
        check_secret_name("api_token")
    assert raised.value.message == (
        "'api_token' is not a placeholder name: use UPPER_SNAKE_CASE, as in ${GITHUB_TOKEN}"
    )
    assert check_secret_name("_A1") == "_A1"
    with pytest.raises(UsageError) as raised:
        SecretStore().set("API_TOKEN", "")
    assert raised.value.message == "the value of API_TOKEN is empty; nothing was stored"
    assert memory_keyring.items == {}


class Silent:
    """A keyring backend whose refusal says nothing."""

    @property
    def priority(self) -> float:
        raise RuntimeError("   ")


def test_a_refusal_that_says_nothing_is_named_by_its_type(
    no_bus: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(secrets, "_WHY_BACKENDS", (("tests.auth.test_secrets", "SILENT"),))
    with pytest.raises(KeyringUnavailableError) as raised:
        SecretStore().get("API_TOKEN")
    assert raised.value.reason == "RuntimeError"


#: Looked up by name, as the real backends' classes are; asking its priority raises.
SILENT = Silent()

"""Secrets in the OS keyring: the only module of mcpctl that imports ``keyring``.

Everything lives under one service name, ``mcpctl``, as keyring items keyed by a kind and a
name:

* ``secret:NAME`` -- the value of a ``${NAME}`` placeholder (``mcpctl secret set NAME``);
* ``oauth:SERVER`` -- a server's OAuth tokens and client registration, as JSON
  (:mod:`mcpctl.auth.oauthtokens`);
* ``index`` -- the names of the secrets, since keyrings cannot list their items.

``keyring`` is imported on first use (choosing a backend costs a tenth of a second or more).
When no usable backend exists -- headless Linux without a Secret Service -- every operation
raises :class:`~mcpctl.errors.KeyringUnavailableError` naming the remedies; nothing ever
falls back to a plaintext file.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import threading
from collections.abc import Iterator
from typing import Any

from mcpctl.config.placeholders import SecretSource
from mcpctl.errors import KeyringUnavailableError, LockTimeoutError, UsageError

__all__ = [
    "SERVICE",
    "SecretStore",
    "check_secret_name",
    "keyring_source",
    "stored_names",
]

SERVICE = "mcpctl"
_NAME_RE = re.compile(r"[A-Z_][A-Z0-9_]*")
_INDEX = "index"
_log = logging.getLogger(__name__)
# How long a change to the index waits for another process's (each holds it for a few
# keyring calls).
INDEX_LOCK_TIMEOUT = 60.0
# One process's threads take turns before taking the file lock.
_index_thread_lock = threading.Lock()
# The backends whose refusal explains "no keyring" on a system without one (macOS and
# Windows always have theirs).
_WHY_BACKENDS = (
    ("keyring.backends.SecretService", "Keyring"),
    ("keyring.backends.libsecret", "Keyring"),
)
_REMEDIES = (
    "run a Secret Service (gnome-keyring, KeePassXC) in this session, choose another backend "
    "with PYTHON_KEYRING_BACKEND, or give the value as an environment variable instead"
)


def check_secret_name(name: str) -> str:
    """``name`` if it can be a placeholder's name (``UPPER_SNAKE_CASE``).

    Raises:
        UsageError: it cannot (``${lower}`` is never expanded, so it could never be used).
    """
    if not _NAME_RE.fullmatch(name):
        raise UsageError(
            f"{name!r} is not a placeholder name: use UPPER_SNAKE_CASE, as in ${{GITHUB_TOKEN}}"
        )
    return name


class SecretStore:
    """The keyring items of mcpctl.

    Args:
        backend: a ``keyring`` backend object (tests pass an in-memory one); default: the one
            ``keyring`` chooses (``PYTHON_KEYRING_BACKEND`` decides when set).
    """

    def __init__(self, backend: Any = None) -> None:
        self._backend = backend

    # --- the backend -----------------------------------------------------------------------

    def _keyring(self) -> Any:
        if self._backend is None:
            import keyring
            from keyring.backends import fail

            try:
                chosen = keyring.get_keyring()
            # A backend named by PYTHON_KEYRING_BACKEND fails as it is made (SecretService
            # raises RuntimeError without a session bus): that is "no usable keyring" too.
            except Exception as exc:
                raise _unusable(_said(exc)) from None
            if isinstance(chosen, fail.Keyring) or not getattr(chosen, "backends", [None]):
                raise _unusable(_why_none())
            self._backend = chosen
        return self._backend

    def backend_name(self) -> str:
        """The backend in use, e.g. ``SecretService Keyring``.

        Raises:
            KeyringUnavailableError: there is none.
        """
        backend = self._keyring()
        name = getattr(backend, "name", None)
        return str(name) if name else type(backend).__name__

    def _call(self, what: str, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        # Not only KeyringError: a backend fails its own way too (secretstorage's and
        # jeepney's D-Bus errors, OSError from a file backend). Every failure of the OS
        # keyring becomes one error here, so no caller needs a catch-all.
        except Exception as exc:
            raise _failed(what, exc) from None

    # --- raw items -------------------------------------------------------------------------

    def get_item(self, key: str) -> str | None:
        """The item ``key`` (``secret:NAME``, ``oauth:SERVER``), or ``None``.

        Raises:
            KeyringUnavailableError: no usable keyring, or it failed.
        """
        backend = self._keyring()
        value = self._call("be read", backend.get_password, SERVICE, key)
        return value if isinstance(value, str) else None

    def set_item(self, key: str, value: str) -> None:
        """Store ``value`` as item ``key``.

        Raises:
            KeyringUnavailableError: no usable keyring, or it failed.
        """
        backend = self._keyring()
        self._call("store the value", backend.set_password, SERVICE, key, value)

    def delete_item(self, key: str) -> bool:
        """Delete item ``key``; whether it was there.

        Raises:
            KeyringUnavailableError: no usable keyring, or it failed.
        """
        from keyring.errors import PasswordDeleteError

        backend = self._keyring()
        if self.get_item(key) is None:
            return False
        try:
            backend.delete_password(SERVICE, key)
        except PasswordDeleteError:
            return False
        except Exception as exc:  # a backend's own failure, as in _call
            raise _failed("delete the value", exc) from None
        return True

    def get_json(self, key: str) -> dict[str, Any] | None:
        """Item ``key`` as a JSON object (``None`` when missing or not an object)."""
        raw = self.get_item(key)
        if raw is None:
            return None
        try:
            data = json.loads(raw)
        except ValueError:
            return None
        return data if isinstance(data, dict) else None

    def set_json(self, key: str, data: dict[str, Any]) -> None:
        """Store ``data`` as item ``key``, as compact JSON."""
        self.set_item(key, json.dumps(data, separators=(",", ":"), sort_keys=True))

    # --- secrets by placeholder name -------------------------------------------------------

    def names(self) -> list[str]:
        """The names of the stored secrets, sorted."""
        index = self.get_json(_INDEX) or {}
        names = index.get("secrets")
        return sorted(n for n in names if isinstance(n, str)) if isinstance(names, list) else []

    def get(self, name: str) -> str | None:
        """The secret ``name``, or ``None``."""
        return self.get_item(f"secret:{name}")

    def set(self, name: str, value: str) -> None:
        """Store the secret ``name``.

        Raises:
            UsageError: not a placeholder name, or an empty value.
            KeyringUnavailableError: no usable keyring, or it failed.
        """
        check_secret_name(name)
        if not value:
            raise UsageError(f"the value of {name} is empty; nothing was stored")
        with _index_lock():
            self.set_item(f"secret:{name}", value)
            self._index(add=name)

    def delete(self, name: str) -> bool:
        """Delete the secret ``name``; whether it was there."""
        with _index_lock():
            found = self.delete_item(f"secret:{name}")
            self._index(remove=name)
        return found

    def _index(self, *, add: str | None = None, remove: str | None = None) -> None:
        names = set(self.names())
        if add is not None:
            names.add(add)
        if remove is not None:
            names.discard(remove)
        self.set_json(_INDEX, {"secrets": sorted(names)})


@contextlib.contextmanager
def _index_lock(timeout: float = INDEX_LOCK_TIMEOUT) -> Iterator[None]:
    """Hold the lock of the index of names, across threads and processes: the index is read,
    changed and written back, so two ``secret set`` at once would each drop the other's name.

    Raises:
        LockTimeoutError: another process held it for ``timeout`` seconds.
    """
    from filelock import FileLock, Timeout

    from mcpctl.paths import Paths

    path = Paths.from_env().secrets_index_lock
    with _index_thread_lock:
        lock: Any = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            lock = FileLock(str(path), timeout=timeout, mode=0o600, thread_local=False)
            lock.acquire()
        except Timeout:
            raise LockTimeoutError(
                f"another mcpctl process has been changing the keyring's secrets for {timeout:g} s",
                hint=f"retry; if no mcpctl is running, delete {path}",
            ) from None
        except OSError as exc:
            # No state dir to lock in (read-only home): this process's threads still take
            # turns, and the secret itself is stored all the same.
            _log.debug("cannot lock %s (%s): the index is changed unlocked", path, exc)
            lock = None
        try:
            yield
        finally:
            if lock is not None:
                lock.release()


def _said(exc: BaseException) -> str:
    """What a backend's exception says, on one line, with its type when it says nothing."""
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def _why_none() -> str:
    """Why ``keyring`` found no usable backend: what the Secret Service backends (the OS
    keyring of Linux and the BSDs) say when asked whether they can work here."""
    import importlib

    for module, cls in _WHY_BACKENDS:
        try:
            backend = getattr(importlib.import_module(module), cls)
            backend.priority  # noqa: B018 -- asking is the point: it raises the reason
        except Exception as exc:
            return _said(exc)
    return "no keyring backend is installed for this system"


def _unusable(reason: str) -> KeyringUnavailableError:
    return KeyringUnavailableError(
        f"no usable keyring: {reason} (mcpctl keeps secrets only in the OS keyring)",
        hint=_REMEDIES,
        reason=reason,
    )


def _failed(what: str, exc: Exception) -> KeyringUnavailableError:
    """The error for any failure of the keyring's backend while it was to do ``what``."""
    reason = f"{type(exc).__name__}: {exc}".rstrip(": ")
    return KeyringUnavailableError(
        f"the keyring could not {what}: {reason}", hint=_REMEDIES, reason=reason
    )


def keyring_source(store: SecretStore | None = None) -> SecretSource:
    """A :data:`~mcpctl.config.placeholders.SecretSource` backed by the keyring.

    The keyring is opened on the first lookup only (placeholders resolve from the environment
    first, so a run whose variables are all exported never touches it). A name the keyring
    does not hold is ``None``; a keyring that cannot be asked (no usable backend, no D-Bus
    session, a failing Secret Service) raises, on that lookup and every later one, without
    asking again: "could not ask" is not "not stored" (see
    :class:`~mcpctl.errors.SecretUnreachableError`).

    Raises:
        KeyringUnavailableError: (from a lookup) the keyring could not be asked.
    """
    chosen = store
    broken: list[KeyringUnavailableError] = []

    def lookup(name: str) -> str | None:
        nonlocal chosen
        if broken:
            raise broken[0]
        if chosen is None:
            chosen = SecretStore()
        try:
            return chosen.get(name)
        except KeyringUnavailableError as exc:
            broken.append(exc)
            raise

    return lookup


def stored_names(store: SecretStore | None = None) -> list[str]:
    """The names of the secrets the keyring holds (never a value), or none when there is no
    usable keyring: for checks that only warn, such as ``validate``'s."""
    try:
        return (store or SecretStore()).names()
    except KeyringUnavailableError:
        return []

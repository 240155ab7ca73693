"""A ``keyring`` backend over a JSON file, for tests that run mcpctl in several processes.

TEST ONLY: it keeps secrets in plaintext. Select it in a subprocess with
``PYTHON_KEYRING_BACKEND=tests.auth.filekeyring.FileKeyring`` and name its file with
``MCPCTL_TEST_KEYRING_FILE`` (``PYTHONPATH`` must reach the repository). Every operation
holds an exclusive ``flock`` on the file, so concurrent processes see each other's writes
whole. ``MCPCTL_TEST_KEYRING_DELAY`` (seconds) makes each read answer that much later, after
the lock is released, as a Secret Service's round trip over D-Bus does. The product never
selects it and never writes secrets to a file.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError

FILE_VAR = "MCPCTL_TEST_KEYRING_FILE"
BACKEND = "tests.auth.filekeyring.FileKeyring"
DELAY_VAR = "MCPCTL_TEST_KEYRING_DELAY"


class FileKeyring(KeyringBackend):
    """Items in the JSON file named by ``MCPCTL_TEST_KEYRING_FILE`` (tests only)."""

    priority = 0.1  # type: ignore[assignment]
    name = "file (tests)"  # type: ignore[assignment]

    def _path(self) -> Path:
        path = os.environ.get(FILE_VAR)
        if not path:
            raise RuntimeError(f"{FILE_VAR} is not set")
        return Path(path)

    @contextmanager
    def _items(self, write: bool) -> Iterator[dict[str, Any]]:
        path = self._path()
        path.touch(exist_ok=True)
        with path.open("r+", encoding="utf-8") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            text = f.read()
            items: dict[str, Any] = json.loads(text) if text.strip() else {}
            yield items
            if write:
                f.seek(0)
                f.truncate()
                f.write(json.dumps(items, indent=1, sort_keys=True))
                f.flush()

    def get_password(self, service: str, username: str) -> str | None:
        with self._items(write=False) as items:
            value = items.get(f"{service}\x00{username}")
        delay = float(os.environ.get(DELAY_VAR) or 0)
        if delay > 0:
            time.sleep(delay)
        return value if isinstance(value, str) else None

    def set_password(self, service: str, username: str, password: str) -> None:
        with self._items(write=True) as items:
            items[f"{service}\x00{username}"] = password

    def delete_password(self, service: str, username: str) -> None:
        with self._items(write=True) as items:
            if items.pop(f"{service}\x00{username}", None) is None:
                raise PasswordDeleteError(username)


def read_items(path: Path) -> dict[str, str]:
    """The items of a keyring file, ``"service\\0name"`` -> value (for assertions)."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    data: dict[str, str] = json.loads(text) if text.strip() else {}
    return data


def oauth_record(path: Path, server: str) -> dict[str, Any] | None:
    """The stored ``oauth:SERVER`` record of a keyring file, parsed."""
    raw = read_items(path).get(f"mcpctl\x00oauth:{server}")
    return json.loads(raw) if raw else None


def edit_record(path: Path, server: str, change: Callable[[dict[str, Any]], None]) -> None:
    """Change a stored ``oauth:SERVER`` record in place (for tests)."""
    key = f"mcpctl\x00oauth:{server}"
    items = read_items(path)
    record = json.loads(items[key])
    change(record)
    items[key] = json.dumps(record)
    path.write_text(json.dumps(items), encoding="utf-8")

"""Fixtures of the prefetch tests: a local npm registry, and a private npm cache per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import need_program
from tests.prefetch.npmregistry import Registry, serving


@pytest.fixture
def npm() -> str:
    """npm's path (its npx runs the packages)."""
    need_program("npx", "npx runs the packages prefetch fills its cache for")
    return need_program("npm", "prefetch runs npm as npx does")


@pytest.fixture
def registry(npm: str) -> Iterator[Registry]:
    """A local npm registry (real npm installs from it)."""
    with serving() as served:
        yield served


@pytest.fixture
def npm_cache(tmp_path: Path) -> Path:
    """An npm cache of the test's own (npx's _npx folders go under it)."""
    return tmp_path / "npm-cache"


def npx_entry(
    spec: str, registry: Registry, cache: Path, *, timeout_ms: int | None = None, **env: str
) -> dict[str, object]:
    """An entry that runs ``npx -y SPEC`` from the local registry into ``cache``."""
    entry: dict[str, object] = {
        "command": "npx",
        "args": ["-y", spec],
        "env": {"npm_config_registry": registry.base + "/", "npm_config_cache": str(cache),
                "npm_config_update_notifier": "false", **env},
    }  # fmt: skip
    if timeout_ms is not None:
        entry["timeout"] = timeout_ms
    return entry

"""Fixtures of the registry tests: a fake HTTP registry, file catalogs, reference data."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.registry.server import Registry, make_record, running

DATA = Path(__file__).resolve().parent.parent / "data" / "registry"


@pytest.fixture
def registry() -> Iterator[tuple[Registry, str]]:
    """A registry on 127.0.0.1 with 255 records in 3 pages; yields it and its base URL."""
    records = [make_record(f"io.example/server-{i:03d}", updated=f"2025-11-01T00:00:{i % 60:02d}Z")
               for i in range(250)]  # fmt: skip
    records += [
        make_record("io.example/weather", "1.0.0", latest=False, title="Weather"),
        make_record("io.example/weather", "1.2.0", title="Weather", description="Forecasts"),
        make_record("com.acme/filesystem", title="Files", description="Read and write files"),
        make_record("org.other/notes", title="Notes", description="Keeps filesystem notes"),
        make_record("io.example/old", status="deprecated"),
    ]
    reg = Registry(records)
    with running(reg) as url:
        yield reg, url


Publish = Callable[..., Path]


@pytest.fixture
def catalog(tmp_path: Path) -> Publish:
    """Writes ``server.json`` documents (of :func:`make_record` records) as a file registry.

    ``catalog(record, ...)`` replaces the file's content and returns its path.
    """
    path = tmp_path / "catalog.json"

    def publish(*records: dict[str, Any]) -> Path:
        path.write_text(json.dumps([r["server"] for r in records]), encoding="utf-8")
        return path

    return publish

"""File registries: a local JSON list of ``server.json`` documents (or records) read as a
registry: a registry source that is a file, such as a ``discover --export`` file."""

from __future__ import annotations

from pathlib import Path

from mcpctl.errors import UsageError
from mcpctl.registry.records import Record, record_from_json

__all__ = ["load_file_registry"]


def load_file_registry(path: Path) -> list[Record]:
    """The records of a file registry: a JSON list of server.json documents or records
    (or ``{"servers": [...]}``, as the API returns, or a ``discover --export`` file).

    Raises:
        UsageError: the file cannot be read or is not such a list.
    """
    from mcpctl.config.safefile import decode_text, loads_json, read_file
    from mcpctl.errors import StorageError

    try:
        raw = read_file(path)
    except StorageError as exc:
        raise UsageError(exc.message) from None
    if raw is None:
        raise UsageError(f"cannot read registry file {path}: No such file or directory")
    # Lone surrogates are the registry code's to handle (it shows them escaped).
    data = loads_json(decode_text(raw, path), path, surrogates=True)
    if isinstance(data, dict) and isinstance(data.get("servers"), list):
        data = data["servers"]
    if not isinstance(data, list):
        raise UsageError(f"registry file {path} must be a JSON list of server.json documents")
    return [r for r in (record_from_json(x) for x in data) if r is not None]

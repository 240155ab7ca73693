"""An entry as mcpctl shows it: what ``list``, ``get`` and ``add`` print, and what
``mcpctl serve`` gives an agent.

Literal secrets are redacted (:func:`mcpctl.config.redaction.redact_entry_data`);
``${VAR}`` placeholders stay as written: they name a variable, not its value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpctl.config.model import ServerEntry

__all__ = ["entry_summary", "entry_target"]


def entry_summary(name: str, entry: ServerEntry) -> dict[str, Any]:
    """``{"name", "transport", "enabled", ...the entry's fields}``, literal secrets redacted."""
    from mcpctl.config.redaction import redact_entry_data

    data = redact_entry_data(entry.to_data())
    return {
        "name": name,
        "transport": entry.effective_transport,
        "enabled": entry.enabled,
        **{k: v for k, v in data.items() if k != "enabled"},
    }


def entry_target(summary: Mapping[str, Any]) -> str:
    """The URL of a remote entry, or the command line of a stdio one (of a summary)."""
    import shlex

    if "url" in summary:
        return str(summary["url"])
    parts = [str(summary.get("command", "")), *(str(a) for a in summary.get("args", []))]
    return shlex.join(parts)

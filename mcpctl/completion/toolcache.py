"""The tool names servers listed when last probed, kept for ``mcpctl call NAME <TAB>``.

Completion never starts a server: ``mcpctl tools`` and ``mcpctl health`` leave what they saw
in ``<cache dir>/completion-tools.json`` -- per config file, server name -> its tool names,
when they were listed and how long the server said the listing stays fresh (``ttlMs``) --
and :func:`mcpctl.completion.sources.tool_names` reads it back, saying how old a stale
listing is. It is a cache: a file that cannot be read is started over, and one that cannot
be written is left alone.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from mcpctl.completion.sources import TOOLS_CACHE, read_json
from mcpctl.errors import McpctlError

__all__ = ["MAX_CONFIGS", "MAX_TOOLS", "remember_tools"]

MAX_CONFIGS = 20  # config files remembered, the most recently probed kept
MAX_TOOLS = 1000  # per server


def remember_tools(
    cache_dir: Path,
    config: Path,
    tools: Mapping[str, Iterable[str]],
    ttl_ms: Mapping[str, int | None] | None = None,
) -> None:
    """Record the tool names each server of ``tools`` listed now, for the config file
    ``config``, with how long each server said the listing stays fresh (``ttl_ms``; none said:
    stale at once).

    Never raises: the command that probed has its own result to report, and a cache that
    cannot be written only means ``call NAME <TAB>`` offers nothing.
    """
    from mcpctl.config.store import atomic_write

    path = cache_dir / TOOLS_CACHE
    data = read_json(str(path))
    configs = data.get("configs") if isinstance(data, dict) else None
    if not isinstance(configs, dict):
        configs = {}
    key = os.path.realpath(config)
    known = configs.pop(key, None)
    servers = dict(known) if isinstance(known, dict) else {}
    now = round(time.time(), 1)
    for server, names in tools.items():
        servers[server] = {
            "tools": list(dict.fromkeys(names))[:MAX_TOOLS],
            "listed_at": now,
            "ttl_ms": (ttl_ms or {}).get(server),
        }
    configs[key] = servers  # last: the most recent
    while len(configs) > MAX_CONFIGS:
        del configs[next(iter(configs))]
    text = json.dumps({"format": 1, "configs": configs}, indent=1)  # ASCII: \u escapes
    with contextlib.suppress(OSError, McpctlError):
        cache_dir.mkdir(parents=True, exist_ok=True)
        atomic_write(path, (text + "\n").encode("ascii"), durable=False)

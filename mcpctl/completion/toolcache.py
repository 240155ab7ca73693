"""The tool names servers listed when last probed, kept for ``mcpctl call NAME <TAB>``.

Completion never starts a server: ``mcpctl tools`` and ``mcpctl health`` leave what they saw
in ``<cache dir>/completion-tools.json`` -- per config file, server name -> its tool names,
when they were listed and how long the server said the listing stays fresh (``ttlMs``) --
and :func:`mcpctl.completion.sources.tool_names` reads it back, saying how old a stale
listing is. It is a cache: a file that cannot be read is started over, and one that cannot
be written is left alone.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from mcpctl.completion.sources import TOOLS_CACHE

__all__ = ["MAX_BYTES", "MAX_CONFIGS", "MAX_TOOLS", "remember_tools"]

MAX_CONFIGS = 20  # config files remembered, the most recently probed kept
MAX_TOOLS = 1000  # per server
MAX_BYTES = 4 * 1024 * 1024  # the file, the oldest configs left out to fit


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
    from mcpctl.config.cachefiles import update_records

    key = os.path.realpath(config)
    now = round(time.time(), 1)
    listed = {
        server: {
            "tools": list(dict.fromkeys(names))[:MAX_TOOLS],
            "listed_at": now,
            "ttl_ms": (ttl_ms or {}).get(server),
        }
        for server, names in tools.items()
    }

    # Merged under the file's lock: concurrent runs (of other configs, or of other servers
    # of this one) keep what each listed.
    def merge(configs: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        servers = dict(configs.pop(key, {}))
        servers.update(listed)
        configs[key] = servers  # last: the most recent
        while len(configs) > MAX_CONFIGS:
            del configs[next(iter(configs))]
        return configs

    update_records(cache_dir / TOOLS_CACHE, "configs", MAX_BYTES, merge)

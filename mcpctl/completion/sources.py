"""The values a completion offers that are not in the command table, read from files cheaply.

Servers and placeholders come from the config, tool names from the cache that ``mcpctl
tools`` and ``health`` leave (:mod:`~mcpctl.completion.toolcache`, else the last snapshot),
registry ids from ``registries.json``, registry server names from the discovery cache
(SQLite, opened read-only), render targets from :mod:`mcpctl.render.targets`. Nothing is
started and nothing is fetched. Every reader returns what it can and never raises: a file
that is missing, unreadable or malformed offers nothing.

Locations follow :mod:`mcpctl.paths` with ``os.path`` alone (pathlib, dataclasses and
platformdirs cost more than a whole answer); tests hold the two together.
"""

from __future__ import annotations

import os
from typing import Any

from mcpctl.config.fieldsyntax import NAME_RE, PLACEHOLDER_RE
from mcpctl.quickpaths import config_path, user_dir

__all__ = [
    "config_path",
    "groups",
    "members",
    "packages",
    "placeholders",
    "registries",
    "servers",
    "targets",
    "tool_names",
    "user_dir",
]

TOOLS_CACHE = "completion-tools.json"
DEFAULT_REGISTRIES = ("official", "builtin")
MAX_PACKAGES = 200
#: The largest file a tab press reads (the config reader's default cap).
MAX_FILE_BYTES = 16 * 1024 * 1024

Pairs = list[tuple[str, str]]


def read_json(path: str) -> Any:
    """The JSON document at ``path``, or ``None``: also for anything but a regular file of at
    most :data:`MAX_FILE_BYTES` (a FIFO in a cloned repository must not hang a tab press).

    The config package's reader does the same with errors to show; a tab press shows none,
    and loads only the standard library.
    """
    import json
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            return None
        raw = os.read(fd, MAX_FILE_BYTES + 1)
        return json.loads(raw) if len(raw) <= MAX_FILE_BYTES else None
    except (OSError, ValueError, RecursionError):
        return None
    finally:
        os.close(fd)


def _entries(config: str) -> dict[str, dict[str, Any]]:
    data = read_json(config)
    if not isinstance(data, dict):
        return {}
    return {
        name: entry
        for name, entry in data.items()
        if isinstance(entry, dict) and NAME_RE.fullmatch(name)
    }


def servers(config: str, which: str = "server") -> Pairs:
    """(name, description) of the configured servers; ``which`` narrows them:
    ``server-enabled``, ``server-disabled`` or ``server-remote``."""
    found: Pairs = []
    for name, entry in _entries(config).items():
        enabled = entry.get("enabled") is not False
        if which == "server-enabled" and not enabled:
            continue
        if which == "server-disabled" and enabled:
            continue
        if which == "server-remote" and "url" not in entry:
            continue
        description = entry.get("description")
        found.append((name, description if isinstance(description, str) else ""))
    return found


def _groups_of(entry: dict[str, Any]) -> list[str]:
    found = entry.get("groups")
    if not isinstance(found, list):
        return []
    return [g for g in dict.fromkeys(found) if isinstance(g, str) and NAME_RE.fullmatch(g)]


def groups(config: str) -> Pairs:
    """(group, its members) of every group the config's entries name, sorted by group."""
    found: dict[str, list[str]] = {}
    for name, entry in _entries(config).items():
        for group in _groups_of(entry):
            found.setdefault(group, []).append(name)
    return [(group, ", ".join(names)) for group, names in sorted(found.items())]


def members(config: str, group: str) -> Pairs:
    """(name, description) of the servers in ``group``."""
    entries = _entries(config)
    return [pair for pair in servers(config) if group in _groups_of(entries[pair[0]])]


def _texts(entry: dict[str, Any]) -> list[Any]:
    """The values of an entry that may hold placeholders (as ``mcpctl secret list`` reads)."""
    texts = [entry.get("command"), entry.get("cwd"), entry.get("url")]
    args = entry.get("args")
    texts += args if isinstance(args, list) else []
    for key in ("env", "headers", "auth"):
        value = entry.get(key)
        texts += list(value.values()) if isinstance(value, dict) else []
    return texts


def placeholders(config: str) -> Pairs:
    """(name, the servers that use it) of every ``${NAME}`` in the config's entries."""
    used: dict[str, list[str]] = {}
    for server, entry in _entries(config).items():
        for text in _texts(entry):
            for match in PLACEHOLDER_RE.finditer(text) if isinstance(text, str) else ():
                names = used.setdefault(match["name"], [])
                if server not in names:
                    names.append(server)
    return [(name, "used by " + ", ".join(names)) for name, names in sorted(used.items())]


def _strings(items: Any) -> list[str]:
    return [i for i in items if isinstance(i, str)] if isinstance(items, list) else []


def tool_names(config: str, server: str) -> Pairs:
    """The tools ``server`` listed when last probed: from the completion cache (described
    with the listing's age once it is stale: older than the server said it stays fresh), else
    from the last snapshot saved with ``--probe``."""
    cache = read_json(os.path.join(user_dir("cache"), TOOLS_CACHE))
    configs = cache.get("configs") if isinstance(cache, dict) else None
    known = configs.get(os.path.realpath(config)) if isinstance(configs, dict) else None
    if isinstance(known, dict) and server in known:
        found = known[server]
        if not isinstance(found, dict):  # the first format: names alone
            return [(name, "") for name in _strings(found)]
        note = _staleness(found.get("listed_at"), found.get("ttl_ms"))
        return [(name, note) for name in _strings(found.get("tools"))]
    snapshot = os.environ.get("MCPCTL_SNAPSHOT") or os.path.join(
        user_dir("state"), "last-known-mcps.json"
    )
    data = read_json(os.path.expanduser(snapshot))
    mcps = data.get("mcps") if isinstance(data, dict) else None
    for item in mcps if isinstance(mcps, list) else ():
        if isinstance(item, dict) and item.get("name") == server:
            probe = item.get("probe")
            tools = probe.get("tools") if isinstance(probe, dict) else None
            names = [t.get("name") for t in tools if isinstance(t, dict)] if tools else []
            return [(name, "") for name in _strings(names)]
    return []


def _staleness(listed_at: Any, ttl_ms: Any) -> str:
    """``listed 3 h ago`` for a listing past its freshness; empty while it is fresh, and for
    the first minute (a listing without a lifetime is stale at once, but not yet old news)."""
    import time

    if not isinstance(listed_at, int | float) or isinstance(listed_at, bool):
        return ""
    age = max(0.0, time.time() - listed_at)
    if age < 60 or (isinstance(ttl_ms, int) and not isinstance(ttl_ms, bool)
                    and age * 1000 < ttl_ms):  # fmt: skip
        return ""
    for limit, unit, size in ((5400, "min", 60), (129600, "h", 3600)):
        if age < limit:
            return f"listed {age / size:.0f} {unit} ago"
    return f"listed {age / 86400:.0f} days ago"


def registries() -> list[str]:
    """The ids of the configured registries (as :func:`mcpctl.registry.sources.load_sources`
    lists them)."""
    ids = dict.fromkeys(DEFAULT_REGISTRIES)
    data = read_json(os.path.join(user_dir("config"), "registries.json"))
    items = data.get("registries") if isinstance(data, dict) else None
    for item in items if isinstance(items, list) else ():
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            continue
        if item.get("removed") is True:
            ids.pop(item["id"], None)
        elif isinstance(item.get("url"), str) or isinstance(item.get("file"), str):
            ids[item["id"]] = None
    return list(ids)


def packages(prefix: str) -> list[str]:
    """Registry server names starting with ``prefix`` from the discovery cache; after an
    ``@``, that server's cached ``NAME@VERSION`` forms."""
    path = os.path.join(user_dir("cache"), "discovery.sqlite3")
    if not os.path.isfile(path):
        return []
    import sqlite3

    uri = "file:" + path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    try:
        conn = sqlite3.connect(uri + "?mode=ro", uri=True, timeout=0.5)
        try:
            if "@" in prefix:
                name = prefix.partition("@")[0]
                rows = conn.execute(
                    "SELECT DISTINCT version FROM servers WHERE name = ? LIMIT ?",
                    (name, MAX_PACKAGES),
                ).fetchall()
                return [f"{name}@{v}" for (v,) in rows if f"{name}@{v}".startswith(prefix)]
            rows = conn.execute(
                "SELECT DISTINCT name FROM servers WHERE is_latest = 1 AND name >= ? AND name < ?"
                " ORDER BY name LIMIT ?",
                (prefix, prefix + "\U0010ffff", MAX_PACKAGES),
            ).fetchall()
            return [str(n) for (n,) in rows]
        finally:
            conn.close()
    except (sqlite3.Error, UnicodeError):
        return []


def targets() -> list[str]:
    """The render targets."""
    from mcpctl.render.targets import TARGET_MODULES

    return list(TARGET_MODULES)

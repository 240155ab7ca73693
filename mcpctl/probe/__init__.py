"""Talking to servers: spawn or connect, probe their health, list and call their tools.

    from mcpctl.probe import probe, probe_all, list_tools, call_tool, open_session  # async

* the one table of transports is :mod:`mcpctl.config.transports` (the config model is built
  on it);
* :mod:`~mcpctl.probe.spawn` -- stdio processes: a minimal environment, own process group,
  stderr tail, fast stop; every descendant is found and stopped, and start-up slots are
  freed once a server only waits, by :mod:`mcpctl.procs` and :mod:`mcpctl.reaper` (below
  this package: ``watch --exec`` and ``prefetch`` stop their commands' families with them);
* :mod:`~mcpctl.probe.connect` -- sessions over every transport;
* the MCP SDK's names come from :mod:`mcpctl.sdk`, below this package and :mod:`mcpctl.auth`
  which both use it (loaded without the SDK's server half in the ``mcpctl`` program): the
  only module of mcpctl that imports the SDK's ``mcp`` package; the SDK's message types, the
  ``mcp_types`` package, are imported directly where they are used;
* :mod:`~mcpctl.probe.listingrepair` -- repairs what real servers get slightly wrong;
* :mod:`~mcpctl.probe.failures` -- failures as stable codes with hints;
* :mod:`~mcpctl.probe.health` (each result and its :class:`HealthStatus`:
  :mod:`~mcpctl.probe.healthstatus`; many servers at once: :mod:`~mcpctl.probe.fanout`),
  :mod:`~mcpctl.probe.tools` (with :mod:`~mcpctl.probe.toolinfo`: a tool as listed),
  :mod:`~mcpctl.probe.naming`;
* :mod:`~mcpctl.probe.catalog` -- everything a server offers, as it sent it (for snapshots);
* :mod:`~mcpctl.probe.eras` and :mod:`~mcpctl.probe.negotiate` -- the two protocol eras
  (the ``initialize`` handshake, the stateless 2026-07-28 revision): which one a connection
  speaks, and the memory of which one each server spoke;
* :mod:`~mcpctl.probe.inputrequests` -- servers that ask for input mid-call, in either era;
* :mod:`~mcpctl.probe.pages` -- every page of a paged list, whatever the server does with
  its cursors;
* :mod:`~mcpctl.probe.listcache` -- tool listings kept while their ``ttlMs`` says they may be
  (in a cache file of :mod:`mcpctl.config.cachefiles`, merged under a bounded lock);
  :mod:`~mcpctl.probe.costs` -- what a catalog costs the model, counted within a deadline by
  :mod:`mcpctl.tokencount` (below this package: snapshots count with it too);
* :mod:`~mcpctl.probe.catalogfollow` -- one server followed over an open connection.

Elsewhere, because they use this package and another: ``mcpctl run NAME`` (exec a server with
its secrets) is :mod:`mcpctl.launch`, ``health --as CLIENT`` is
:mod:`mcpctl.render.clienthealth`.

Names are loaded on first use: importing this package does not import the MCP SDK.
"""

from __future__ import annotations

from mcpctl._lazy import lazy_exports

TYPE_CHECKING = False  # importing typing would cost the quick paths (launcher, completion)

if TYPE_CHECKING:
    from mcpctl.probe.catalog import Catalog, catalog, catalog_all
    from mcpctl.probe.connect import Connection, connect, open_session
    from mcpctl.probe.eras import Era, EraMemory
    from mcpctl.probe.health import (
        HealthStatus,
        ProbeError,
        ProbeResult,
        default_concurrency,
        probe,
        probe_all,
    )
    from mcpctl.probe.inputrequests import InputAnswer, InputRequest, answers_from
    from mcpctl.probe.listcache import ListingCache
    from mcpctl.probe.tools import ToolCallResult, ToolInfo, call_tool, check_arguments, list_tools

__all__ = [
    "Catalog",
    "Connection",
    "Era",
    "EraMemory",
    "HealthStatus",
    "InputAnswer",
    "InputRequest",
    "ListingCache",
    "ProbeError",
    "ProbeResult",
    "ToolCallResult",
    "ToolInfo",
    "answers_from",
    "call_tool",
    "catalog",
    "catalog_all",
    "check_arguments",
    "connect",
    "default_concurrency",
    "list_tools",
    "open_session",
    "probe",
    "probe_all",
]

_LAZY = {
    "Catalog": "mcpctl.probe.catalog",
    "catalog": "mcpctl.probe.catalog",
    "catalog_all": "mcpctl.probe.catalog",
    "Connection": "mcpctl.probe.connect",
    "Era": "mcpctl.probe.eras",
    "EraMemory": "mcpctl.probe.eras",
    "HealthStatus": "mcpctl.probe.health",
    "InputAnswer": "mcpctl.probe.inputrequests",
    "InputRequest": "mcpctl.probe.inputrequests",
    "answers_from": "mcpctl.probe.inputrequests",
    "ListingCache": "mcpctl.probe.listcache",
    "ProbeError": "mcpctl.probe.health",
    "ProbeResult": "mcpctl.probe.health",
    "ToolCallResult": "mcpctl.probe.tools",
    "ToolInfo": "mcpctl.probe.tools",
    "call_tool": "mcpctl.probe.tools",
    "check_arguments": "mcpctl.probe.tools",
    "connect": "mcpctl.probe.connect",
    "default_concurrency": "mcpctl.probe.health",
    "list_tools": "mcpctl.probe.tools",
    "open_session": "mcpctl.probe.connect",
    "probe": "mcpctl.probe.health",
    "probe_all": "mcpctl.probe.health",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

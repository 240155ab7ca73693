"""Prefetch: the packages of the stdio servers, fetched where their runners look, so that a
client's first start does not download them while it waits.

    from mcpctl.prefetch import prefetch

    report = prefetch()              # every stdio server of the config mcpctl would use here
    report.exit_code                 # 0; 1 a package failed; 3 a registry cannot be reached

* :mod:`~mcpctl.prefetch.fetch` -- the run: :func:`prefetch`, :func:`prefetch_async`;
* :mod:`~mcpctl.prefetch.plan` -- what each server's runner fetches, and where;
* :mod:`~mcpctl.prefetch.npm`, :mod:`~mcpctl.prefetch.uv` -- npx's and uvx's caches;
* :mod:`~mcpctl.prefetch.runners` -- one package per runner (npx, uvx, docker);
* :mod:`~mcpctl.prefetch.commands` -- the package managers run side by side, stopped whole;
* :mod:`~mcpctl.prefetch.results` -- :class:`PrefetchReport`, :class:`PackageFetch`.

Names are loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpctl._lazy import lazy_exports

if TYPE_CHECKING:
    from mcpctl.prefetch.fetch import FetchProgress, prefetch, prefetch_async
    from mcpctl.prefetch.results import FetchStatus, PackageFetch, PrefetchReport

__all__ = [
    "FetchProgress",
    "FetchStatus",
    "PackageFetch",
    "PrefetchReport",
    "prefetch",
    "prefetch_async",
]

_LAZY = {
    "FetchProgress": "mcpctl.prefetch.fetch",
    "prefetch": "mcpctl.prefetch.fetch",
    "prefetch_async": "mcpctl.prefetch.fetch",
    "FetchStatus": "mcpctl.prefetch.results",
    "PackageFetch": "mcpctl.prefetch.results",
    "PrefetchReport": "mcpctl.prefetch.results",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

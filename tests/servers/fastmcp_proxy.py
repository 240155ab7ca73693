"""Serve a rendered ``fastmcp`` config through FastMCP's proxy, over streamable HTTP.

python fastmcp_proxy.py CONFIG.json PORT     (run by the fastmcp venv's python)

One ``fastmcp.Client(config)`` is connected before serving, so each downstream server starts
once and the proxy reuses that session for every request (a disconnected client, or
``fastmcp run config.json``, would start every downstream again per request). With several
servers, FastMCP names their tools ``<server>_<tool>``. The endpoint is
``http://127.0.0.1:PORT/mcp``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from fastmcp import Client


def proxy_of(client: Client) -> object:
    """FastMCP's proxy of a client (``create_proxy`` today, ``FastMCP.as_proxy`` before)."""
    try:
        from fastmcp.server import create_proxy
    except ImportError:  # releases before create_proxy
        from fastmcp import FastMCP

        return FastMCP.as_proxy(client, name="mcpctl-test-proxy")
    return create_proxy(client, name="mcpctl-test-proxy")


async def main() -> None:
    config = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    port = int(sys.argv[2])
    async with Client(config, timeout=30) as client:
        proxy = proxy_of(client)
        await proxy.run_async(  # type: ignore[attr-defined]
            transport="http", host="127.0.0.1", port=port, show_banner=False
        )


if __name__ == "__main__":
    asyncio.run(main())

"""Where a rendered proxy listens: which targets take ``--listen``, and the ports it takes.
(The addresses themselves, through the mcp-proxy target: tests/render/test_proxies.py.)"""

from __future__ import annotations

import pytest

from mcpctl.errors import UsageError
from mcpctl.render.listen import ListenAddress, listen_for, parse_listen
from mcpctl.render.targets import get_target


@pytest.mark.parametrize(
    ("target", "message", "hint"),
    [
        ("fastmcp", "fastmcp: its file holds no listen address",
         "give the address to what serves the proxy (run_async(host=..., port=...))"),
        ("cursor", "cursor: a client does not listen", "--listen is for the mcp-proxy target"),
        ("toolhive", "toolhive: the cluster decides where its servers listen",
         "--listen is for the mcp-proxy target"),
    ],
)  # fmt: skip
def test_a_target_whose_file_holds_no_address_says_why_and_where_it_goes(
    target: str, message: str, hint: str
) -> None:
    with pytest.raises(UsageError) as caught:
        listen_for(get_target(target), "127.0.0.1:9090")
    assert caught.value.message == f"--listen does not apply to {message}"
    assert caught.value.hint == hint


def test_the_mcp_proxy_target_takes_any_port_from_1_to_65535() -> None:
    proxy = get_target("mcp-proxy")
    assert listen_for(proxy, "127.0.0.1:65535") == ListenAddress("127.0.0.1", 65535)
    assert parse_listen(":1") == ListenAddress("", 1)
    with pytest.raises(UsageError, match="from 1 to 65535"):
        listen_for(proxy, "127.0.0.1:65536")

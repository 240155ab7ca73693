"""The table of transports: which are remote, what each requires and which fields apply."""

from __future__ import annotations

from mcpctl.config.transports import (
    DEFAULT_REMOTE,
    REMOTE_FALLBACKS,
    TRANSPORT_NAMES,
    TRANSPORTS,
    remote_transports,
)


def test_the_remote_transports_are_those_reached_by_url_in_order() -> None:
    assert remote_transports() == ("streamable-http", "sse")
    assert TRANSPORT_NAMES == ("stdio", "streamable-http", "sse")
    assert DEFAULT_REMOTE == REMOTE_FALLBACKS[0] == "streamable-http"
    assert set(REMOTE_FALLBACKS) == set(remote_transports())


def test_each_transport_requires_its_field_and_owns_its_fields() -> None:
    stdio = TRANSPORTS["stdio"]
    assert (stdio.remote, stdio.requires, stdio.opener) == (False, "command", "open_stdio")
    assert stdio.fields == ("command", "args", "env", "cwd", "inherit_env")
    for name in remote_transports():
        spec = TRANSPORTS[name]
        assert (spec.name, spec.remote, spec.requires) == (name, True, "url")
        assert spec.fields == ("url", "headers", "auth")
    assert TRANSPORTS["sse"].opener == "open_sse"
    assert TRANSPORTS["streamable-http"].opener == "open_streamable_http"

"""The steps only a remote server has in ``mcpctl doctor NAME``: ``resolve``, ``connect``,
``tls`` (https only), ``http`` and ``auth``, then the probe its ``protocol`` step reads.

A sign-in is reported by its state and expiry, never by a token.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpctl.doctor.commonsteps import CommonSteps
from mcpctl.doctor.steps import StepDone, StepFailed
from mcpctl.text import plural

if TYPE_CHECKING:
    from mcpctl.probe.health import ProbeResult

__all__ = ["RemoteSteps"]


class RemoteSteps(CommonSteps):
    """The steps of a remote server before ``lists``."""

    def _host(self) -> tuple[str, int]:
        from mcpctl.probe.layers import host_and_port

        assert self.resolved is not None
        return host_and_port(self.resolved.entry.url or "")

    async def _resolve(self) -> StepDone:
        from mcpctl.probe.layers import LayerFailed, is_address, resolve_host

        host, port = self._host()
        if is_address(host.strip("[]")):
            self.addresses = [host.strip("[]")]
            return StepDone(f"{host} is an address (nothing to resolve)")
        try:
            self.addresses = await resolve_host(host, port, self.seconds)
        except LayerFailed as exc:
            raise StepFailed(exc.message, exc.fix) from None
        shown = ", ".join(self.addresses[:4]) + (", ..." if len(self.addresses) > 4 else "")
        return StepDone(f"{host}: {shown}")

    async def _connect(self) -> StepDone:
        from mcpctl.probe.layers import LayerFailed, connect_tcp

        _, port = self._host()
        try:
            self.address = await connect_tcp(self.addresses, port, self.seconds)
        except LayerFailed as exc:
            raise StepFailed(exc.message, exc.fix) from None
        return StepDone(f"connected to {self.address} port {port}")

    async def _tls(self) -> StepDone:
        from mcpctl.probe.layers import LayerFailed, check_tls

        host, port = self._host()
        assert self.address is not None
        try:
            tls = await check_tls(host, port, self.address, self.seconds)
        except LayerFailed as exc:
            raise StepFailed(exc.message, exc.fix) from None
        detail = f"{tls.version or 'TLS'}; certificate for {tls.subject or host}"
        if tls.issuer:
            detail += f" from {tls.issuer}"
        if tls.not_after is not None:
            detail += f", valid until {tls.not_after} ({plural(tls.days_left or 0, 'day')} left)"
        if tls.days_left is not None and tls.days_left < 14:
            detail += "; it expires soon: renew it"
        return StepDone(detail)

    async def _http(self) -> StepDone:
        from mcpctl.probe.failures import http_error
        from mcpctl.probe.layers import LayerFailed, check_http

        assert self.resolved is not None
        transport = self.entry.transport
        try:
            answer = await check_http(self.resolved, transport, self.seconds)
            if transport is None and answer.status in (404, 405):
                # Perhaps it speaks the older transport: its event stream is a GET.
                sse = await check_http(self.resolved, "sse", self.seconds)
                if sse.status < 400 and sse.content_type == "text/event-stream":
                    answer = sse
        except LayerFailed as exc:
            raise StepFailed(exc.message, exc.fix) from None
        self.answer = answer
        what = "POST initialize" if answer.method == "POST" else "GET (event stream)"
        detail = f"{what}: HTTP {answer.status}, {answer.content_type or 'no content type'}"
        if answer.status in (401, 403):
            scheme = f" ({answer.challenge})" if answer.challenge else ""
            return StepDone(f"{detail}; it asks for credentials{scheme}")
        if answer.status >= 400 or "html" in answer.content_type:
            error = http_error(answer.status, self.name)
            if answer.status < 400:
                raise StepFailed(
                    f"{detail}: an HTML page, not MCP", "check the URL's path (often /mcp or /sse)"
                )
            raise StepFailed(
                f"{detail}: {error.message}",
                error.hint or "check the URL's path (often /mcp or /sse)",
            )
        return StepDone(detail)

    async def _auth(self) -> StepDone:
        from mcpctl.probe.layers import auth_metadata

        answer = self.answer
        assert answer is not None and self.resolved is not None
        url = self.resolved.entry.url or ""
        asked = answer.status == 401
        parts: list[str] = []
        if answer.status == 403:
            raise StepFailed(
                "the server answered 403 Forbidden", "the credentials lack the needed permissions"
            )
        if asked or self._signs_in():
            meta = await auth_metadata(url, answer.resource_metadata, self.seconds)
            if meta.resource_url:
                parts.append(f"protected-resource metadata at {meta.resource_url}")
            if meta.issuer:
                parts.append(f"authorization server {meta.issuer}")
            parts += meta.problems
        status = self._sign_in_state(url) if self._signs_in() else None
        signed_in = status is not None and status["signed_in"] and not status["problem"]
        if status is not None:
            parts.append(_sign_in_text(status))
        if asked and not signed_in:
            challenge = f" ({answer.challenge})" if answer.challenge else ""
            said = "asks for a sign-in" if answer.challenge else "refuses the request"
            if status is None:
                parts.append("the entry does not sign in with OAuth")
            fix = f"sign in with 'mcpctl auth {self.name}'"
            if not self._signs_in():
                fix += ' (its entry needs "auth": {"type": "oauth"})'
                if not answer.challenge:
                    fix = f"set the credentials of {self.name!r} (its headers), or {fix}"
            raise StepFailed(
                f"the server answered 401{challenge} and {said}; " + "; ".join(parts), fix
            )
        if status is not None and status["problem"]:
            raise StepFailed("; ".join(parts), f"sign in with 'mcpctl auth {self.name}'")
        if not parts:
            parts.append("no sign-in asked for")
        return StepDone("; ".join(parts))

    def _sign_in_state(self, url: str) -> dict[str, Any] | None:
        """The sign-in as ``mcpctl auth status`` shows it -- never a token."""
        from mcpctl.auth.records import load_record, token_status
        from mcpctl.errors import McpctlError

        keyring = self._keyring()
        if keyring.store is None:
            return {
                "signed_in": False,
                "problem": f"the keyring is unusable ({keyring.problem})",
                "expires_at": None,
                "expired": None,
                "refreshable": False,
                "stale": False,
            }
        try:
            return token_status(self.name, url, load_record(self.name, keyring.store))
        except McpctlError as exc:
            return {
                "signed_in": False,
                "problem": exc.message,
                "expires_at": None,
                "expired": None,
                "refreshable": False,
                "stale": False,
            }

    async def _remote(self) -> StepDone:
        from mcpctl.probe.health import probe

        self.result = result = await probe(
            self.name,
            self.entry,
            timeout=self.seconds,
            secrets=self.secrets,
            protocol=self.protocol,
            eras=self.eras,
        )
        return await self._protocol() if result.available else self._remote_failed(result)

    @staticmethod
    def _remote_failed(result: ProbeResult) -> StepDone:
        error = result.error
        assert error is not None
        raise StepFailed(
            f"{error.code}: {error.message}", error.hint, result.latency_ms.get("total")
        )


def _sign_in_text(status: dict[str, Any]) -> str:
    if status["problem"]:
        return f"sign-in: {status['problem']}"
    if not status["signed_in"]:
        return "not signed in"
    expires = status.get("expires_at")
    if status.get("expired"):
        renew = "renewed on use" if status.get("refreshable") else "not renewable"
        return f"signed in (the access token expired {expires}; {renew})"
    return f"signed in (expires {expires})" if expires else "signed in"

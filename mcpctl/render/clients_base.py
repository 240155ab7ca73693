"""The client target classes: :class:`ClientBase` (what every client shares) and
:class:`McpServersClient` (the common ``{name: {command, args, env} | {url, headers}}`` shape).

Render walks the entries and builds the client's whole document (over ``--template``); parse
reads a client's file back into entries, liberal about what it finds: a setting mcpctl has no
place for is a warning, not an error. ``expressible(entry)`` says what of an entry survives
the trip through the client.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from mcpctl.config.model import ServerEntry, ToolFilter
from mcpctl.errors import UsageError
from mcpctl.render.base import (
    Family,
    Parsed,
    Places,
    Rendered,
    RenderRequest,
    Scope,
    names_used,
    warn,
)
from mcpctl.render.clients import (
    NO_SYNTAX,
    TYPE_ALIASES,
    RenderContext,
    Syntax,
    add_entry,
    auth_headers,
    env_strings,
    foreign,
    import_name,
    load_jsonc,
    out_ceil,
    returned_remote,
    timeout_in,
    unsupported,
)

__all__ = ["ClientBase", "McpServersClient"]

_GLOB = re.compile(r"[*?\[]")


class ClientBase:
    """What every client target shares: rendering loop, parse loop, names, auth, template.

    ``headers_helper`` is the key of a command that prints a remote server's headers (Claude
    Code's ``headersHelper``); ``prompts_secrets`` says the client asks for secret values
    itself (VS Code's inputs).
    """

    family: Family = "client"
    file_format: Literal["json", "toml", "yaml"] = "json"
    headers_helper: str | None = None
    prompts_secrets: bool = False

    def __init__(
        self,
        name: str,
        label: str,
        description: str,
        *,
        section: tuple[str, ...],
        syntax: Syntax,
        where: Callable[[Scope, Places], list[Path]],
        keyed_lists: Mapping[str, str] | None = None,
    ) -> None:
        self.name = name
        self.label = label
        self.description = description
        self.section = section
        self.syntax = syntax
        self.keyed_lists: Mapping[str, str] = dict(keyed_lists or {})
        self._where = where

    def __repr__(self) -> str:
        return f"<client target {self.name}>"

    def locations(self, scope: Scope, places: Places) -> list[Path]:
        """The client's documented config files for ``scope`` (first: where install writes)."""
        return self._where(scope, places)

    # -- rendering -------------------------------------------------------------------------

    def render(self, request: RenderRequest) -> Rendered:
        """The client's whole document holding ``request.entries``.

        Raises:
            UsageError: the template has something other than an object where servers go.
            PlaceholderError: ``--inline-secrets`` and a variable has no value.
        """
        ctx = RenderContext(self, request)
        servers: dict[str, Any] = {}
        for name, entry in request.entries.items():
            out = self.entry_out(name, entry, ctx)
            if out is not None:
                servers[name] = out
        doc = self.document(servers, ctx)
        return Rendered(self.dump(doc), ctx.warnings, ctx.holds_secrets)

    def entry_out(self, name: str, entry: ServerEntry, ctx: RenderContext) -> Any:
        """One server as the client writes it (``None``: left out, with a warning)."""
        raise NotImplementedError

    def document(self, servers: Any, ctx: RenderContext) -> dict[str, Any]:
        """The template (or an empty document) with ``servers`` at :attr:`section`.

        Raises:
            UsageError: the template has something other than an object on the way.
        """
        template = ctx.request.template
        doc: dict[str, Any] = copy.deepcopy(template) if template else {}
        node = doc
        for key in self.section[:-1]:
            node = node.setdefault(key, {})
            if not isinstance(node, dict):
                raise UsageError(f"the template's {key!r} must be an object for {self.name}")
        last = self.section[-1]
        existing = node.get(last)
        if isinstance(servers, dict):
            if existing is not None and not isinstance(existing, dict):
                raise UsageError(f"the template's {last!r} must be an object for {self.name}")
            node[last] = {**(existing or {}), **servers}
        else:
            node[last] = servers
        return doc

    def dump(self, doc: dict[str, Any]) -> str:
        """The document's text (stable, with a trailing newline)."""
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"

    def auth_headers(self, name: str, entry: ServerEntry, ctx: RenderContext) -> dict[str, str]:
        """The headers that carry ``entry.auth`` (placeholders still ``${VAR}``)."""
        return auth_headers(name, entry, ctx)

    def keyring_headers(
        self, name: str, headers: dict[str, str], out: dict[str, Any], ctx: RenderContext
    ) -> dict[str, str]:
        """``headers`` without those a headers helper now gives (set in ``out``); a warning
        for each header that needs a variable only the keyring holds, where the client can
        neither run a helper nor prompt for it."""
        request = ctx.request
        needing = {
            key: [var for var in names_used([value]) if var in request.keyring_vars]
            for key, value in headers.items()
        }
        needing = {key: names for key, names in needing.items() if names}
        if not needing or self.prompts_secrets:
            return headers
        if self.headers_helper is not None and request.headers_command is not None:
            out[self.headers_helper] = request.headers_command(name)
            return {k: v for k, v in headers.items() if k not in needing}
        from mcpctl.render.delivery import keyring_fix

        for key, names in needing.items():
            fix = keyring_fix(self, True, ", ".join(names))
            ctx.warn(name, f"headers.{key}", f"needs {', '.join(names)}, which only the keyring "
                     f"holds: {self.label} reads it from its own environment; {fix}")  # fmt: skip
        return headers

    def unsupported(self, name: str, entry: ServerEntry, ctx: RenderContext, keep: str) -> None:
        """Warn for the fields this client has no setting for (``keep``: names it does have)."""
        unsupported(name, entry, ctx, keep)

    # -- parsing ---------------------------------------------------------------------------

    def load(self, text: str) -> Any:
        """The document of ``text``.

        Raises:
            UsageError: not a document of this client's format.
        """
        return load_jsonc(text, self.label)

    def servers_of(self, doc: Any) -> Any:
        """The servers object of ``doc`` (``{}`` when the client's file has none).

        Raises:
            UsageError: ``doc`` is not an object, or the servers are not where they should be.
        """
        if not isinstance(doc, dict):
            raise UsageError(f"this is not a {self.label} file: expected an object at the top")
        node: Any = doc
        for key in self.section:
            if not isinstance(node, dict):
                break
            node = node.get(key)
            if node is None:
                return {}
        if not isinstance(node, dict):
            path = ".".join(self.section)
            raise UsageError(f"{path!r} in a {self.label} file must be an object of servers")
        return node

    def parse(self, text: str) -> Parsed:
        """The servers of a file of this client, placeholders spelled ``${VAR}``.

        Raises:
            UsageError: ``text`` is not a file of this client.
        """
        parsed = Parsed()
        for raw_name, raw in self.named_servers(self.servers_of(self.load(text))):
            name = import_name(raw_name, parsed.entries, parsed.warnings)
            if not isinstance(raw, dict):
                parsed.warnings.append(f"{name}: is not an object; not imported")
                continue
            data = self.entry_in(name, dict(raw), parsed.warnings)
            if data is not None:
                add_entry(parsed, name, data)
        return parsed

    def named_servers(self, servers: Any) -> list[tuple[str, Any]]:
        """``(name, raw entry)`` pairs of the servers object."""
        return [(str(k), v) for k, v in servers.items()]

    def entry_in(
        self, name: str, raw: dict[str, Any], warnings: list[str]
    ) -> dict[str, Any] | None:
        """One server of the client as mcpctl's entry data; ``raw`` loses the keys it uses."""
        raise NotImplementedError

    def read(self, value: Any) -> Any:
        """``value`` (a string, list or object of strings) with placeholders back to ``${VAR}``."""
        if isinstance(value, str):
            return self.syntax.read(value)
        if isinstance(value, list):
            return [self.read(v) for v in value]
        if isinstance(value, dict):
            return {k: self.read(v) for k, v in value.items()}
        return value

    # -- what round-trips ------------------------------------------------------------------

    def expressible(self, entry: ServerEntry) -> ServerEntry | None:
        """``entry`` as it comes back from this client (``None``: the client cannot hold it)."""
        raise NotImplementedError

    def normal_text(self, value: str) -> str:
        """A string field as it comes back."""
        return self.syntax.normal(value)


TypeNames = Mapping[str, str]


class McpServersClient(ClientBase):
    """The common shape: ``{name: {command, args, env} | {url, headers}}`` under a section.

    The class attributes (set per instance through keyword arguments) say how the client
    spells each part; ``None`` means it has no such setting.
    """

    def __init__(
        self,
        name: str,
        label: str,
        description: str,
        *,
        section: tuple[str, ...] = ("mcpServers",),
        syntax: Syntax = NO_SYNTAX,
        where: Callable[[Scope, Places], list[Path]],
        keyed_lists: Mapping[str, str] | None = None,
        types: TypeNames | None = None,
        url_keys: tuple[str, str] = ("url", "url"),
        sse: Literal["type", "key", "auto"] = "auto",
        cwd: bool = False,
        timeout: tuple[str, int] | None = None,
        allow_key: str | None = None,
        deny_key: str | None = None,
        all_tools: str | None = None,
        exact_tools: bool = False,
        headers_helper: str | None = None,
    ) -> None:
        super().__init__(name, label, description, section=section, syntax=syntax,
                         where=where, keyed_lists=keyed_lists)  # fmt: skip
        self.types = types
        self.url_keys = url_keys  # (streamable-http, sse)
        self.sse = sse
        self.cwd = cwd
        self.timeout = timeout  # (key, milliseconds per unit)
        self.allow_key = allow_key
        self.deny_key = deny_key
        self.all_tools = all_tools  # the allow-list entry that means "every tool"
        self.exact_tools = exact_tools
        self.headers_helper = headers_helper

    def keeps(self) -> str:
        """The optional fields this client has a setting for."""
        has = {
            "cwd": self.cwd,
            "timeout": self.timeout is not None,
            "allow": self.allow_key is not None,
            "deny": self.deny_key is not None,
        }
        return " ".join(k for k, on in has.items() if on)

    def entry_out(self, name: str, entry: ServerEntry, ctx: RenderContext) -> Any:
        """One server in the client's shape."""
        out: dict[str, Any] = {}
        transport = entry.effective_transport
        if self.types is not None:
            out["type"] = self.types[transport]
        if entry.is_remote:
            if transport == "sse" and self.sse == "auto":
                ctx.warn(name, "transport", f"is not written: {self.label} has no SSE setting "
                         "(it finds the transport of a url itself)")  # fmt: skip
            key = self.url_keys[1] if transport == "sse" else self.url_keys[0]
            out[key] = ctx.text(name, "url", entry.url or "")
            headers = {**entry.headers, **self.auth_headers(name, entry, ctx)}
            headers = self.keyring_headers(name, headers, out, ctx)
            if headers:
                out["headers"] = {k: ctx.text(name, f"headers.{k}", v) for k, v in headers.items()}
        else:
            out.update(self.stdio_out(name, entry, ctx))
        self.unsupported(name, entry, ctx, self.keeps())
        if entry.timeout is not None and self.timeout is not None:
            key, unit = self.timeout
            out[key] = out_ceil(entry.timeout, unit)
            if entry.timeout % unit:
                ctx.warn(name, "timeout", f"is rounded up to whole seconds for {self.label}")
        self.tools_out(name, entry, out, ctx)
        return out

    def stdio_out(self, name: str, entry: ServerEntry, ctx: RenderContext) -> dict[str, Any]:
        """command, args, env, cwd."""
        out: dict[str, Any] = {"command": ctx.text(name, "command", entry.command or "")}
        if entry.args:
            out["args"] = [ctx.text(name, "args", a) for a in entry.args]
        if entry.env:
            out["env"] = {k: ctx.text(name, f"env.{k}", v) for k, v in entry.env.items()}
        if entry.cwd is not None and self.cwd:
            out["cwd"] = ctx.text(name, "cwd", entry.cwd)
        return out

    def tools_out(
        self, name: str, entry: ServerEntry, out: dict[str, Any], ctx: RenderContext
    ) -> None:
        """The tool filter, where the client has one."""
        tools = entry.tools
        if self.all_tools is not None and self.allow_key is not None:
            allow = tools.allow if tools is not None else None
            out[self.allow_key] = list(allow) if allow is not None else [self.all_tools]
        elif tools is not None and tools.allow is not None and self.allow_key is not None:
            out[self.allow_key] = list(tools.allow)
        if tools is not None and tools.deny and self.deny_key is not None:
            out[self.deny_key] = list(tools.deny)
        if tools is not None and self.exact_tools:
            patterns = [p for p in (*(tools.allow or ()), *tools.deny) if _GLOB.search(p)]
            if patterns:
                ctx.warn(name, "tools", f"has patterns ({', '.join(patterns)}): {self.label} "
                         "matches tool names exactly")  # fmt: skip

    def entry_in(
        self, name: str, raw: dict[str, Any], warnings: list[str]
    ) -> dict[str, Any] | None:
        """One server of the client as mcpctl's entry data."""
        data: dict[str, Any] = {}
        nested = raw.get("transport")
        if isinstance(nested, dict):  # newer Cline files: the connection in a sub-object
            del raw["transport"]
            for key, value in nested.items():
                raw.setdefault(key, value)
        kind = raw.pop("type", None)
        if kind is None and isinstance(raw.get("transport"), str):
            kind = raw.pop("transport")
        transport = TYPE_ALIASES.get(kind) if isinstance(kind, str) else None
        if kind is not None and transport is None:
            warn(warnings, name, "type", f"{kind!r} is not a transport mcpctl knows; not imported")
            return None
        url_key = next((k for k in dict.fromkeys(self.url_keys) if k in raw), None)
        if "command" in raw:
            data.update(self.stdio_in(raw))
        elif url_key is not None:
            data["url"] = self.read(raw.pop(url_key))
            if self.sse == "key" and url_key == self.url_keys[1] and transport is None:
                transport = "sse"
            if "headers" in raw:
                data["headers"] = self.read(raw.pop("headers"))
            if transport == "sse":
                data["transport"] = "sse"
        else:
            warnings.append(f"{name}: has neither 'command' nor a url; not imported")
            return None
        self.common_in(name, raw, data)
        foreign(name, raw, warnings, self.label)
        return data

    def stdio_in(self, raw: dict[str, Any]) -> dict[str, Any]:
        """command, args, env, cwd of a local server."""
        data: dict[str, Any] = {"command": self.read(raw.pop("command"))}
        for key in ("args", "env"):
            if key in raw:
                data[key] = self.read(env_strings(raw.pop(key)) if key == "env" else raw.pop(key))
        if self.cwd and "cwd" in raw:
            data["cwd"] = self.read(raw.pop("cwd"))
        return data

    def common_in(self, name: str, raw: dict[str, Any], data: dict[str, Any]) -> None:
        """enabled/disabled, timeout and tool filters."""
        if isinstance(raw.get("disabled"), bool):
            data["enabled"] = not raw.pop("disabled")
        if isinstance(raw.get("enabled"), bool):
            data["enabled"] = raw.pop("enabled")
        if self.timeout is not None and self.timeout[0] in raw:
            data["timeout"] = timeout_in(raw.pop(self.timeout[0]), self.timeout[1])
        tools: dict[str, Any] = {}
        if self.allow_key is not None and self.allow_key in raw:
            allow = raw.pop(self.allow_key)
            if allow != [self.all_tools] or self.all_tools is None:
                tools["allow"] = allow
        if self.deny_key is not None and self.deny_key in raw:
            tools["deny"] = raw.pop(self.deny_key)
        if tools:
            data["tools"] = tools

    def expressible(self, entry: ServerEntry) -> ServerEntry | None:
        """``entry`` as it comes back from this client."""
        text = self.normal_text
        tools = entry.tools
        allow = tools.allow if tools is not None and self.allow_key is not None else None
        if self.all_tools is not None and allow == (self.all_tools,):
            allow = None
        deny = tools.deny if tools is not None and self.deny_key is not None else ()
        timeout = entry.timeout if self.timeout is not None else None
        if timeout is not None and self.timeout is not None:
            timeout = int(out_ceil(timeout, self.timeout[1])) * self.timeout[1]
        return ServerEntry(
            command=text(entry.command) if entry.command is not None else None,
            args=tuple(text(a) for a in entry.args),
            env={k: text(v) for k, v in entry.env.items()},
            cwd=text(entry.cwd) if entry.cwd is not None and self.cwd else None,
            timeout=timeout,
            enabled=entry.enabled,
            tools=ToolFilter(allow, deny) if allow is not None or deny else None,
            **returned_remote(entry, text, self.sse != "auto"),
        )

"""Reading ToolHive manifests back (``mcpctl import toolhive FILE``): the parse half of
:mod:`mcpctl.render.toolhive`."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from mcpctl.config.model import NAME_RE, AuthConfig, ServerEntry, ToolFilter, Transport
from mcpctl.errors import UsageError
from mcpctl.render.base import Parsed, warn
from mcpctl.render.toolhive_names import DESCRIPTION_KEY, KINDS, NAME_KEY, var_of_key

__all__ = ["parse_manifests"]

K8S_REF_RE = re.compile(r"\$\$|\$\((?P<name>[-._A-Za-z0-9]+)\)")


def unescape(text: str, refs: dict[str, str]) -> str:
    """Kubernetes' ``$(NAME)`` in ``text`` as ``${VAR}`` (``refs``: NAME -> VAR); ``$$``: ``$``."""

    def one(m: re.Match[str]) -> str:
        var = refs.get(m["name"] or "")
        return "$" if m[0] == "$$" else f"${{{var}}}" if var else m[0]

    return K8S_REF_RE.sub(one, text)


def parse_manifests(text: str) -> Parsed:
    """The servers of a ToolHive manifest stream (each Secret reference a ``${VAR}``).

    Raises:
        UsageError: ``text`` is not a YAML stream of Kubernetes objects.
    """
    objects, parsed = _load(text), Parsed()
    auths, filters = {}, {}
    for obj in objects:
        if obj["kind"] == "MCPExternalAuthConfig":
            auths[str(obj["metadata"].get("name"))] = obj["spec"]
        elif obj["kind"] == "VirtualMCPServer":
            aggregation = (obj["spec"].get("config") or {}).get("aggregation") or {}
            for item in _dicts(aggregation.get("tools")):
                names = tuple(str(n) for n in item.get("filter") or [])
                if item.get("excludeAll") or names:
                    filters[str(item.get("workload"))] = ToolFilter(allow=names)
        elif obj["kind"] not in KINDS:
            name = str(obj["metadata"].get("name", "?"))
            warn(parsed.warnings, name, f"(kind {obj['kind']})", "is not read by toolhive")
    for obj in (o for o in objects if o["kind"] in KINDS[:2]):
        resource = str(obj["metadata"].get("name", ""))
        notes = _strings(obj["metadata"].get("annotations"))
        server = notes.get(NAME_KEY, resource)
        if not NAME_RE.fullmatch(server) or server in parsed.entries:
            warn(parsed.warnings, server or "?", "metadata.name", "is not a new server name")
            continue
        if obj["kind"] == "MCPServer":
            entry = _stdio_entry(obj["spec"], server, parsed.warnings)
        else:
            entry = _remote_entry(obj["spec"], server, auths, parsed.warnings)
        if entry is not None:
            description, tools = notes.get(DESCRIPTION_KEY), filters.get(resource)
            parsed.entries[server] = replace(entry, description=description, tools=tools)
    return parsed


def _load(text: str) -> list[dict[str, Any]]:
    """The objects of a YAML stream (a ``kind: List`` unpacked), with ``metadata`` and ``spec``.

    Raises:
        UsageError: not YAML, or a document that is not a Kubernetes object.
    """
    from mcpctl.render.readers import DocumentError, load_yaml_stream

    try:
        docs = load_yaml_stream(text)
    except DocumentError as exc:
        raise exc.usage("a toolhive manifest") from None
    objects: list[Any] = []
    for doc in docs:  # what kubectl get -o yaml writes: a List of objects
        listed = isinstance(doc, dict) and doc.get("kind") == "List"
        objects += _dicts(doc.get("items")) if listed else [doc] if doc is not None else []
    if not all(isinstance(d, dict) and isinstance(d.get("kind"), str) for d in objects):
        raise UsageError("not a toolhive manifest: each document must be an object with a kind")
    keys = ("metadata", "spec")
    return [d | {k: d[k] if isinstance(d.get(k), dict) else {} for k in keys} for d in objects]


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _dicts(value: object) -> list[dict[str, Any]]:
    return [v for v in _list(value) if isinstance(v, dict)]


def _strings(value: object) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def _placeholder(ref: object) -> str:
    return f"${{{var_of_key(str(ref.get('key', '')) if isinstance(ref, dict) else '')}}}"


def _stdio_entry(spec: dict[str, Any], server: str, warnings: list[str]) -> ServerEntry | None:
    image = spec.get("image")
    if not isinstance(image, str) or not image or spec.get("transport", "stdio") != "stdio":
        warn(warnings, server, "spec", "is not a stdio MCPServer with an image: not read")
        return None
    env = {str(i.get("name")): unescape(str(i.get("value")), {}) for i in _dicts(spec.get("env"))}
    refs: dict[str, str] = {}
    for item in _dicts(spec.get("secrets")):
        target = str(item.get("targetEnvName") or "")
        refs[target or str(item.get("key"))] = _placeholder(item)[2:-1]
        env |= {target: _placeholder(item)} if target else {}
    args = [unescape(str(a), refs) for a in _list(spec.get("args"))]
    scheme, sep, package = image.partition("://")
    if sep and scheme in ("npx", "uvx"):
        lead = ("-y",) if scheme == "npx" else ()
        return ServerEntry(command=scheme, args=(*lead, package, *args), env=env)
    flags = [part for var in env for part in ("-e", var)]
    return ServerEntry(command="docker", args=("run", "-i", "--rm", *flags, image, *args), env=env)


def _remote_entry(spec: dict[str, Any], server: str, auths: dict[str, Any],
                  warnings: list[str]) -> ServerEntry | None:  # fmt: skip
    if not isinstance(url := spec.get("remoteUrl"), str) or not url:
        warn(warnings, server, "spec.remoteUrl", "is missing: not read")
        return None
    forward = spec["headerForward"] if isinstance(spec.get("headerForward"), dict) else {}
    headers = _strings(forward.get("addPlaintextHeaders"))
    for item in _dicts(forward.get("addHeadersFromSecret")):
        headers[str(item.get("headerName"))] = _placeholder(item.get("valueSecretRef"))
    auth = None
    if isinstance(ref := spec.get("externalAuthConfigRef"), dict):
        config = auths.get(str(ref.get("name")), {})
        token = config.get("bearerToken") if config.get("type") == "bearerToken" else None
        if isinstance(token, dict) and isinstance(token.get("tokenSecretRef"), dict):
            auth = AuthConfig(type="bearer", token=_placeholder(token["tokenSecretRef"]))
        else:
            why = "is not a bearerToken MCPExternalAuthConfig of this stream: not read"
            warn(warnings, server, "spec.externalAuthConfigRef", why)
    transport: Transport | None = spec.get("transport")
    transport = transport if transport in ("sse", "streamable-http") else None
    return ServerEntry(url=url, transport=transport, headers=headers, auth=auth)

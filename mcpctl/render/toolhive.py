"""The ``toolhive`` target: Kubernetes manifests for the ToolHive operator.

A stdio server becomes an ``MCPServer`` (npx/uvx packages as the operator's ``npx://`` and
``uvx://`` images, ``docker run`` entries as their image), a remote one an ``MCPRemoteProxy``;
the template's ``virtualServer`` adds a ``VirtualMCPServer`` over an ``MCPGroup``. No secret
is ever written: each ``${VAR}`` refers to the Kubernetes Secret named after it
(``GITHUB_TOKEN`` -> Secret ``github-token``, key ``github_token``); in args it becomes
Kubernetes' own ``$(NAME)``, NAME the container variable that Secret fills.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from mcpctl.config.model import AuthConfig, ServerEntry, ToolFilter
from mcpctl.config.placeholders import PLACEHOLDER_RE
from mcpctl.errors import UsageError
from mcpctl.render.base import Family, Parsed, Rendered, RenderRequest, warn
from mcpctl.render.toolhive_names import DESCRIPTION_KEY, KINDS, NAME_KEY, var_of_key

__all__ = ["TARGETS", "ToolHive", "dns_name", "secret_ref", "var_of_key"]

GROUP = "toolhive.stacklok.dev"
API_VERSIONS = (f"{GROUP}/v1alpha1", f"{GROUP}/v1beta1")
MANAGED = {"app.kubernetes.io/managed-by": "mcpctl"}
PROXY_PORT = 8080
# The operator names a Service "mcp-<name>-remote-proxy", which must stay a 63-character label.
NAME_MAX = 46
LABEL_RE = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
# What ToolHive refuses to forward (RestrictedHeaders of its header-forward middleware).
RESTRICTED_RE = re.compile(
    r"host|connection|keep-alive|te|trailer|upgrade|http2-settings|transfer-encoding|"
    r"content-length|forwarded|proxy-(authorization|authenticate|connection)|"
    r"x-forwarded-(for|host|proto)|x-real-ip",
    re.IGNORECASE,
)
# docker run options that change nothing in a cluster; any other one makes the entry unusable.
DOCKER_FLAGS = frozenset(["-i", "-t", "-it", "-ti", "--interactive", "--tty", "--rm", "--init"])
DOCKER_VALUED = frozenset(["-e", "--env", "--name", "--pull", "--platform"])
BEARER_RE = re.compile(r"Bearer (\$\{[A-Z_][A-Z0-9_]*(?::-[^{}]*)?\})")
# Strings written unquoted: none that YAML 1.1 (as Kubernetes reads it) takes for another type.
PLAIN_RE = re.compile(
    r"(?!(?i:y|n|yes|no|true|false|on|off|null)$)[A-Za-z_/][-A-Za-z0-9_./@:,=+]*(?<!:)"
)
# What a double-quoted string escapes: quotes, controls, line breaks, what YAML may not hold.
ESCAPED_RE = re.compile(r'["\\\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff\ufffe\uffff]')


def dns_name(text: str, limit: int = NAME_MAX, empty: str = "mcp") -> str:
    """``text`` as a DNS-1123 name: lowercase, each other character a ``-``, at most ``limit``
    long, ``-`` trimmed at both ends (``My_Server`` -> ``my-server``)."""
    return re.sub(r"[^a-z0-9-]", "-", text.lower())[:limit].strip("-") or empty


def secret_ref(warnings: list[str], server: str, resource: str, what: str,
               value: str) -> dict[str, str]:  # fmt: skip
    """The Secret (``name``, ``key``) that holds ``value``, ``server``'s ``what``: the Secret
    named after VAR for one ``${VAR}``; for anything else (a literal credential, text around
    placeholders) one named after the resource and field, with a warning. Never the value."""
    if (match := PLACEHOLDER_RE.fullmatch(value)) is not None:
        if match["default"] is not None:
            why = f"default of ${{{match['name']}}} does not apply: the Secret must hold a value"
            warn(warnings, server, what, why)
        return {"name": dns_name(match["name"], 253, "secret"), "key": match["name"].lower()}
    name, key = dns_name(f"{resource}-{what}", 253), re.sub(r"[^-._a-z0-9]", "_", what.lower())
    warn(warnings, server, what, f"is not one ${{VAR}}: Secret {name} (key {key}) must hold it")
    return {"name": name, "key": key}


def _some(key: str, value: Any) -> dict[str, Any]:
    """``{key: value}``, or ``{}`` for an empty value (optional manifest fields)."""
    return {key: value} if value else {}


def _escape(text: str, last: bool = True) -> str:
    """Literal text Kubernetes leaves alone: ``$`` doubled before ``$`` or ``(``, and at the end
    unless ``last`` (a ``$(NAME)`` follows)."""
    return re.sub(r"\$(?=[$(])" if last else r"\$(?=[$(]|\Z)", "$$", text)


@dataclass
class _Options:
    """The template's keys, and the render's warnings."""

    warnings: list[str]
    api_version: str = API_VERSIONS[0]
    namespace: str | None = None
    group: str | None = None
    vmcp: str | None = None
    incoming: Any = field(default_factory=lambda: {"type": "anonymous"})
    images: Any = field(default_factory=dict)


def _label(value: object, what: str) -> str:
    if not isinstance(value, str) or not LABEL_RE.fullmatch(value):
        hint = "lowercase letters, digits and '-', starting and ending with a letter or digit"
        raise UsageError(f"toolhive template: {what} must be a DNS-1123 label", hint=hint)
    return value


def _options(template: dict[str, Any] | None, warnings: list[str]) -> _Options:
    opts, data = _Options(warnings), dict(template or {})
    version = str(data.pop("apiVersion", opts.api_version))
    opts.api_version = version if "/" in version else f"{GROUP}/{version}"
    if opts.api_version not in API_VERSIONS:
        raise UsageError(f"toolhive template: apiVersion must be one of {', '.join(API_VERSIONS)}")
    opts.namespace = _label(data.pop("namespace"), "namespace") if "namespace" in data else None
    opts.group = _label(data.pop("group"), "group") if "group" in data else None
    if "virtualServer" in data:
        vmcp = data.pop("virtualServer")
        vmcp = vmcp if isinstance(vmcp, dict) else {}
        opts.vmcp = _label(vmcp.get("name"), "virtualServer.name")
        opts.group, opts.incoming = opts.group or opts.vmcp, vmcp.get("incomingAuth", opts.incoming)
        if not isinstance(opts.incoming, dict) or "type" not in opts.incoming:
            raise UsageError("toolhive template: virtualServer.incomingAuth needs a type")
        if opts.incoming["type"] == "anonymous":
            warn(warnings, "template", "virtualServer", "admits clients unauthenticated")
    opts.images = images = data.pop("images", {})
    if not isinstance(images, dict) or not all(isinstance(v, str) and v for v in images.values()):
        raise UsageError("toolhive template: images must map server names to image references")
    for key in sorted(data):
        warn(warnings, "template", key, "is not a toolhive template key")
    return opts


@dataclass
class _Secrets:
    """An MCPServer's ``secrets``: one item per Secret (the CRD keys the list by name)."""

    warnings: list[str]
    server: str
    resource: str
    items: list[dict[str, str]] = field(default_factory=list)
    env_of: dict[str, str] = field(default_factory=dict)  # VAR -> the container's variable

    def add(self, what: str, value: str, target: str | None) -> str:
        ref = secret_ref(self.warnings, self.server, self.resource, what, value)
        if any(item["name"] == ref["name"] for item in self.items):
            ref["name"] = dns_name(f"{self.resource}-{what}", 253)
            why = f"shares a Secret with another variable: Secret {ref['name']} must hold it too"
            warn(self.warnings, self.server, what, why)
        self.items.append(ref | _some("targetEnvName", target))
        if (match := PLACEHOLDER_RE.fullmatch(value)) is not None:
            self.env_of.setdefault(match["name"], target or ref["key"])
        return target or ref["key"]

    def arg(self, text: str) -> str:
        """``text`` with each ``${VAR}`` as ``$(NAME)``, NAME a variable a Secret fills."""
        out, pos = "", 0
        for m in PLACEHOLDER_RE.finditer(text):
            var = self.env_of.get(m["name"]) or self.add("args", m[0], None)
            out, pos = out + _escape(text[pos : m.start()], last=False) + f"$({var})", m.end()
        return out + _escape(text[pos:])


Made = tuple[str, list[str], dict[str, str]]  # what an MCPServer runs: image, args, environment


def _image(opts: _Options, server: str, entry: ServerEntry) -> Made | None:
    """The image, args and environment an MCPServer runs for a stdio entry, or ``None``."""
    program = re.sub(r"\.(cmd|exe)$", "", re.split(r"[\\/]", entry.command or "")[-1].lower())
    hint, args = opts.images.get(server), list(entry.args)
    if program in ("npx", "uvx"):
        while program == "npx" and args[:1] in (["-y"], ["--yes"]):
            args = args[1:]
        if args and not args[0].startswith("-"):
            image = f"{program}://{args[0].replace('==', '@')}"
            why = f"runs as {image}, which the operator does not build: build and push it with "
            if hint is None:
                warn(opts.warnings, server, "command", why + "'thv build', name it in images")
            return hint or image, args[1:], dict(entry.env)
    elif program == "docker" and args[:1] == ["run"]:
        args, env = args[1:], {}
        while args and args[0].partition("=")[0] in DOCKER_FLAGS | DOCKER_VALUED:
            option, eq, value = args.pop(0).partition("=")
            value = value if eq or option in DOCKER_FLAGS or not args else args.pop(0)
            name, eq, literal = value.partition("=")
            if option in ("-e", "--env") and (eq or name in entry.env):
                env[name] = literal if eq else entry.env[name]
        if args and not args[0].startswith("-"):
            return hint or args[0], args[1:], env
    if hint is not None:
        return hint, list(entry.args), dict(entry.env)
    what = "with these options" if program in ("npx", "uvx") else "without an image"
    why = f"cannot run in a cluster {what}: left out (name an image in the template's images)"
    warn(opts.warnings, server, "command", f"{entry.command!r} {why}")
    return None


def _doc(opts: _Options, kind: str, name: str, spec: dict[str, Any], server: str = "",
         entry: ServerEntry | None = None) -> dict[str, Any]:  # fmt: skip
    notes = _some(NAME_KEY, server if server and server != name else "")
    notes |= _some(DESCRIPTION_KEY, entry.description if entry is not None else None)
    meta = {"name": name} | _some("namespace", opts.namespace) | {"labels": dict(MANAGED)}
    spec |= _some("groupRef", {"name": opts.group} if kind in KINDS[:2] and opts.group else None)
    meta |= _some("annotations", notes)
    return {"apiVersion": opts.api_version, "kind": kind, "metadata": meta, "spec": spec}


def _stdio(opts: _Options, server: str, name: str, entry: ServerEntry) -> list[dict[str, Any]]:
    if (made := _image(opts, server, entry)) is None:
        return []
    (image, args, environ), warnings = made, opts.warnings
    if PLACEHOLDER_RE.search(image):
        warn(warnings, server, "image", "has placeholders, which the operator does not expand")
    if entry.cwd is not None:
        warn(warnings, server, "cwd", "does not apply: the server runs in its image")
    if entry.inherit_env:
        warn(warnings, server, "inherit_env", "does not apply in a cluster: list them in env")
    secrets, env = _Secrets(warnings, server, name), []
    for key, value in environ.items():
        if PLACEHOLDER_RE.search(value):
            secrets.add(f"env.{key}", value, key)
        else:
            env.append({"name": key, "value": _escape(value)})
    spec: dict[str, Any] = {"image": image, "transport": "stdio", "proxyPort": PROXY_PORT}
    spec |= _some("args", [secrets.arg(a) for a in args]) | _some("env", env)
    return [_doc(opts, "MCPServer", name, spec | _some("secrets", secrets.items), server, entry)]


def _remote(opts: _Options, server: str, name: str, entry: ServerEntry) -> list[dict[str, Any]]:
    warnings = opts.warnings
    url, auth, headers = entry.url or "", entry.auth or AuthConfig("none"), dict(entry.headers)
    if not re.match(r"https?://", url):
        warn(warnings, server, "url", "must start with http:// or https:// in a cluster: left out")
        return []
    if PLACEHOLDER_RE.search(url):
        warn(warnings, server, "url", "has placeholders, which the operator does not expand")
    bearer, credential = auth.token, auth.name or "Authorization" if auth.type == "header" else ""
    headers |= _some(credential, auth.value)
    if auth.type == "basic":
        warn(warnings, server, "auth", "basic cannot be expressed: forward it from a Secret")
    if auth.type == "oauth":
        why = "oauth sign-in cannot happen here: set it up on the cluster (externalAuthConfigRef)"
        warn(warnings, server, "auth", why)
    plain: dict[str, str] = {}
    from_secret: list[dict[str, Any]] = []
    for header, value in headers.items():
        if RESTRICTED_RE.fullmatch(header):
            warn(warnings, server, f"headers.{header}", "is not forwarded by ToolHive: left out")
        elif header.lower() == "authorization" and not bearer and (m := BEARER_RE.fullmatch(value)):
            bearer = m[1]
        elif PLACEHOLDER_RE.search(value) or header == credential:
            ref = secret_ref(warnings, server, name, f"headers.{header}", value)
            from_secret.append({"headerName": header, "valueSecretRef": ref})
        else:
            plain[header] = value
    forward = _some("addPlaintextHeaders", plain) | _some("addHeadersFromSecret", from_secret)
    # Without a transport the entry means streamable-http, the CRD's default: left unsaid.
    spec = {"remoteUrl": url} | _some("transport", entry.transport) | {"proxyPort": PROXY_PORT}
    spec |= _some("headerForward", forward)
    proxy = _doc(opts, "MCPRemoteProxy", name, spec, server, entry)
    if bearer is None:
        return [proxy]
    ref, auth_name = secret_ref(warnings, server, name, "auth.token", bearer), f"{name}-bearer"
    proxy["spec"]["externalAuthConfigRef"] = {"name": auth_name}
    auth_spec = {"type": "bearerToken", "bearerToken": {"tokenSecretRef": ref}}
    return [_doc(opts, "MCPExternalAuthConfig", auth_name, auth_spec), proxy]


def _tool_filter(server: str, tools: ToolFilter, warnings: list[str]) -> dict[str, Any] | None:
    """A VirtualMCPServer ``aggregation.tools`` item's filter (a list of exact names)."""
    if tools.allow is None and not tools.deny:
        return None
    if tools.allow is None or any(c in a for a in tools.allow for c in "*?["):
        what = "tools.deny" if tools.allow is None else "tools.allow"
        warn(warnings, server, what, "cannot be expressed: ToolHive allows a list of exact names")
        return None
    names = [a for a in tools.allow if not any(fnmatchcase(a, d) for d in tools.deny)]
    return {"filter": names} if names else {"excludeAll": True}


def _scalar(value: Any) -> str:
    if type(value) is str:
        return _string(value)
    if value is None or isinstance(value, bool):
        return "null" if value is None else str(value).lower()
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, dict | list):
        return "{}" if isinstance(value, dict) else "[]"
    return _string(str(value))


@functools.lru_cache(maxsize=4096)  # keys and common values repeat in every manifest
def _string(text: str) -> str:
    if PLAIN_RE.fullmatch(text):
        return text
    escape = {'"': '\\"', "\\": "\\\\"}
    return '"' + ESCAPED_RE.sub(lambda m: escape.get(m[0]) or f"\\u{ord(m[0]):04x}", text) + '"'


def _yaml(value: dict[str, Any] | list[Any], pad: str = "") -> list[str]:
    """``value`` as block-style YAML lines (PyYAML's representer is too slow for 1000 servers)."""
    lines: list[str] = []
    is_dict = type(value) is dict
    for key, item in value.items() if isinstance(value, dict) else enumerate(value):
        head = f"{pad}{_scalar(key)}:" if is_dict else f"{pad}-"
        kind = type(item)
        if (kind is not dict and kind is not list) or not item:
            lines.append(f"{head} {_scalar(item)}")
        elif not is_dict:
            sub = _yaml(item, pad + "  ")
            lines.append(f"{head} {sub[0].lstrip()}")
            lines.extend(sub[1:])
        else:
            lines.append(head)
            lines.extend(_yaml(item, pad + "  " if kind is dict else pad))
    return lines


class ToolHive:
    """The ``toolhive`` target (cluster family)."""

    name = "toolhive"
    family: Family = "cluster"
    description = "Kubernetes manifests for the ToolHive operator (MCPServer, MCPRemoteProxy)"

    def render(self, request: RenderRequest) -> Rendered:
        """The manifests of ``request.entries``, one YAML stream.

        Raises:
            UsageError: the template is not a toolhive template.
        """
        warnings: list[str] = []
        opts = _options(request.template, warnings)
        if request.inline_secrets:
            warnings.append("inline_secrets does not apply to toolhive: Secrets hold the values")
        for server in sorted(set(opts.images) - set(request.entries)):
            warn(warnings, "template", f"images.{server}", "names no enabled server")
        docs, tools, taken = [], [], set()
        for server, entry in request.entries.items():
            name, n = dns_name(server), 1
            while name in taken:
                n += 1
                name = f"{dns_name(server, NAME_MAX - len(str(n)) - 1)}-{n}"
            if n > 1:
                warn(warnings, server, "name", f"is another server's as a DNS name: now {name}")
            taken.add(name)
            made = (_remote if entry.is_remote else _stdio)(opts, server, name, entry)
            docs += made
            if made and entry.timeout is not None:
                warn(warnings, server, "timeout", "cannot be expressed: ToolHive has no timeout")
            if made and entry.tools is not None and opts.vmcp is None:
                warn(warnings, server, "tools", "needs the template's virtualServer to filter on")
            elif made and entry.tools is not None:
                item = _tool_filter(server, entry.tools, warnings)
                tools += [{"workload": name} | item] if item is not None else []
        if opts.group:
            docs.insert(0, _doc(opts, "MCPGroup", opts.group, {}))
        if opts.vmcp:
            aggregation = {"conflictResolution": "prefix"} | _some("tools", tools)
            spec = {"groupRef": {"name": opts.group}, "incomingAuth": opts.incoming}
            spec["config"] = {"aggregation": aggregation}
            docs.append(_doc(opts, "VirtualMCPServer", opts.vmcp, spec))
        text = "---\n".join("\n".join(_yaml(doc)) + "\n" for doc in docs)
        return Rendered(text or "# no servers to render\n", warnings)

    def parse(self, text: str) -> Parsed:
        """The servers of a ToolHive manifest stream (each Secret reference a ``${VAR}``).

        Raises:
            UsageError: ``text`` is not a YAML stream of Kubernetes objects.
        """
        from mcpctl.render.toolhive_parse import parse_manifests

        return parse_manifests(text)


TARGETS = {"toolhive": ToolHive()}

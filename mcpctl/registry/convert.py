"""server.json -> a config entry, pinned to a concrete version.

Packages become commands:

* npm   -> ``npx -y <identifier>@<version> [args]``
* pypi  -> ``uvx <identifier>==<version> [args]``
* oci   -> ``docker run -i --rm [-e NAME]... <image>[:<version>] [args]``
* nuget -> ``dnx <identifier>@<version> --yes [-- args]``
* mcpb  -> not supported yet (the error names the server's other options)

Runtime arguments come before the package, package arguments after it; named arguments are
``--name value`` (or a bare flag), positional ones their value. Remotes become ``url``,
``transport`` and ``headers``. Every input marked secret becomes a ``${VAR}`` placeholder --
never a literal -- and ``{var}`` templates in values become ``${VAR}`` when secret. Other
required inputs without a default must be supplied (``--env NAME=value``, ``--header``), or
the conversion lists them as missing. A record that would put a control character into
any value written (:func:`refuse_controls`) is refused, never cleaned up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from mcpctl.config.model import ServerEntry, Source
from mcpctl.config.transports import DEFAULT_REMOTE, TRANSPORTS, Transport
from mcpctl.errors import UsageError
from mcpctl.registry.records import Record, clean_text
from mcpctl.text import escape_controls, find_controls

__all__ = [
    "Conversion",
    "MissingInput",
    "default_name",
    "entry_from_server_json",
    "refuse_controls",
    "var_name",
]

# {var} templates of server.json; not the ${VAR} placeholders mcpctl writes itself.
_TEMPLATE = re.compile(r"(?<!\$)\{([A-Za-z_][A-Za-z0-9_.-]*)\}")


@dataclass(frozen=True)
class MissingInput:
    """A required value the registry has no default for."""

    name: str
    flag: str
    description: str


@dataclass
class Conversion:
    """The entry, the secrets to store before it works, and inputs still missing."""

    entry: ServerEntry
    kind: str
    secrets: list[str] = field(default_factory=list)
    missing: list[MissingInput] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def var_name(text: str) -> str:
    """``api_key`` / ``X-API-Key`` -> ``API_KEY`` / ``X_API_KEY``."""
    name = re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").upper()
    return name if name and not name[0].isdigit() else f"VAR_{name}"


def default_name(server_name: str, taken: set[str] | frozenset[str] = frozenset()) -> str:
    """The config name for a registry server: its slug, or a longer form on a collision.

    ``io.github.acme/weather`` -> ``weather``; if taken, ``acme-weather``; then the whole name
    (``io-github-acme-weather``). Only ``A-Z a-z 0-9 _ -`` are kept, 64 characters at most.
    """

    def clean(text: str) -> str:
        return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-")[:64] or "server"

    namespace, _, slug = server_name.rpartition("/")
    candidates = [clean(slug)]
    if namespace:
        candidates.append(clean(f"{namespace.rsplit('.', 1)[-1]}-{slug}"))
        candidates.append(clean(server_name))
    for candidate in candidates:
        if candidate not in taken:
            return candidate
    base, n = candidates[-1], 2
    while f"{base}-{n}" in taken:
        n += 1
    return f"{base}-{n}"


class _Inputs:
    """Resolves values and ``{var}`` templates, collecting secrets and missing inputs."""

    def __init__(self, provided: dict[str, str], flag: str) -> None:
        self.provided = provided
        self.flag = flag
        self.secrets: list[str] = []
        self.missing: list[MissingInput] = []

    def secret(self, name: str) -> str:
        var = var_name(name)
        if var not in self.secrets:
            self.secrets.append(var)
        return f"${{{var}}}"

    def template(self, text: str, variables: dict[str, Any], *, secret: bool = False) -> str:
        def fill(m: re.Match[str]) -> str:
            key = m.group(1)
            spec = _dict(variables.get(key))
            if secret or spec.get("isSecret") is True or (not spec and self._looks_secret(key)):
                return self.secret(key)
            value = self.provided.get(var_name(key)) or self.provided.get(key)
            if value is None:
                value = _str(spec.get("default")) or _str(spec.get("value"))
            if value is None:
                self.missing.append(MissingInput(var_name(key), f"{self.flag} {var_name(key)}=...",
                                                 clean_text(spec.get("description"))))  # fmt: skip
                return f"${{{var_name(key)}}}"
            return value

        return _TEMPLATE.sub(fill, text)

    @staticmethod
    def _looks_secret(key: str) -> bool:
        return bool(re.search(r"token|secret|key|password", key, re.IGNORECASE))


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _dicts(value: object) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _vars(item: dict[str, Any]) -> dict[str, Any]:
    v = item.get("variables")
    return v if isinstance(v, dict) else {}


def _arguments(items: list[dict[str, Any]], inputs: _Inputs) -> list[str]:
    out: list[str] = []
    for arg in items:
        name = _str(arg.get("name")) or ""
        kind = arg.get("type") or ("named" if name.startswith("-") else "")
        if kind == "named" and not name:
            continue  # no name to put its value after: nothing to pass, nothing to ask for
        raw = _str(arg.get("value"))
        if raw is None:
            raw = _str(arg.get("default"))
        label = (
            name.lstrip("-") if kind == "named" else _str(arg.get("valueHint")) or name or "value"
        )
        if raw is None and arg.get("isRequired") is True:
            key = var_name(label or "value")
            if arg.get("isSecret") is True:
                raw = inputs.secret(key)
            elif key in inputs.provided:
                raw = inputs.provided[key]
            else:
                inputs.missing.append(MissingInput(key, f"{inputs.flag} {key}=...",
                                                   clean_text(arg.get("description"))))  # fmt: skip
                raw = f"${{{key}}}"
        if raw is not None:
            raw = inputs.template(raw, _vars(arg))
        if kind == "named":
            if raw is None:
                continue  # optional, no value: leave it out
            out += [name] if raw == "" and arg.get("format") == "boolean" else [name, raw]
        elif raw is not None:
            out.append(raw)
    return out


def _env(pkg: dict[str, Any], inputs: _Inputs) -> dict[str, str]:
    env: dict[str, str] = {}
    for var in _dicts(pkg.get("environmentVariables")):
        name = _str(var.get("name"))
        if not name:
            continue
        if var.get("isSecret") is True:
            value = _str(var.get("value"))
            if value and _TEMPLATE.search(value):
                env[name] = inputs.template(value, _vars(var), secret=True)
            else:
                env[name] = inputs.secret(name)
            continue
        given = inputs.provided.get(name)
        value = given if given is not None else _str(var.get("value")) or _str(var.get("default"))
        if value is None:
            if var.get("isRequired") is True:
                inputs.missing.append(MissingInput(name, f"--env {name}=...",
                                                   clean_text(var.get("description"))))  # fmt: skip
                env[name] = f"${{{name}}}"
            continue
        env[name] = inputs.template(value, _vars(var))
    return env


def _describe(record: Record) -> str:
    if not record.description:
        return record.title
    return f"{record.title}: {record.description}"[:300]


def _package_version(pkg: dict[str, Any], record: Record, notes: list[str]) -> str:
    version = _str(pkg.get("version"))
    if not version or version == "latest":
        notes.append(
            f"the package does not name a version; pinned to the server's {record.version}"
        )
        return record.version
    return version


def _from_package(pkg: dict[str, Any], record: Record, provided: dict[str, str]) -> Conversion:
    kind = _str(pkg.get("registryType")) or "?"
    ident = _str(pkg.get("identifier"))
    if not ident:
        raise UsageError(f"{record.name}: a package without an identifier")
    notes: list[str] = []
    inputs = _Inputs(provided, "--env")
    env = _env(pkg, inputs)
    runtime = _arguments(_dicts(pkg.get("runtimeArguments")), inputs)
    args = _arguments(_dicts(pkg.get("packageArguments")), inputs)
    version = _package_version(pkg, record, notes)
    if kind == "npm":
        command, argv = "npx", [*(runtime or ["-y"]), f"{ident}@{version}", *args]
    elif kind == "pypi":
        command, argv = "uvx", [*runtime, f"{ident}=={version}", *args]
    elif kind == "oci":
        image = ident if ":" in ident.rsplit("/", 1)[-1] or "@" in ident else f"{ident}:{version}"
        flags = [x for name in env for x in ("-e", name)]
        command, argv = "docker", ["run", "-i", "--rm", *flags, *runtime, image, *args]
    elif kind == "nuget":
        command, argv = (
            "dnx",
            [*runtime, f"{ident}@{version}", "--yes", *(["--", *args] if args else [])],
        )
    else:
        shown = escape_controls(kind, keep_newlines=False)
        raise UsageError(f"{record.name}: {shown} packages are not supported")
    transport = _dict(pkg.get("transport"))
    if transport.get("type") not in (None, "stdio"):
        notes.append(f"this package serves {clean_text(transport.get('type'))} at "
                     f"{clean_text(transport.get('url'))}; added as a stdio command")  # fmt: skip
    entry = ServerEntry(command=command, args=tuple(argv), env=env, description=_describe(record))
    return Conversion(entry, kind, inputs.secrets, inputs.missing, notes)


def _from_remote(remote: dict[str, Any], record: Record, provided: dict[str, str],
                 headers_given: dict[str, str]) -> Conversion:  # fmt: skip
    inputs = _Inputs(provided, "--env")
    url = inputs.template(_str(remote.get("url")) or "", _vars(remote))
    headers: dict[str, str] = {}
    for header in _dicts(remote.get("headers")):
        name = _str(header.get("name"))
        if not name:
            continue
        if name in headers_given:
            headers[name] = headers_given[name]
            continue
        value = _str(header.get("value")) or _str(header.get("default"))
        if header.get("isSecret") is True:
            # "Bearer {api_key}" -> "Bearer ${API_KEY}"; no template -> "${HEADER_NAME}".
            if value and _TEMPLATE.search(value):
                headers[name] = inputs.template(value, _vars(header), secret=True)
            else:
                headers[name] = inputs.secret(name)
            continue
        if value is None:
            if header.get("isRequired") is True:
                why = clean_text(header.get("description"))
                inputs.missing.append(MissingInput(name, f"--header '{name}: ...'", why))
            continue
        headers[name] = inputs.template(value, _vars(header))
    kind = _str(remote.get("type")) or DEFAULT_REMOTE
    spec = TRANSPORTS.get(kind)
    transport: Transport = spec.name if spec is not None and spec.remote else DEFAULT_REMOTE
    entry = ServerEntry(
        url=url, transport=transport, headers=headers, description=_describe(record)
    )
    return Conversion(entry, "remote", inputs.secrets, inputs.missing, [])


def entry_from_server_json(
    record: Record,
    *,
    registry: str = "",
    prefer: Literal["package", "remote"] | None = None,
    package_type: str | None = None,
    env: dict[str, str] | None = None,
    headers: dict[str, str] | None = None,
) -> Conversion:
    """Convert one registry record into a config entry, pinned, with its ``source``.

    Raises:
        UsageError: nothing usable (no packages or remotes, only mcpb, no match for
            ``package_type``).
    """
    server = record.server
    packages = _dicts(server.get("packages"))
    remotes = [r for r in _dicts(server.get("remotes")) if _str(r.get("url"))]
    if package_type:
        packages = [p for p in packages if p.get("registryType") == package_type]
        if not packages:
            raise UsageError(f"{record.name} has no {package_type} package")
    usable = [p for p in packages if p.get("registryType") != "mcpb"]
    order: list[str] = ["remote", "package"] if prefer == "remote" else ["package", "remote"]
    conversion: Conversion | None = None
    for choice in order:
        if choice == "package" and usable:
            conversion = _from_package(usable[0], record, dict(env or {}))
            break
        if choice == "remote" and remotes and not package_type:
            conversion = _from_remote(remotes[0], record, dict(env or {}), dict(headers or {}))
            break
    if conversion is None:
        if packages and all(p.get("registryType") == "mcpb" for p in packages):
            raise UsageError(
                f"{record.name} is only published as an MCP bundle (mcpb), which mcpctl "
                "cannot install yet",
                hint="install the bundle in a client that supports it (e.g. Claude Desktop), "
                "or look for the same server as an npm/PyPI package or a remote with "
                "'mcpctl discover'",
            )
        raise UsageError(f"{record.name} has no package or remote mcpctl can use")
    from dataclasses import replace

    conversion.entry = replace(
        conversion.entry, source=Source(registry or "?", record.name, record.version)
    )
    refuse_controls(record, conversion)
    return conversion


def refuse_controls(record: Record, conversion: Conversion) -> None:
    """Refuse a conversion that would write a control character into the config.

    Everything from a registry is untrusted: an escape sequence in a URL, an argument or a
    header would reach every terminal that shows the file, and every program that reads
    it. The values checked are the ones written -- command, arguments, environment variable
    names and values, URL, header names and values, description, the server's name and
    version (its ``source``) -- and the names of inputs that would be asked for.

    Raises:
        UsageError: naming the field and the character, shown escaped (``\\x1b``).
    """
    entry = conversion.entry
    raw_name, raw_version = record.server.get("name"), record.server.get("version")
    fields: list[tuple[str, str]] = [
        ("server name", raw_name if isinstance(raw_name, str) else record.name),
        ("version", raw_version if isinstance(raw_version, str) else record.version),
        ("command", entry.command or ""),
        ("url", entry.url or ""),
        ("description", entry.description or ""),
    ]
    fields += [(f"argument {i}", arg) for i, arg in enumerate(entry.args, 1)]
    for key, value in entry.env.items():
        fields += [("environment variable name", key), (f"environment variable {key}", value)]
    for key, value in entry.headers.items():
        fields += [("header name", key), (f"header {key}", value)]
    fields += [("input name", missing.name) for missing in conversion.missing]
    for label, value in fields:
        found = find_controls(value)
        if found is not None:
            raise UsageError(
                f"{record.name}: the {escape_controls(label, keep_newlines=False)} holds a "
                f"control character ({found}); nothing from this record is written",
                hint="registries are untrusted: report it to the registry, or add the server "
                "by hand with 'mcpctl add NAME -- COMMAND' after checking it",
            )

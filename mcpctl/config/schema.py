"""The pydantic models of ``external-mcps.json``: the schema of record. No I/O.

Used by the strict validator (:func:`mcpctl.config.validate.validate_config`) and by
``mcpctl schema``. The hot paths check entries with :mod:`mcpctl.config.checks` instead,
which accepts exactly what these models accept (``tests/config/test_model.py`` holds them
together).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    field_validator,
    model_validator,
)

from mcpctl.config.checks import check_url, transport_field_issues
from mcpctl.config.model import (
    DEFAULT_TIMEOUT_MS,
    ENV_NAME_RE,
    HEADER_NAME_RE,
    INHERIT_NAME_RE,
    MAX_TIMEOUT_MS,
    NAME_RE,
    ProtocolMode,
)
from mcpctl.config.transports import Transport

__all__ = ["SCHEMA_ID", "ServerEntryModel", "config_json_schema"]

SCHEMA_ID = "https://mcpctl.dev/schema/external-mcps.json"


def _nonblank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


# The check runs in Python (not as a schema regex) so it agrees with mcpctl.config.model's
# notion of whitespace; the schema still tells editors.
NonEmpty = Annotated[
    StrictStr, AfterValidator(_nonblank), Field(json_schema_extra={"pattern": "\\S"})
]
EnvMap = dict[Annotated[str, Field(pattern=f"^{ENV_NAME_RE.pattern}$")], StrictStr]
InheritName = Annotated[StrictStr, Field(pattern=f"^{INHERIT_NAME_RE.pattern}$")]
HeaderMap = dict[Annotated[str, Field(pattern=f"^{HEADER_NAME_RE.pattern}$")], StrictStr]


def _absent() -> Any:
    """Default of an optional field: left out of the file, ``None`` in the model."""
    return None


def _no_null(value: Any) -> Any:
    # Optional fields are left out, never null: orchestrators' loaders reject null too.
    if value is None:
        raise ValueError("null is not allowed here; leave the field out instead")
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class _NoNulls(_Strict):
    _check_nulls = field_validator("*", mode="before")(_no_null)


class NoAuth(_Strict):
    """No authentication."""

    type: Literal["none"]


class BearerAuth(_Strict):
    """``Authorization: Bearer <token>``; write the token as a ``${PLACEHOLDER}``."""

    type: Literal["bearer"]
    token: StrictStr = Field(description="The token, normally ${VAR} resolved from the keyring.")


class HeaderAuth(_Strict):
    """A credential sent in one header (``Authorization`` unless ``name`` says otherwise)."""

    type: Literal["header"]
    name: NonEmpty = "Authorization"
    value: StrictStr

    _check_nulls = field_validator("name", mode="before")(_no_null)


class BasicAuth(_Strict):
    """HTTP Basic authentication."""

    type: Literal["basic"]
    username: StrictStr
    password: StrictStr


class OAuthAuth(_Strict):
    """OAuth 2.1 sign-in; tokens are kept in the OS keyring, never in this file."""

    type: Literal["oauth"]
    scopes: list[StrictStr] = Field(default_factory=list)
    client_id: StrictStr = Field(default_factory=_absent)
    client_secret: StrictStr = Field(default_factory=_absent)
    client_metadata_url: NonEmpty = Field(
        default_factory=_absent,
        description="URL of a client ID metadata document, used when the server supports it.",
    )
    callback_port: Annotated[StrictInt, Field(ge=1, le=65535)] = Field(default_factory=_absent)

    _check_nulls = field_validator(
        "scopes",
        "client_id",
        "client_secret",
        "client_metadata_url",
        "callback_port",
        mode="before",
    )(_no_null)


Auth = Annotated[
    NoAuth | BearerAuth | HeaderAuth | BasicAuth | OAuthAuth, Field(discriminator="type")
]


class ToolsModel(_NoNulls):
    """Which tools are exposed: glob patterns; ``deny`` wins over ``allow``."""

    allow: list[StrictStr] = Field(
        default_factory=_absent, description="Only these (all when left out)."
    )
    deny: list[StrictStr] = Field(default_factory=list)


class SourceModel(_NoNulls):
    """Where an entry added from a registry came from, and the pinned version."""

    registry: NonEmpty
    name: NonEmpty
    version: NonEmpty


class ServerEntryModel(_NoNulls):
    """One external MCP server: a command to spawn (stdio) or a URL to connect to.

    Optional fields are left out rather than written as ``null`` (orchestrators'
    loaders reject ``null`` too), so the schema does not offer ``null``.
    """

    command: NonEmpty = Field(default_factory=_absent, description="Executable of a stdio server.")
    args: list[StrictStr] = Field(default_factory=list, description="Arguments.")
    env: EnvMap = Field(default_factory=dict, description="Environment of the child process.")
    cwd: NonEmpty = Field(
        default_factory=_absent, description="Working directory of the child process."
    )
    inherit_env: StrictBool | list[InheritName] = Field(
        False,
        description="Environment variables the server inherits beyond HOME, LOGNAME, PATH, "
        "SHELL, TERM and USER: true for all of mcpctl's, or a list of names.",
    )
    url: NonEmpty = Field(
        default_factory=_absent, description="Endpoint of a remote server (http/https)."
    )
    transport: Transport = Field(
        default_factory=_absent,
        description="stdio if command is set, streamable-http if url is set.",
    )
    headers: HeaderMap = Field(default_factory=dict, description="HTTP headers (remote only).")
    allow_literal: list[Annotated[StrictStr, Field(pattern=f"^{ENV_NAME_RE.pattern}$")]] = Field(
        default_factory=list,
        description="Keys of env and headers named like secrets (API_KEY, GITHUB_PAT, "
        "Authorization...) whose literal values are not secrets: written and validated as "
        "they are.",
    )
    auth: Auth = Field(default_factory=_absent, description="How to authenticate a remote server.")
    timeout: Annotated[StrictInt, Field(gt=0, le=MAX_TIMEOUT_MS)] = Field(
        DEFAULT_TIMEOUT_MS, description="Connect + handshake timeout, in milliseconds."
    )
    protocol: ProtocolMode = Field(
        "auto",
        description="Protocol era: auto (detect, remembered per entry), modern (2026-07-28 "
        "and later, no handshake) or legacy (the initialize handshake).",
    )
    sensitive: StrictBool = Field(False, description="Tool inputs must be screened by the host.")
    description: StrictStr = Field(
        default_factory=_absent, description="Human-readable description."
    )
    groups: list[Annotated[StrictStr, Field(pattern=f"^{NAME_RE.pattern}$")]] = Field(
        default_factory=list,
        description="Groups the server belongs to (names as server names are), to select "
        "servers together with --group. Other readers of the file ignore it.",
    )
    enabled: StrictBool = Field(True, description="Disabled entries are kept but not loaded.")
    tools: ToolsModel = Field(default_factory=_absent, description="Which tools are exposed.")
    source: SourceModel = Field(
        default_factory=_absent, description="Registry provenance and pinned version."
    )

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and (why := check_url(value)) is not None:
            raise ValueError(why)
        return value

    @model_validator(mode="after")
    def _transport_fields(self) -> ServerEntryModel:
        issues = transport_field_issues({k: getattr(self, k) for k in self.model_fields_set})
        if issues:
            raise ValueError("; ".join(issue.message for issue in issues))
        return self


def config_json_schema() -> dict[str, Any]:
    """The JSON Schema of the whole file, for editors (``"$schema"``) and ``mcpctl schema``."""
    entry = ServerEntryModel.model_json_schema(ref_template="#/$defs/{model}")
    defs = entry.pop("$defs", {})
    defs["ServerEntry"] = entry
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "external-mcps.json",
        "description": (
            "External MCP servers, keyed by logical name. Keys starting with '$' are "
            "kept and ignored. Values may use ${VAR} and ${VAR:-default} placeholders."
        ),
        "type": "object",
        "patternProperties": {"^\\$": {}},
        "propertyNames": {"anyOf": [{"pattern": "^\\$"}, {"pattern": f"^{NAME_RE.pattern}$"}]},
        "additionalProperties": {"$ref": "#/$defs/ServerEntry"},
        "$defs": defs,
    }

"""``mcpctl add --auth TYPE`` and its options, turned into the entry's ``auth``."""

from __future__ import annotations

from mcpctl.config.model import AUTH_TYPES, AuthConfig
from mcpctl.errors import UsageError

__all__ = ["auth_from_flags"]

# Which options go with which type (the option's name as typed, for messages).
_OPTIONS = {
    "bearer": ("--token",),
    "header": ("--auth-header", "--auth-value"),
    "basic": ("--username", "--password"),
    "oauth": ("--scope", "--client-id", "--client-secret", "--client-metadata-url",
              "--callback-port"),
}  # fmt: skip
_REQUIRED = {
    "bearer": ("--token",),
    "header": ("--auth-value",),
    "basic": ("--username", "--password"),
}


def auth_from_flags(kind: str | None, given: dict[str, object]) -> AuthConfig | None:
    """The ``auth`` of an entry from ``--auth TYPE`` and the options given (name -> value).

    Credentials are ``${VAR}`` placeholders; a literal one is refused when the entry is
    written (the store refuses literal secrets for every caller).

    Raises:
        UsageError: an unknown type, an option that does not go with the type, or a missing
            required one.
    """
    used = [flag for flag, value in given.items() if value not in (None, (), [], "")]
    if kind is None:
        if used:
            raise UsageError(
                f"{used[0]} goes with --auth", hint="e.g. --auth bearer --token '${TOKEN}'"
            )
        return None
    if kind not in AUTH_TYPES:
        raise UsageError(f"--auth {kind!r}: choose one of {', '.join(AUTH_TYPES)}")
    allowed = _OPTIONS.get(kind, ())
    wrong = [flag for flag in used if flag not in allowed]
    if wrong:
        return _refuse(kind, wrong[0])
    missing = [flag for flag in _REQUIRED.get(kind, ()) if flag not in used]
    if missing:
        raise UsageError(f"--auth {kind} needs {missing[0]}",
                         hint=f"e.g. --auth {kind} {missing[0]} '${{VAR}}'")  # fmt: skip
    scopes = given.get("--scope") or ()
    port = given.get("--callback-port")
    return AuthConfig(
        type=kind,
        token=_text(given.get("--token")),
        name=_text(given.get("--auth-header")),
        value=_text(given.get("--auth-value")),
        username=_text(given.get("--username")),
        password=_text(given.get("--password")),
        scopes=tuple(str(s) for s in scopes) if isinstance(scopes, list | tuple) else (),
        client_id=_text(given.get("--client-id")),
        client_secret=_text(given.get("--client-secret")),
        client_metadata_url=_text(given.get("--client-metadata-url")),
        callback_port=port if isinstance(port, int) else None,
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _refuse(kind: str, flag: str) -> AuthConfig:
    owner = next((k for k, flags in _OPTIONS.items() if flag in flags), None)
    hint = f"{flag} goes with --auth {owner}" if owner else None
    raise UsageError(f"{flag} does not go with --auth {kind}", hint=hint)

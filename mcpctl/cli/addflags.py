"""``mcpctl add``'s flags read into what the entry holds: ``--timeout`` as the milliseconds
the file keeps, ``--transport`` checked as a remote one, ``--protocol`` as the era pinned, and
warnings for a value the shell most likely expanded to nothing or a NAME given after ``--``.
(``--auth`` and its options: :mod:`mcpctl.cli.authflags`.)
"""

from __future__ import annotations

from mcpctl.cli.common import Protocol
from mcpctl.cli.flagvalues import duration_option
from mcpctl.cli.output import STATE
from mcpctl.config.model import MAX_TIMEOUT_MS, ProtocolMode
from mcpctl.config.transports import remote_transports
from mcpctl.errors import UsageError

__all__ = [
    "MIN_ADD_TIMEOUT_MS",
    "PINNED",
    "empty_values",
    "entry_timeout_ms",
    "name_after_dashdash",
    "remote_transport",
]

# What --protocol writes into an entry (auto, the default, is left out).
PINNED: dict[Protocol, ProtocolMode] = {Protocol.modern: "modern", Protocol.legacy: "legacy"}

_AUTH_SCHEMES = ("bearer", "basic", "token", "bot")
#: The shortest connect timeout ``add --timeout`` writes: no server starts and answers faster.
MIN_ADD_TIMEOUT_MS = 100


def entry_timeout_ms(text: str, warnings: list[str]) -> int:
    """The milliseconds the file keeps for ``add --timeout TEXT`` (a bare number is seconds).

    Raises:
        UsageError: not a duration, under :data:`MIN_ADD_TIMEOUT_MS` or over an hour.
    """
    seconds = duration_option(text, warnings)
    assert seconds is not None
    millis = round(seconds * 1000)
    if millis < MIN_ADD_TIMEOUT_MS:
        raise UsageError(
            f"--timeout {text!r} is under {MIN_ADD_TIMEOUT_MS} ms: no server starts and answers "
            "that fast",
            hint="a bare number is seconds (--timeout 30 is 30 s); with a unit: 500ms, 1.5s, 2m",
        )
    if millis > MAX_TIMEOUT_MS:
        bare = text.strip().replace(".", "", 1).isdigit()
        raise UsageError(
            f"--timeout {text!r} is over {MAX_TIMEOUT_MS // 60_000} minutes, the longest an "
            "entry may wait",
            hint=f"a bare number is seconds: write {text.strip()}ms for milliseconds"
            if bare
            else "for example 30s, 2m",
        )
    return millis


def remote_transport(value: str | None) -> str | None:
    choices = remote_transports()
    if value is not None and value not in choices:
        raise UsageError(
            f"--transport {value!r} is not a remote transport",
            hint=f"choose one of {', '.join(choices)}",
        )
    return value


def empty_values(env: dict[str, str], headers: dict[str, str], bearer: str | None) -> list[str]:
    """Warnings for values a shell most likely expanded to nothing (``"${TOKEN}"``)."""
    warnings = []
    for key, value in env.items():
        if not value:
            warnings.append(
                f"--env {key} is empty; if you meant a placeholder, the shell expanded it: "
                f"write -e {key}='${{{key}}}' (single quotes)"
            )
    for key, value in headers.items():
        words = value.split()
        if not words or (len(words) == 1 and words[0].lower() in _AUTH_SCHEMES):
            var = key.upper().replace("-", "_")
            warnings.append(
                f"--header {key} has no value after {value.strip() or 'the colon'}; if you meant "
                f"a placeholder, the shell expanded it: write -H '{key}: "
                f"{(value.strip() + ' ') if words else ''}${{{var}}}' (single quotes)"
            )
    if bearer is not None and not bearer.strip():
        warnings.append(
            "--bearer is empty; if you meant a placeholder, the shell expanded it: "
            "write --bearer '${API_TOKEN}' (single quotes)"
        )
    return warnings


def name_after_dashdash(name: str | None) -> bool:
    """Whether the only positional came after ``--`` (``mcpctl add -- true``)."""
    args = STATE.argv
    if name is None or "--" not in args:
        return False
    cut = args.index("--")
    return name in args[cut + 1 :] and name not in args[:cut]

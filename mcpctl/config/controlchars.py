"""Control characters in a config entry: where ``validate`` finds them, and what it says.

A server's name, command, arguments, environment, working directory, URL, headers and
credentials reach a process, a connection or a terminal. A control character there (one of
:func:`mcpctl.text.controls_re`: C0 but newline and tab, DEL, C1, bidirectional overrides,
isolates and marks, zero-width characters, line and paragraph separators, lone surrogates)
is at best a typo and at worst a disguise: ``validate`` reports each such string as an
error, showing the character escaped (``\\x1b``, ``\\u200b``), never raw.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from mcpctl.config.model import PathPart
from mcpctl.config.validationreport import ProblemCollector
from mcpctl.text import controls_in, find_controls

if TYPE_CHECKING:
    from mcpctl.config.model import ServerEntry

__all__ = [
    "CHECKED_FIELDS",
    "control_characters",
    "may_hold_controls",
    "refuse_lone_surrogates",
    "report_control_characters",
    "written_path",
]

PathT = tuple[PathPart, ...]

# The fields of an entry whose every string (names included) is checked.
CHECKED_FIELDS = ("command", "args", "env", "cwd", "url", "headers", "auth")

# The JSON escapes that can stand for a control character (\b, \f, \r, \u001b, \u009b,
# \u061c, \u200b, \u2028, \u202e, \u2060, \ufeff, \ud800...).
_CONTROL_ESCAPE_RE = re.compile(
    r"\\[bfr]|\\u(?:00[01]|007[fF]|00[89]|061[cC]"
    r"|20(?:0[b-fB-F]|2[89a-eA-E]|6[06-9])|[fF][eE][fF][fF]|[dD][89a-fA-F])"
)
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_INVISIBLE = frozenset("\u200b\u200c\u200d\u2060\ufeff")


def may_hold_controls(raw: str) -> bool:
    """Whether JSON text ``raw`` could decode to a string with a control character (a quick
    scan: when not, none of its strings needs looking at)."""
    return controls_in(raw).search(raw) is not None or (
        "\\" in raw and _CONTROL_ESCAPE_RE.search(raw) is not None
    )


def _texts(entry: dict[str, Any]) -> Iterator[tuple[PathT, str, bool]]:
    """(path in the entry, text, whether it is a key) of every checked string."""
    for key in ("command", "cwd", "url"):
        if isinstance(entry.get(key), str):
            yield (key,), entry[key], False
    args = entry.get("args")
    if isinstance(args, list):
        for i, arg in enumerate(args):
            if isinstance(arg, str):
                yield ("args", i), arg, False
    for section in ("env", "headers", "auth"):
        mapping = entry.get(section)
        if not isinstance(mapping, dict):
            continue
        for key, item in mapping.items():
            yield (section, key), key, True
            if isinstance(item, str):
                yield (section, key), item, False
            elif isinstance(item, list):  # auth.scopes
                for i, part in enumerate(item):
                    if isinstance(part, str):
                        yield (section, key, i), part, False


def control_characters(name: str, entry: object) -> list[tuple[PathT, str, bool]]:
    """Where the server ``name`` and its ``entry`` hold a control character: (path, the
    first such character of that string escaped as ``\\x1b``, whether the path names a key).
    """
    found: list[tuple[PathT, str, bool]] = []
    if (char := find_controls(name)) is not None:
        found.append(((name,), char, True))
    if isinstance(entry, dict):
        for rel, text, is_key in _texts(entry):
            if (char := find_controls(text)) is not None:
                found.append(((name, *rel), char, is_key))
    return found


def refuse_lone_surrogates(entries: Mapping[str, ServerEntry], doing: str) -> None:
    """Refuse to write ``entries`` out (``doing``: what for, ``render cursor``) when a string
    of theirs holds a lone surrogate: the config keeps one as written, but no file can.

    Raises:
        UsageError: naming the first such place, never its text.
    """
    from mcpctl.config.model import format_path
    from mcpctl.errors import UsageError

    for name, entry in entries.items():
        for path, char, _ in control_characters(name, entry.to_data()):
            if char[:3] == "\\ud" and char[3:4] in "89abcdefABCDEF":
                raise UsageError(
                    f"{format_path(path)} holds a lone surrogate ({char}), which is not text: "
                    f"{doing} cannot hold it",
                    hint="fix it in the config; 'mcpctl validate' shows every such place",
                )


def _kind(escaped: str) -> str:
    code = int(escaped[2:], 16)
    if 0xD800 <= code <= 0xDFFF:
        return (
            "a lone surrogate: valid as a JSON escape, but not text (it cannot be passed to a "
            "process or printed)"
        )
    if chr(code) in _BIDI:
        return "a bidirectional-text control, which makes text show other than it is"
    if chr(code) in _INVISIBLE:
        return "an invisible character, which makes text read other than it is"
    if code in (0x2028, 0x2029):
        return "a line or paragraph separator, which breaks the text where nothing shows it"
    return "a control character, which can drive the terminal that shows it"


def report_control_characters(
    col: ProblemCollector, name: str, entry: object, raw: str | None = None
) -> None:
    """Add a ``control_character`` error for each string of ``name``/``entry`` that has one.

    ``raw`` is the JSON text of the member, when known: without anything that could decode to a
    control character, its strings are not looked at one by one.
    """
    if raw is not None and not may_hold_controls(raw):
        return
    for path, char, is_key in control_characters(name, entry):
        what = "the server name" if len(path) == 1 else "the name" if is_key else "the value"
        col.add(
            "error", "control_character", path, f"{what} contains {char}, {_kind(char)}",
            hint="remove it (most editors do not show it: search for the escape above)",
            at_key=is_key,
        )  # fmt: skip


def written_path(entry: object, loc: tuple[PathPart, ...]) -> tuple[PathPart, ...]:
    """A location in ``entry`` from pydantic, with its keys as written: pydantic shows a lone
    surrogate in a key as U+FFFD, so the path would name no key of the file."""
    if not any(isinstance(part, str) and "\ufffd" in part for part in loc):
        return loc
    out: list[PathPart] = []
    node = entry
    for shown in loc:
        part = shown
        if isinstance(node, dict) and isinstance(shown, str) and shown not in node:
            part = next((k for k in node if _as_pydantic_shows(k) == shown), shown)
        out.append(part)
        if isinstance(node, dict):
            node = node.get(part)
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        else:
            node = None
    return tuple(out)


def _as_pydantic_shows(key: str) -> str:
    return key.encode("utf-8", "surrogatepass").decode("utf-8", "replace")

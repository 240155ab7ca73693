"""Which config files and servers the user approved: the digest of an entry, the record of
approvals, the environment's say -- with the standard library only.

The launcher a client starts for every server (``mcpctl run NAME``) checks an entry here
before it resolves a secret or execs anything, within a few interpreter start-ups;
:mod:`mcpctl.config.trust` builds the library's :class:`~mcpctl.config.trust.TrustStore` and
the commands' checks on the same functions.

The digest of an entry covers everything that decides what runs, where it connects and what
it receives, as written (placeholders not resolved): ``command``, ``args``, ``cwd``, ``env``
(names and values as written), ``inherit_env``, ``url``, ``transport``, ``headers`` (as
written), ``auth`` and ``protocol``. Fields that change none of that -- ``description``,
``enabled``, ``timeout``, ``groups``, ``tools``, ``sensitive``, ``allow_literal``,
``source`` -- are left out, so editing them does not ask again.

The record (``<state dir>/trust.json``) is read as a hostile file: anything but a regular
file within the size limit holding the expected shape is "nothing trusted", never a crash.
It holds paths, server names and digests -- never a value of the config.
"""

from __future__ import annotations

import json
import os
import re

TYPE_CHECKING = False  # typing is not worth its import on the launcher's way to exec
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

__all__ = [
    "COVERED",
    "MAX_HISTORY",
    "RECORD_NAME",
    "RECORD_VERSION",
    "canonical",
    "digest_of",
    "dump_record",
    "entry_digest",
    "env_policy",
    "file_reason",
    "is_own",
    "load_record",
    "parse_record",
    "quick_trusted",
    "read_record",
]

RECORD_NAME = "trust.json"
RECORD_VERSION = 1
#: The fields of an entry its digest covers (docs/security.md says why these).
COVERED = (
    "command", "args", "cwd", "env", "inherit_env", "url", "transport", "headers", "auth",
    "protocol",
)  # fmt: skip
#: Digests kept per server: the contents approved before, for undo and a revert.
MAX_HISTORY = 20
_DIGEST_RE = re.compile(r"sha256:[0-9a-f]{64}")
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def _empty(value: object) -> bool:
    # What the file's model writes as nothing: the default of each covered field.
    return value is None or value is False or value in ([], {})


def canonical(data: Mapping[str, object]) -> dict[str, object]:
    """The covered fields of an entry's JSON object, without the ones at their default
    (``"args": []`` is no ``args``), as the config model writes them."""
    out: dict[str, object] = {}
    for key in COVERED:
        if key not in data:
            continue
        value = data[key]
        if key == "auth" and isinstance(value, dict):
            value = {k: v for k, v in value.items() if not _empty(v)}
            if value.get("type") == "header" and value.get("name") == "Authorization":
                del value["name"]  # the default header name, which the model leaves out
        if not _empty(value):
            out[key] = value
    return out


_SHA256: list[Callable[[bytes], Any]] = []


def _sha256(data: bytes) -> str:
    # CPython's own SHA-256 module imports in a fraction of a millisecond; hashlib loads
    # OpenSSL, several interpreter start-ups' worth of the launcher's time. Same digest.
    if not _SHA256:
        try:
            from _sha2 import sha256  # type: ignore[import-not-found,unused-ignore]  # 3.12+
        except ImportError:
            try:
                from _sha256 import sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
            except ImportError:
                from hashlib import sha256  # type: ignore[assignment,unused-ignore]
        _SHA256.append(sha256)
    return str(_SHA256[0](data).hexdigest())


def digest_of(document: object) -> str:
    """``sha256:<hex>`` of a JSON document, written canonically (sorted keys, ASCII)."""
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return "sha256:" + _sha256(text.encode("ascii"))


def entry_digest(data: Mapping[str, object]) -> str:
    """The digest of an entry's JSON object (as written, or ``ServerEntry.to_data()``)."""
    return digest_of(canonical(data))


def env_policy(environ: Mapping[str, str]) -> str | None:
    """What the environment says: ``MCPCTL_TRUST=1`` (every file is trusted), ``CI`` (a
    pipeline: the checked-out project's file is trusted, unless ``MCPCTL_TRUST=0``), or
    ``None`` (approvals decide)."""
    own = environ.get("MCPCTL_TRUST", "").strip().lower()
    if own in _TRUE:
        return "MCPCTL_TRUST=1"
    if own in _FALSE:
        return None
    if environ.get("CI", "").strip().lower() in _TRUE:
        return "CI"
    return None


def is_own(path: str | os.PathLike[str], config_dir: str | os.PathLike[str]) -> bool:
    """``path`` is under mcpctl's config dir (the user's own file), as named or resolved."""
    here, base = os.path.abspath(path), os.path.abspath(config_dir)
    if os.path.normpath(here).startswith(os.path.join(os.path.normpath(base), "")):
        return True
    real, real_base = os.path.realpath(here), os.path.realpath(base)
    return real.startswith(os.path.join(real_base, ""))


def file_reason(
    path: str | os.PathLike[str],
    config_dir: str | os.PathLike[str] | None,
    environ: Mapping[str, str],
) -> str | None:
    """Why the whole file at ``path`` is trusted, if it is: ``own`` (under ``config_dir``,
    mcpctl's config dir), else :func:`env_policy`'s answer."""
    if config_dir is not None and is_own(path, config_dir):
        return "own"
    return env_policy(environ)


def parse_record(document: object) -> dict[str, dict[str, object]]:
    """The files of a record document: real path -> ``{"servers": {name: [digest, ...]},
    ...}``; what does not have that shape is left out."""
    files = document.get("files") if isinstance(document, dict) else None
    if not isinstance(files, dict):
        return {}
    out: dict[str, dict[str, object]] = {}
    for path, item in files.items():
        servers = item.get("servers") if isinstance(item, dict) else None
        if not isinstance(servers, dict) or not os.path.isabs(path):
            continue
        kept: dict[str, list[str]] = {}
        for name, digests in servers.items():
            if isinstance(digests, list):
                good = [d for d in digests if isinstance(d, str) and _DIGEST_RE.fullmatch(d)]
                if good:
                    kept[name] = good[:MAX_HISTORY]
        assert isinstance(item, dict)
        if kept:  # a file none of whose servers is approved is no file of the record
            out[path] = {**item, "servers": kept}
    return out


def load_record(raw: bytes | None) -> dict[str, dict[str, object]]:
    """The files of a record's bytes (``None``: no record); garbage is no record."""
    try:
        document = json.loads(raw.decode("utf-8")) if raw else None
    except (ValueError, RecursionError):
        return {}
    return parse_record(document)


def dump_record(files: Mapping[str, object]) -> bytes:
    """The bytes of a record holding ``files``."""
    document = {"mcpctl_trust": RECORD_VERSION, "files": files}
    return (json.dumps(document, indent=2, sort_keys=True) + "\n").encode("utf-8")


def read_record(path: str | os.PathLike[str]) -> dict[str, dict[str, object]]:
    """The files of the record at ``path``; nothing when it is missing, not a regular file,
    over the size limit, not UTF-8 JSON, or of another shape."""
    from mcpctl.config.safefile import read_file
    from mcpctl.errors import McpctlError

    try:
        raw = read_file(path)
        document = json.loads(raw.decode("utf-8")) if raw is not None else None
    # A hostile record is no record (nothing is trusted by it): not a regular file, too big,
    # unreadable (McpctlError), not UTF-8 JSON (ValueError), nested past the parser.
    except (McpctlError, ValueError, RecursionError):
        return {}
    return parse_record(document)


def quick_trusted(
    path: str, name: str, data: Mapping[str, object], environ: Mapping[str, str]
) -> bool:
    """Entry ``name`` (its JSON object ``data``) of the config file ``path`` is trusted: by
    the environment, as the user's own file, or by its digest in the record. ``False`` may be
    wrong only towards caution (the config model then decides)."""
    if env_policy(environ) is not None:
        return True
    from mcpctl.quickpaths import user_dir

    if is_own(path, user_dir("config")):
        return True
    files = read_record(os.path.join(user_dir("state"), RECORD_NAME))
    item = files.get(os.path.realpath(path))
    servers = item.get("servers") if item is not None else None
    return isinstance(servers, dict) and entry_digest(data) in servers.get(name, ())

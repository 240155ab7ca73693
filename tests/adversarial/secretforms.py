"""How a secret may be written, computed here apart from mcpctl's own list of forms, so the
adversarial tests can look for every form of a canary in outputs and files."""

from __future__ import annotations

import base64
import json
from urllib.parse import quote, quote_plus

__all__ = ["fragments", "leaks_of"]


def leaks_of(value: str) -> list[tuple[str, str]]:
    """How ``value`` may be written, and what of each must never show: as is, JSON-escaped,
    percent-encoded three ways, base64 two ways, and inside the base64 of ``name:value``
    (Basic auth) at each alignment -- there, the characters carried by the value's bits."""
    raw = value.encode()
    written = {value, quote(value), quote(value, safe=""), quote_plus(value),
               json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}  # fmt: skip
    out = [(text, text) for text in written] + [(value, value[:16])]  # half a secret is a leak
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        text = encode(raw).decode()
        out += [(text, text), (text.rstrip("="), text.rstrip("="))]
        for prefix in (b"c:", b"id:", b"bot:"):
            text = encode(prefix + raw).decode()
            start = -(-8 * len(prefix) // 6)  # the first character of the value's bits only
            out.append((text, text[start : start + 12]))
    return out


def fragments(value: str) -> list[str]:
    """What of ``value`` must never show, in any of its forms."""
    return sorted({fragment for _, fragment in leaks_of(value)})

"""Searching the discovery cache: the FTS5 query, the ranking, one hit per server.

Ranking is two-staged. SQLite's ``bm25()`` with column weights (slug 8, title 4,
description 1, namespace 0.5) orders the candidates; :func:`score` then adds bonuses so
that an exact name or slug beats a name prefix, which beats a substring of the name, a
title match and a description match. A server found in several registries is one
:class:`SearchHit` naming all of them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from mcpctl.registry.records import version_key

__all__ = ["COLUMN_WEIGHTS", "SearchHit", "fts_query", "score", "search"]

COLUMN_WEIGHTS = (8.0, 4.0, 1.0, 0.5)
"""bm25 weights of the FTS columns, in table order: slug, title, description, namespace."""


@dataclass
class SearchHit:
    """One server in search results (merged across registries)."""

    name: str
    version: str
    title: str
    description: str
    status: str
    transports: list[str]
    package_types: list[str]
    needs_secrets: bool
    registries: list[str] = field(default_factory=list)
    score: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "version": self.version,
            "status": self.status,
            "transports": self.transports,
            "package_types": self.package_types,
            "needs_secrets": self.needs_secrets,
            "registries": self.registries,
        }


def fts_query(text: str) -> str:
    """An FTS5 query matching every word of ``text`` as a prefix (``""`` for no words).

    Only letters and digits survive, so nothing the user types is FTS5 syntax.
    """
    terms = [t for t in "".join(c if c.isalnum() else " " for c in text.lower()).split() if t]
    return " ".join(f'"{t}"*' for t in terms)


def score(needle: str, name: str, slug: str, title: str, desc: str, bm25: float) -> float:
    """The rank of one row: ``-bm25`` plus bonuses for where ``needle`` (the query) occurs.

    ``bm25()`` is lower-is-better (negative) and small next to the bonuses, so the bonuses
    decide first and the column weights order rows with the same bonuses.
    """
    value = -bm25
    if not needle:
        return value
    lname, lslug, ltitle = name.lower(), slug.lower(), title.lower()
    if needle in (lname, lslug):
        value += 1000
    elif lslug.startswith(needle) or lname.startswith(needle):
        value += 500
    elif needle in lslug or needle in lname:
        value += 250
    if needle in ltitle:
        value += 100
    if needle in desc.lower():
        value += 10
    return value


def search(
    conn: sqlite3.Connection,
    query: str = "",
    *,
    registries: Iterable[str] | None = None,
    transport: str | None = None,
    package_type: str | None = None,
    all_status: bool = False,
    limit: int = 20,
) -> list[SearchHit]:
    """Ranked latest versions in the cache ``conn`` matching ``query`` (all when empty)."""
    where = ["s.is_latest = 1"]
    args: list[Any] = []
    wanted = list(registries) if registries is not None else None
    if wanted is not None:
        where.append(f"s.registry IN ({','.join('?' * len(wanted))})")
        args += wanted
    if not all_status:
        where.append("s.status NOT IN ('deleted', 'deprecated')")
    if package_type:
        where.append("(',' || s.package_types || ',') LIKE ?")
        args.append(f"%,{package_type},%")
    if transport == "stdio":
        where.append("s.package_types != ''")
    elif transport == "remote":
        where.append("(s.transports LIKE '%http%' OR s.transports LIKE '%sse%')")
    cols = "s.registry, s.name, s.version, s.title, s.description, s.status, s.transports,"
    cols += " s.package_types, s.needs_secrets, s.slug"
    fts = fts_query(query)
    if fts:
        # Field weights decide first (name/slug > title > description), so matches in the
        # slug or title are ranked on their own; description and namespace matches are
        # fetched only when those do not fill the page. Ranking every description match
        # of a common word is what costs time on a 20,000-entry cache.
        # Only fixed column names, numbers and "?" placeholders are formatted in.
        weights = ", ".join(str(w) for w in COLUMN_WEIGHTS)
        base = (
            f"SELECT {cols}, bm25(servers_fts, {weights}) AS rank"  # noqa: S608
            " FROM servers_fts JOIN servers s ON s.id = servers_fts.rowid"
            f" WHERE servers_fts MATCH ? AND {' AND '.join(where)}"
            " ORDER BY rank LIMIT ?"
        )
        pool = max(limit * 5, 50)
        rows = conn.execute(base, ["{slug title} : (" + fts + ")", *args, pool]).fetchall()
        if len(rows) < limit:
            seen = {r[1] for r in rows}
            more = conn.execute(base, [fts, *args, pool]).fetchall()
            rows += [r for r in more if r[1] not in seen]
    else:
        sql = f"SELECT {cols}, 0 FROM servers s WHERE {' AND '.join(where)} ORDER BY s.name"  # noqa: S608
        rows = conn.execute(sql, args).fetchall()
    hits: dict[str, SearchHit] = {}
    needle = query.strip().lower()
    for reg, name, version, title, desc, status, trans, pkgs, secrets, slug, rank in rows:
        value = score(needle, name, slug, title, desc, float(rank))
        hit = hits.get(name)
        if hit is None:
            hits[name] = SearchHit(
                name, version, title, desc, status,
                [t for t in trans.split(",") if t], [p for p in pkgs.split(",") if p],
                bool(secrets), [reg], value,
            )  # fmt: skip
        else:
            if reg not in hit.registries:
                hit.registries.append(reg)
            if version_key(version) > version_key(hit.version):
                hit.version = version
            hit.score = max(hit.score, value)
    ranked = sorted(hits.values(), key=lambda h: (-h.score, h.name)) if fts else list(hits.values())
    return ranked[:limit]

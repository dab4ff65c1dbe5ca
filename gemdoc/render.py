"""How results and reports look: text for people, JSON for agents.

The JSON contract (documented in README.md) only ever grows by new fields.
"""

import json
import re

from gemdoc.search import Hit

SNIPPET_CHARS = 240


def hit_json(hit: Hit, arms: dict[str, int] | None = None) -> dict:
    return {
        "gem": hit.gem,
        "version": hit.version,
        "source_type": hit.source_type,
        "kind": hit.kind,
        "title": hit.title,
        "heading": hit.heading,
        "path": hit.file,
        "line": hit.line,
        "signature": hit.signature,
        "score": round(hit.score, 4),
        "matched": hit.matched,
        "arms": arms if arms is not None else {"keyword": None},
        "text": hit.body,
    }


def results_json(
    query: str, hits: list[Hit], scope_size: int, stale: bool, mode: str = "keyword", arms: dict | None = None
) -> str:
    """The --json contract. ``arms`` maps a chunk id to its rank in each arm that found it."""
    ranks = arms or {h.id: {"keyword": i} for i, h in enumerate(hits, start=1)}
    return json.dumps(
        {
            "query": query,
            "mode": mode,
            "gems_in_scope": scope_size,
            "stale": stale,
            "results": [hit_json(h, ranks.get(h.id, {})) for h in hits],
        },
        ensure_ascii=False,
        indent=2,
    )


def location(hit: Hit) -> str:
    if not hit.file:
        return "(no source location)"
    return f"{hit.file}:{hit.line}" if hit.line else hit.file


def results_text(hits: list[Hit], arms: dict | None = None) -> str:
    lines = []
    for number, hit in enumerate(hits, start=1):
        found_by = ""
        if arms and hit.id in arms:
            found_by = "  (" + ", ".join(f"{arm} #{rank}" for arm, rank in arms[hit.id].items()) + ")"
        lines.append(f"{number:>2}. [{hit.gem} {hit.version} · {hit.source_type}] {hit.title}{found_by}")
        detail = f"    {location(hit)}"
        if hit.signature and hit.source_type == "ri" and hit.kind in ("method", "attribute"):
            detail += f"  {hit.signature.splitlines()[0]}"
        lines.append(detail)
        snippet = snippet_of(hit.body, hit.matched)
        if snippet:
            lines.append(f"    {snippet}")
    return "\n".join(lines)


def snippet_of(body: str, matched: list[str]) -> str:
    flat = re.sub(r"\s+", " ", body).strip()
    if len(flat) <= SNIPPET_CHARS:
        return flat
    lower = flat.lower()
    positions = [lower.find(t) for t in matched if lower.find(t) >= 0]
    start = max(0, min(positions) - 60) if positions else 0
    piece = flat[start : start + SNIPPET_CHARS]
    return ("…" if start else "") + piece + "…"

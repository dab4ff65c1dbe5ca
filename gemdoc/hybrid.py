"""`gemdoc query` and `gemdoc vsearch`: the vector arm, and its fusion with the keyword arm.

A query may carry typed sub-queries, one per line or inline: ``lex: ...`` goes to the
keyword arm only, ``vec: ...`` to the vector arm only, ``hyde: ...`` (a hypothetical
answer passage) is embedded as a document and goes to the vector arm; untyped text goes
to both. Every ranked list is fused with weighted reciprocal rank fusion, k = 60.
"""

import re
import sqlite3
from dataclasses import dataclass, field

from gemdoc import query as q
from gemdoc import vectors
from gemdoc.evidence import Evidence
from gemdoc import search as searcher

RRF_K = 60
# The keyword arm's ranks count three times the vector arm's: with all-MiniLM-L6-v2 the vector arm
# alone is far weaker on the ruler (hit@1 0.22 against 0.42). Measured on the ruler with the fp32
# and the int8 build: equal weights lose a how-to question's first place to the vector arm
# (hybrid hit@1 0.411-0.421); any weight from 2.5 to 8 gives 0.432 with both builds.
KEYWORD_WEIGHT = 3.0
# A question that names code (snake_case, CamelCase, ::, #, .method) is answered in the keyword
# arm's order, the vector arm only filling in below: a model does not know identifiers. Measured
# on the ruler: hybrid hit@1 0.421 -> 0.442, api questions 0.333 -> 0.500.
CODE_KEYWORD_WEIGHT = 100.0
ARM_DEPTH = 50  # how deep each arm's list goes into the fusion
TYPED = re.compile(r"(?:^|\s)(lex|vec|hyde):\s*", re.I)


@dataclass
class Fused:
    mode: str  # hybrid | keyword | vector
    hits: list[searcher.Hit]
    arms: dict[int, dict[str, int]] = field(default_factory=dict)  # chunk id -> {arm: rank}
    evidence: Evidence | None = None
    plan: searcher.Plan | None = None  # the keyword arm's view of the whole question


def parse(text: str) -> list[tuple[str | None, str]]:
    """Split a query into (type, text) parts; untyped text has type None."""
    parts: list[tuple[str | None, str]] = []
    pieces = TYPED.split(text)
    if pieces[0].strip():
        parts.append((None, pieces[0].strip()))
    for kind, body in zip(pieces[1::2], pieces[2::2]):
        if body.strip():
            parts.append((kind.lower(), body.strip()))
    return parts


def vector_hits(conn, matrix: vectors.Matrix, embedder, text: str, as_document: bool, depth: int) -> list[searcher.Hit]:
    query = embedder.embed_documents([text])[0] if as_document else embedder.embed_query(text)
    ranked = matrix.rank(query, depth * 3)
    scores = dict(ranked)
    hits = searcher.fetch(conn, [i for i, _ in ranked], scores, {})
    return searcher.best_per_citation(hits)[:depth]


def query(
    conn: sqlite3.Connection, text: str, gems, limit: int, embedder=None, matrix=None, refuse: bool = True
) -> Fused:
    """Hybrid when a model and vectors are there; the keyword arm alone, saying so, when not.

    The evidence gate applies to every arm: a model always finds a nearest neighbour, so the
    question's words must be in the bundle (see evidence.py) before any arm answers."""
    parts = parse(text) or [(None, text)]
    vector_ready = embedder is not None and matrix is not None and len(matrix) > 0
    mode = "keyword" if not vector_ready else "hybrid" if any(k in (None, "lex") for k, _ in parts) else "vector"
    whole = searcher.run(conn, " ".join(body for _, body in parts), gems, ARM_DEPTH, refuse=refuse)
    if whole.evidence.refused and refuse:
        return Fused(mode, [], {}, whole.evidence, whole.plan)
    lists: list[tuple[str, list[searcher.Hit]]] = []
    for kind, body in parts:
        if kind in (None, "lex"):
            hits = whole.hits if len(parts) == 1 else searcher.search(conn, body, gems, ARM_DEPTH)
            lists.append(("keyword", hits))
        if kind in (None, "vec", "hyde") and vector_ready:
            lists.append(("vector", vector_hits(conn, matrix, embedder, body, kind == "hyde", ARM_DEPTH)))
    one_keyword_part = len(parts) == 1 and parts[0][0] in (None, "lex")
    pinned = whole.hits[0].id if one_keyword_part and whole.hits and whole.hits[0].id in whole.boosted else None
    weights = {"keyword": CODE_KEYWORD_WEIGHT if q.names_code(text) else KEYWORD_WEIGHT}
    return _fuse(mode, lists, limit, whole, pinned, weights)


def _fuse(mode: str, lists, limit: int, whole: searcher.Found, pinned: int | None, weights: dict) -> Fused:
    """Reciprocal rank fusion, each arm weighted (default 1); ``pinned`` (the chunk an API name
    or version in the question names, first in the keyword arm) stays first, as in `search`.
    ``whole`` is the keyword arm's reading of the whole question (its evidence and plan)."""
    fused: dict[int, float] = {}
    hits: dict[int, searcher.Hit] = {}
    arms: dict[int, dict[str, int]] = {}
    for arm, ranked in lists:
        for rank, hit in enumerate(ranked, start=1):
            fused[hit.id] = fused.get(hit.id, 0.0) + weights.get(arm, 1.0) / (RRF_K + rank)
            hits.setdefault(hit.id, hit)
            arms.setdefault(hit.id, {}).setdefault(arm, rank)
    if pinned is not None:
        fused[pinned] = max(fused.values()) + 1e-6
    order = sorted(fused, key=lambda i: (-fused[i], i))
    result = []
    for chunk_id in order:
        hit = hits[chunk_id]
        hit.score = fused[chunk_id]
        result.append(hit)
    return Fused(mode, searcher.best_per_citation(result)[:limit], arms, whole.evidence, whole.plan)

"""Keyword search over the bundle's chunks.

Ranking, all measured on the benchmark ruler (benchmarks/):
- candidates: FTS5 over the question's terms OR'd together, restricted to the
  bundle's exact gem versions inside the MATCH, ranked by bm25 with field
  weights (full name / heading above signature above body);
- terms the store uses nearly everywhere are dropped (rarity from the corpus,
  not a stopword list), unless nothing else is left;
- coverage: a chunk's bm25 is scaled by the share of the question's rarity it
  contains, so one rare word in a short signature cannot beat a passage that
  holds most of the question;
- an identifier query (``Hash#dig``) puts its exact API entry first;
- only the best chunk per (gem, file, heading) is kept before the limit.
"""

import math
import sqlite3
from dataclasses import dataclass, field

from gemdoc import query as q
from gemdoc.stopwords import ENGLISH
from gemdoc.store import FTS_COLUMNS, gemkey

WEIGHTS = {"title": 6.0, "names": 3.0, "signature": 2.0, "body": 1.0, "gemkey": 0.0}
CANDIDATES = 300
UBIQUITOUS = 0.08  # share of chunks a term may occur in before it stops counting as evidence
COVERAGE_POWER = 2.0
EXACT_BONUS = 1000.0
NAME_BONUS = 2.0


@dataclass
class Hit:
    id: int
    gem: str
    version: str
    source_type: str
    kind: str
    title: str
    heading: str
    signature: str
    body: str
    file: str | None
    line: int | None
    score: float
    matched: list[str] = field(default_factory=list)


@dataclass
class Plan:
    """The query as the ranker sees it: useful to --explain and to the rulers."""

    terms: list[str]
    kept: list[str]
    ubiquitous: list[str]
    absent: list[str]
    idf: dict[str, float]


def plan(conn: sqlite3.Connection, text: str) -> Plan:
    terms = q.terms(text)
    content = [t for t in terms if t not in ENGLISH]
    terms = content or terms
    total = conn.execute("SELECT count(*) FROM chunks").fetchone()[0] or 1
    df = {t: _df(conn, t) for t in terms}
    absent = [t for t in terms if df[t] == 0]
    present = [t for t in terms if df[t] > 0]
    ubiquitous = [t for t in present if df[t] / total > UBIQUITOUS]
    kept = [t for t in present if t not in ubiquitous] or ubiquitous
    idf = {t: math.log((total - df[t] + 0.5) / (df[t] + 0.5) + 1.0) for t in present}
    return Plan(terms, kept, ubiquitous, absent, idf)


def _df(conn: sqlite3.Connection, term: str) -> int:
    return conn.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", [q.quote(term)]).fetchone()[0]


def search(conn: sqlite3.Connection, text: str, scope: list[tuple[str, str]], limit: int = 10) -> list[Hit]:
    if not scope:
        return []
    keys = [gemkey(n, v) for n, v in scope]
    p = plan(conn, text)
    scores = _candidates(conn, p.kept, keys) if p.kept else {}
    matched = _matched_terms(conn, p.kept, list(scores))
    total_idf = sum(p.idf[t] for t in p.kept) or 1.0
    for rowid, base in scores.items():
        coverage = sum(p.idf[t] for t in matched.get(rowid, ())) / total_idf
        scores[rowid] = base * coverage**COVERAGE_POWER
    ident = q.identifier(text)
    if ident:
        _boost_identifier(conn, ident, keys, scores)
    hits = _rows(conn, sorted(scores, key=scores.get, reverse=True)[: CANDIDATES + 50], scores, matched)
    return _best_per_citation(hits)[:limit]


def _candidates(conn: sqlite3.Connection, terms: list[str], keys: list[str]) -> dict[int, float]:
    match = f"{q.any_of(terms)} AND {q.any_of(keys, 'gemkey')}"
    weights = ", ".join(str(WEIGHTS[c]) for c in FTS_COLUMNS)
    rows = conn.execute(
        f"SELECT rowid, -bm25(chunks_fts, {weights}) FROM chunks_fts WHERE chunks_fts MATCH ? "
        f"ORDER BY bm25(chunks_fts, {weights}) LIMIT {CANDIDATES}",
        [match],
    )
    return {rowid: score for rowid, score in rows}


def _matched_terms(conn: sqlite3.Connection, terms: list[str], rowids: list[int]) -> dict[int, list[str]]:
    matched: dict[int, list[str]] = {}
    if not rowids:
        return matched
    ids = ",".join(str(int(r)) for r in rowids)
    for term in terms:
        sql = f"SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid IN ({ids})"
        for (rowid,) in conn.execute(sql, [q.quote(term)]):
            matched.setdefault(rowid, []).append(term)
    return matched


def _boost_identifier(conn: sqlite3.Connection, ident: q.Identifier, keys: list[str], scores: dict) -> None:
    marks = ",".join("?" * len(keys))
    rows = conn.execute(
        f"SELECT id, title FROM chunks WHERE name = ? AND source_type = 'ri' AND gemkey IN ({marks})",
        [ident.name, *keys],
    ).fetchall()
    top = max(max(scores.values(), default=1.0), 1.0)
    for rowid, title in rows:
        bonus = EXACT_BONUS if title in ident.full_names else NAME_BONUS
        scores[rowid] = scores.get(rowid, 0.0) + bonus * top


def _rows(conn: sqlite3.Connection, ids: list[int], scores: dict, matched: dict) -> list[Hit]:
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    rows = conn.execute(
        "SELECT id, gem, version, source_type, kind, title, heading, signature, body, file, line "
        f"FROM chunks WHERE id IN ({marks})",
        ids,
    ).fetchall()
    hits = [Hit(*row, score=scores[row[0]], matched=matched.get(row[0], [])) for row in rows]
    return sorted(hits, key=lambda h: (-h.score, h.id))


def _best_per_citation(hits: list[Hit]) -> list[Hit]:
    seen: set[tuple] = set()
    best = []
    for hit in hits:
        key = (hit.gem, hit.file, hit.heading)
        if key not in seen:
            seen.add(key)
            best.append(hit)
    return best

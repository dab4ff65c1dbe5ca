"""Asking a bundle a question: the library behind `search`, `vsearch`, `query`, `show` and the
MCP server. Each call returns the reply as data; render.py turns it into text or JSON."""

import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from gemdoc import hybrid, paths, project, store, uri
from gemdoc import show as shower
from gemdoc import terms as q
from gemdoc import search as searcher
from gemdoc.errors import GemdocError, UsageError
from gemdoc.evidence import Evidence

DEFAULT_MAX_CHARS = 12_000  # the whole reply; fits an agent's context with room to spare
MAX_CHARS_BOUNDS = (500, 200_000)
LIMIT_BOUNDS = (1, 100)


@dataclass
class Options:
    limit: int = 10
    max_chars: int = DEFAULT_MAX_CHARS
    min_score: float | None = None
    explain: bool = False
    refuse: bool = True

    def __post_init__(self) -> None:
        """Numbers from an agent saturate at their bounds instead of failing."""
        self.limit = min(max(int(self.limit), LIMIT_BOUNDS[0]), LIMIT_BOUNDS[1])
        self.max_chars = min(max(int(self.max_chars), MAX_CHARS_BOUNDS[0]), MAX_CHARS_BOUNDS[1])


@dataclass
class Bundle:
    conn: sqlite3.Connection
    scope: project.Scope
    root: Path


@dataclass
class Reply:
    query: str
    mode: str
    hits: list[searcher.Hit]
    arms: dict
    evidence: Evidence
    bundle: Bundle
    plan: searcher.Plan | None = None
    notes: list[str] = field(default_factory=list)
    explain: dict[int, dict] = field(default_factory=dict)


def open_bundle(root: Path) -> Bundle:
    conn = store.connect(paths.store_path())
    return Bundle(conn, project.scope(conn, root), root)


def clean(text: str) -> tuple[str, list[str]]:
    """The query as searched, and a note when it had to be cut."""
    text = text.replace("\x00", " ").strip()
    if not re.search(r"\w", text):
        raise UsageError("the query has no words to search for: ask a question or name an API, e.g. \"Hash#dig\"")
    if len(text) > q.MAX_QUERY_CHARS:
        return cut(text, q.MAX_QUERY_CHARS), [f"query truncated to its first {q.MAX_QUERY_CHARS} characters"]
    return text, []


def cut(text: str, limit: int) -> str:
    """At most ``limit`` characters of ``text``, ending at a word boundary when one lies in the
    second half (a single word longer than that is cut where it must be)."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    if text[limit].isspace():
        return head.rstrip()
    space = max(head.rfind(c) for c in " \t\n")
    return head[:space].rstrip() if space > limit // 2 else head


def keyword(bundle: Bundle, text: str, options: Options) -> Reply:
    text, notes = clean(text)
    notes += project.outside(bundle.scope, text)
    found = searcher.run(bundle.conn, text, bundle.scope.gems, options.limit, options.refuse)
    arms = {h.id: {"keyword": i} for i, h in enumerate(found.hits, start=1)}
    return _finish(Reply(text, "keyword", found.hits, arms, found.evidence, bundle, found.plan, notes), options)


def semantic(bundle: Bundle, text: str, options: Options, embedder, matrix, vector_only: bool) -> Reply:
    text, notes = clean(text)
    notes += project.outside(bundle.scope, text)
    routed = f"vec: {text}" if vector_only else text
    reply = hybrid.query(bundle.conn, routed, bundle.scope.gems, options.limit, embedder, matrix, options.refuse)
    return _finish(Reply(text, reply.mode, reply.hits, reply.arms, reply.evidence, bundle, reply.plan, notes), options)


def _finish(reply: Reply, options: Options) -> Reply:
    if options.min_score is not None:
        reply.hits = [h for h in reply.hits if h.score >= options.min_score]
    if options.explain and reply.hits and reply.plan:
        reply.explain = searcher.explain(reply.bundle.conn, reply.plan, reply.hits)
    return reply


def show(bundle: Bundle, address_text: str, source: bool = False, context: int = 12) -> str:
    """The chunk a URI names, or (``source``, or no chunk starts there) the source lines around it,
    from this project's own entry for the gem version: the store is shared by every project, and
    show reads only gems this project's Gemfile.lock locks."""
    conn = bundle.conn
    try:
        address = uri.parse(address_text)
        entry = shower.entry_of(conn, address, bundle.scope.gems, bundle.root)
    except UsageError:
        raise
    except GemdocError as exc:  # a URI that names nothing here is a usage error, as its parse is
        raise UsageError(str(exc)) from exc
    row = shower.find_chunk(conn, address, entry)
    if row is not None and not source:
        return shower.chunk_text(row, uri.make(row["gem"], row["version"], row["file"], row["line"], row["title"]))
    line = address.line if address.line is not None else (row["line"] if row is not None else None)
    if row is None and line is None:
        raise UsageError(f"nothing at {address_text}: no such chunk in {address.gem} {address.version}")
    if address.path is None or line is None:
        raise GemdocError(f"{address_text} has no source line: gemdoc found no Ruby definition for it")
    return shower.source_lines(conn, address, entry, line, context)

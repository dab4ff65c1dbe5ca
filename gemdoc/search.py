"""Keyword search over the bundle's chunks.

Ranking, each part kept because it moved the benchmark ruler (benchmarks/):
- English function words are dropped from the question (gemdoc.stopwords);
  rarity comes from the store itself: a term in more than UBIQUITOUS of all
  chunks stops counting as evidence, unless nothing else is left;
- each remaining term is one FTS5 query returning (rowid, bm25) with field
  weights (full name above identifier words above signature above body);
  summed, that is exactly FTS5's bm25 for the OR of the terms, and it says
  which terms each chunk holds. A term's document frequency is read from
  fts5vocab first (by its stem, which FTS5 itself computes), so a common term
  is never scored row by row;
- coverage: a chunk's score is scaled by the share of the question's rarity it
  holds, so one rare word in a short signature cannot beat a passage that
  holds most of the question;
- a version number in the question puts first the chunks whose title holds it as a whole version
  (not "0.6.1" for "Rails 6.1"), after a gem's name only that gem's and its release train's; an identifier
  query (``Hash#dig``) puts its exact API entry first; an API named inside a longer
  question (``has_many dependent option``) multiplies its entries' scores by NAMED_FACTOR, unless
  it is named only where a question of several sentences sets the scene (the error it raised);
- priors on the candidates: an ri entry without a comment (a bare signature) counts
  DOCLESS_PRIOR, and a changelog entry CHANGELOG_PRIOR unless the question names a version
  or an upgrade (a change note rarely answers how to do something); for an upgrade question
  ("since upgrading...") the notes of the locked version count LOCKED_RELEASE_FACTOR;
- priors over gems: the gems whose profiles the question's words describe (roles.py: "the
  authorization library"), and each gem's size: a gem of many chunks holds, by chance alone, more
  chunks that match a long question's ordinary words, so its chunks count (its chunks / the
  bundle's median)^-SIZE_POWER;
- only the best chunk per citation (gem, file, and the ri title or the prose heading: one ri comment's
  sections are one citation) is kept before the limit.

The bundle's scope is a set of rowid ranges (each store entry's chunks are
contiguous), checked in Python: cheaper than any filter inside MATCH.
"""

import bisect
import functools
import heapq
import math
import re
import sqlite3
import threading
from collections.abc import Collection, Container
from dataclasses import dataclass, field

from gemdoc import evidence, roles
from gemdoc import terms as q
from gemdoc.stopwords import ENGLISH
from gemdoc.store import FTS_COLUMNS, PASSAGES, TOKENIZER, has_table

WEIGHTS = {"title": 6.0, "names": 3.0, "signature": 2.0, "body": 1.0}
UBIQUITOUS = 0.08  # share of chunks a term may occur in before it stops counting as evidence
UBIQUITOUS_MIN = 50  # ...but a term in fewer chunks than this is never "everywhere" (tiny stores)
EXACT_DF = 3000  # a term in more chunks than this scores by idf alone (see _postings)
COVERAGE_POWER = 2.0
EXACT_BONUS = 1000.0
NAME_BONUS = 2.0
NAMED_FACTOR = 5.0
DOCLESS_PRIOR = 0.7
CHANGELOG_PRIOR = 0.5
LOCKED_RELEASE_FACTOR = 3.0  # "since upgrading...": the change notes of the version this bundle locks
UPGRADE = re.compile(
    r"\b(?:upgrad\w*|bump\w*|since|changelog|releases?|changed|new in|now on|locked|deprecat\w*)\b", re.I
)
WHOLE_VERSIONS = True  # a version asked matches a title's whole version, not its tail (_boost_versions)
VERSION_OWNERS = True  # ...and, after a gem's name, only that gem's (and its release train's) titles
AKIN_MODULES = True  # a method named on an owner is filed in a module under it, not a class nested in it (entries_akin)
# ...and when none under it does, in a module beside it: Rails composes ActiveRecord::Base of modules under
# ActiveRecord (``ActiveRecord::Base.find_by`` is ``ActiveRecord::FinderMethods#find_by``); a ``ClassMethods``
# module's methods RDoc may file under its parent (rank_rules.py, akin_siblings).
AKIN_SIBLINGS = True
NAMED_GEM_FACTOR = 1.0  # off: favouring a gem the question names (x3) gained nothing on dev (rank_rules.py)
  # a question naming a gem of the bundle ("in a Sinatra app") favours that gem's docs
SIZE_POWER = 0.1  # 0: off. On dev alone 0.05 / 0.1 / 0.2 gave hit@1 0.376 / 0.399 / 0.382; test agreed (rank_rules.py)
SCENE_WEIGHT = 0.5  # a term said only where a question sets the scene (rank_rules.py; 0.25 and 0.75 did worse on dev)
NAMED_ASKED_ONLY = True  # an API named only where the question sets the scene is not NAMED_FACTOR'd (rank_rules.py)
POOL = 50  # candidates fetched (at least 5x the limit) before the priors and the per-citation cut
BM25 = "bm25(chunks_fts, " + ", ".join(str(WEIGHTS[c]) for c in FTS_COLUMNS) + ")"


@dataclass
class Hit:
    """One ranked chunk. ``score`` orders results within one reply and means nothing across replies."""

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
    visibility: str = ""  # protected | private for such an API entry a reply shows (ask._finish); public goes unsaid


@dataclass
class Plan:
    """The question as the ranker sees it."""

    terms: list[str]  # the question's terms, stopwords dropped
    ubiquitous: list[str]  # terms the store uses everywhere
    kept: list[str]  # the terms that count as evidence
    idf: dict[str, float]  # every term the store holds; an absent term is not here
    absent_idf: float  # the rarity of a term the store does not hold
    postings: dict[str, dict[int, float]] = field(repr=False, default_factory=dict)
    gems: set[str] = field(default_factory=set)  # gems of the bundle the question names
    fit: dict[str, float] = field(default_factory=dict)  # a gem's factor from its role and size (gem_fit)
    weight: dict[str, float] = field(default_factory=dict)  # a term's share in ranking (1.0 unless here)
    aside: set[str] = field(default_factory=set)  # terms the sentence that asks says only in quotes, or not at all
    named: set[int] = field(default_factory=set)  # entries of the APIs the question names (_weigh_named)


class Scope:
    """The rowid ranges of the bundle's store entries (``gems``: entry ids, see project.Scope)."""

    def __init__(self, conn: sqlite3.Connection, gems: list[int]):
        wanted = set(gems)
        rows = conn.execute(
            "SELECT id, first_id, last_id, chunks, name FROM gems WHERE state = 'complete'"
        ).fetchall()
        self.ranges = sorted((f, l) for i, f, l, _, _ in rows if i in wanted and f is not None)
        self.starts = [f for f, _ in self.ranges]
        self.everything = len(self.ranges) == sum(1 for r in rows if r[1] is not None)
        self.store_chunks = sum(r[3] or 0 for r in rows) or 1  # rarity is taken from the whole store
        self.names = sorted({r[4] for r in rows if r[0] in wanted})
        self.entries = {i: name for i, f, _, _, name in rows if i in wanted and f is not None}  # id -> gem
        self.sizes = {name: n or 0 for i, f, _, n, name in rows if i in wanted and f is not None}  # gem -> chunks
        self._conn = conn

    @functools.cached_property
    def passages(self) -> list[tuple[int, int]]:
        """Read once, and only by a scope that scores (_score): ask.py's name look-ups never need it."""
        return passages(self._conn, list(self.entries))

    def keep(self, rowids) -> list[int]:
        return list(rowids) if self.everything else [r for r in rowids if r in self]

    def __contains__(self, rowid: int) -> bool:
        i = bisect.bisect_right(self.starts, rowid) - 1
        return i >= 0 and rowid <= self.ranges[i][1]

    def __bool__(self) -> bool:
        return bool(self.ranges)


def passages(conn: sqlite3.Connection, entries: list[int]) -> list[tuple[int, int]]:
    """The rowid runs (first, last), in order, of the long ri comments cut into sections
    (chunk.passages) in ``entries``. Only those: an ri comment was once one chunk however long, and
    the gate weighs it as before; a long prose section was always weighed piece by piece."""
    if not entries or not has_table(conn, PASSAGES):
        return []
    marks = ",".join("?" * len(entries))
    return conn.execute(f"SELECT p.first, p.last FROM {PASSAGES} p JOIN chunks c ON c.id = p.first "
                        f"WHERE p.entry IN ({marks}) AND c.source_type = 'ri' ORDER BY p.first", entries).fetchall()  # fmt: skip


class Stemmer:
    """The stems FTS5 gives query terms, computed by FTS5 itself in a scratch table."""

    def __init__(self) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute(f"CREATE VIRTUAL TABLE s USING fts5(t, tokenize='{TOKENIZER}')")
        self.db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(s, instance)")

    def stems(self, terms: list[str]) -> dict[str, str]:
        self.db.execute("DELETE FROM s")
        self.db.executemany("INSERT INTO s(rowid, t) VALUES (?, ?)", list(enumerate(terms)))
        found: dict[str, str] = {}
        for doc, stem in self.db.execute("SELECT doc, term FROM v ORDER BY doc, offset"):
            found.setdefault(terms[doc], stem)
        return found


_local = threading.local()


def _stemmer() -> Stemmer:
    """One per thread: SQLite connections stay in the thread that made them (the MCP server
    runs each tool call in a worker thread)."""
    if not hasattr(_local, "stemmer"):
        _local.stemmer = Stemmer()
    return _local.stemmer


def plan(conn: sqlite3.Connection, text: str, total: int) -> Plan:
    """Which terms of ``text`` count as evidence in a store of ``total`` chunks, and their postings."""
    typed = q.terms(text)
    terms = [t for t in typed if t not in ENGLISH] or typed
    cap = max(UBIQUITOUS_MIN, int(UBIQUITOUS * total))
    stem = _stemmer().stems(terms) if terms else {}
    df = {t: _df(conn, stem[t]) if t in stem else 0 for t in terms}
    ubiquitous = [t for t in terms if df[t] > cap]
    kept = [t for t in terms if df[t] and t not in ubiquitous] or ubiquitous
    idf = {t: _idf(total, df[t]) for t in terms if df[t]}
    postings = {t: _postings(conn, t, df[t], total) for t in kept}
    scene = q.scene_terms(text, terms)
    weight = {t: SCENE_WEIGHT for t in kept if t in scene}  # a term's share in ranking
    aside = q.aside_terms(text, terms)
    return Plan(terms, ubiquitous, kept, idf, _idf(total, 0), postings, weight=weight, aside=aside)


def weighed_idf(p: Plan, terms: list[str]) -> float:
    """The rarity of ``terms`` (kept terms), each at its weight in ranking."""
    return sum(p.idf[t] * p.weight.get(t, 1.0) for t in terms)


def _df(conn: sqlite3.Connection, stem: str) -> int:
    row = conn.execute("SELECT doc FROM chunks_vocab WHERE term = ?", [stem]).fetchone()
    return row[0] if row else 0


def _postings(conn: sqlite3.Connection, term: str, df: int, total: int) -> dict[int, float]:
    """Every chunk holding ``term`` with its weighted bm25 (positive: higher is better).

    Computing bm25 is most of FTS5's time per row. A term in more than EXACT_DF chunks
    has a small idf, so it contributes FTS5's own idf for one body occurrence instead,
    from a plain doclist scan: on 100,000 chunks that is 3x faster, and on the ruler's
    corpus no kept term is that common, so its ranking is unchanged.
    """
    match = [q.quote(term)]
    if df <= EXACT_DF:
        return dict(conn.execute(f"SELECT rowid, -{BM25} FROM chunks_fts WHERE chunks_fts MATCH ?", match))
    flat = max(1e-6, math.log((max(total, df) - df + 0.5) / (df + 0.5))) * WEIGHTS["body"]
    return dict.fromkeys((r for (r,) in conn.execute("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?", match)), flat)


def _idf(total: int, df: int) -> float:
    return math.log((total - df + 0.5) / (df + 0.5) + 1.0)


@dataclass
class Found:
    hits: list[Hit]
    evidence: evidence.Evidence
    plan: Plan | None = None


def search(conn: sqlite3.Connection, text: str, gems: list[int], limit: int = 10) -> list[Hit]:
    """The ranking alone, without the evidence gate."""
    return run(conn, text, gems, limit).hits


def run(conn: sqlite3.Connection, text: str, gems: list[int], limit: int = 10) -> Found:
    """Assess the evidence and rank; whether to refuse is the caller's decision (ask.py)."""
    scope = Scope(conn, gems)
    if not scope:
        return Found([], evidence.assess([], [], {}, set(), 0.0, False))
    p = plan(conn, text, scope.store_chunks)
    p.gems = gems_named(text, scope.names) if NAMED_GEM_FACTOR != 1.0 else set()
    p.fit = gem_fit(conn, p, scope)
    scores, matched, held = _score(p, scope)
    top = max(max(scores.values(), default=1.0), 1.0)  # boosts are relative to the best score
    ident = q.identifier(text)
    named = _boost_identifier(conn, ident, scope, scores, top) if ident else {}
    in_bundle = _in_bundle(p, scores)
    own = own_names(conn, text, [t for t in p.terms if t not in in_bundle], scope)
    found = _assess(p, in_bundle, held, exact=any(named.values()), own=own)
    p.named = _weigh_named(conn, q.named_asked(text) if NAMED_ASKED_ONLY else q.named_in(text), scores)
    phrases = q.versions(text)
    _boost_versions(conn, q.owned_versions(text), scope, scores, top)
    best = heapq.nsmallest(max(limit * 5, POOL), scores, key=lambda r: (-scores[r], r))
    release = LOCKED_RELEASE_FACTOR != 1.0 and bool(UPGRADE.search(text))
    hits = _with_priors(fetch(conn, best, scores, matched), bool(phrases) or release, p, release)
    return Found(best_per_citation(hits)[:limit], found, p)


def gems_named(text: str, names: list[str]) -> set[str]:
    """The gems of the bundle a question names: by full name (``Sidekiq``, ``rack-test``, ``Active
    Record``), or by the first part of a family's names (``kaminari`` for kaminari-core and
    kaminari-activerecord) when two or more gems of the bundle share it."""
    words = q.TERM.findall(text[: q.MAX_QUERY_CHARS].lower())
    said = set(words) | {"".join(words[i : i + n]) for n in (2, 3) for i in range(len(words) - n + 1)}
    first = [re.split(r"[-_]", n)[0] for n in names]
    families = {f for f in first if first.count(f) > 1}
    return {n for n, f in zip(names, first) if re.sub(r"[-_]", "", n) in said or (f in families and f in said)}


def own_names(conn: sqlite3.Connection, text: str, missing: list[str], scope: Scope) -> set[str]:
    """The question's names of the user's own code: a CamelCase compound no chunk of the bundle holds
    (``missing``; other gems of the shared store do not count),
    whose last word ends the name of a class or module the bundle documents, as Rails names an
    app's classes after what they are (``ReportJob``: ``Sidekiq::Job``; ``OrdersController``:
    ``ActionController``). ``PaperTrail`` or ``ViewComponent`` end like nothing documented."""
    absent = {t: last for t, last in q.compound_names(text).items() if t in missing}
    return {t for t, last in absent.items() if _ends_a_class(conn, last, scope)}


def written(conn: sqlite3.Connection, word: str, scope: Scope, exact: bool = False) -> bool:
    """Whether a chunk of the bundle has ``word``'s terms in a row (``max_attempts``, ``Sidekiq::Batch``);
    ``exact``: whether a passage's text writes ``word`` itself, as a whole word (``Retry#retry`` is not
    written by ``Retry#retry_on``, nor by a title)."""
    words = q.TERM.findall(word.lower())
    if not words:
        return False
    phrase = '"' + " ".join(words) + '"'
    if not exact:
        rows = conn.execute("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?", [phrase])
        return any(r in scope for (r,) in rows)
    rows = conn.execute("SELECT c.id, c.body FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid "
                        "WHERE chunks_fts MATCH ? AND instr(c.body, ?) > 0", ["{body} : " + phrase, word])  # fmt: skip
    whole = re.compile(rf"(?<!\w){re.escape(word)}(?!\w)")
    return any(r in scope and whole.search(body) for r, body in rows)


def _ends_a_class(conn: sqlite3.Connection, last: str, scope: Scope) -> bool:
    """Whether a class or module of the bundle has a name whose last word is ``last`` (``Job``)."""
    rows = conn.execute("SELECT id, title FROM chunks WHERE name GLOB ? AND source_type = 'ri' "
                        "AND kind IN ('class', 'module')", [f"*{last.lower()}"])  # fmt: skip
    return any(r in scope and q.HUMP.findall(title.rsplit("::", 1)[-1])[-1:] == [last] for r, title in rows)


def gem_prior(p: Plan, gem: str) -> float:
    return NAMED_GEM_FACTOR if gem in p.gems else 1.0


def gem_fit(conn: sqlite3.Connection, p: Plan, scope: Scope) -> dict[str, float]:
    """Each gem's factor: how well its profile fits the question's words (roles.fit), times its
    size prior. Only the keyword ranking applies it (_with_priors): on fused ranks it cost hit@3."""
    fit = roles.fit(conn, p.terms, scope.entries)
    if SIZE_POWER and scope.sizes:
        sizes = sorted(scope.sizes.values())
        median = max(sizes[len(sizes) // 2], 1)
        for gem, size in scope.sizes.items():
            fit[gem] = fit.get(gem, 1.0) * (max(size, 1) / median) ** -SIZE_POWER
    return fit


def _with_priors(hits: list[Hit], versions_asked: bool, p: Plan, release: bool) -> list[Hit]:
    """Documentation answers better than a bare signature, docs better than change notes, a gem
    the question names or describes better than the rest (and a big gem a little less), and for
    a question about an upgrade (``release``) the notes of the locked version better than any other."""
    for hit in hits:
        hit.score *= gem_prior(p, hit.gem) * p.fit.get(hit.gem, 1.0)
        if release and locked_release(hit):
            hit.score *= LOCKED_RELEASE_FACTOR
        if hit.source_type == "ri" and not hit.body:
            hit.score *= DOCLESS_PRIOR
        elif hit.source_type == "changelog" and not versions_asked:
            hit.score *= CHANGELOG_PRIOR
    return sorted(hits, key=lambda h: (-h.score, h.id))


def locked_release(hit: Hit) -> bool:
    """Prose whose heading names the very version of the gem this bundle locks (``5.15.0``, ``3.2.5 - 2021-04-05``)."""
    named = re.search(rf"(?<![\w.]){re.escape(hit.version)}(?![\w]|\.\d)", hit.heading)
    return hit.source_type != "ri" and named is not None


def _in_bundle(p: Plan, scores: dict[int, float]) -> set[str]:
    """The terms a chunk in scope holds (``scores`` has every such chunk matching a kept term)."""
    return {t for t in p.kept if any(r in scores for r in p.postings[t])} | {t for t in p.ubiquitous if t in p.idf}


def _assess(p: Plan, in_bundle: set[str], held: float, exact: bool, own: set[str]) -> evidence.Evidence:
    """``held``: the most rarity of kept terms one passage in scope holds. Kept terms are either
    all distinctive or (when none is) all ubiquitous, and then no distinctive rarity is held."""
    rarity = {t: p.idf.get(t, p.absent_idf) for t in p.terms}
    distinctive = [t for t in p.terms if t not in p.ubiquitous]
    total = sum(rarity[t] for t in distinctive) or 1.0
    share = held / total if p.kept and p.kept[0] in distinctive else 0.0
    return evidence.assess(p.terms, p.ubiquitous, rarity, in_bundle, share, exact, aside=p.aside, own=own)


def _score(p: Plan, scope: Scope) -> tuple[dict[int, float], dict[int, list[str]], float]:
    """Scores and matched terms of the chunks in scope, and the most rarity one passage of them holds."""
    sums: dict[int, float] = {}
    rarity: dict[int, float] = {}
    matched: dict[int, list[str]] = {}
    weighed: dict[int, float] = {}
    for term in p.kept:
        idf, weight = p.idf[term], p.weight.get(term, 1.0)
        for rowid, score in p.postings[term].items():
            if rowid in sums:
                sums[rowid] += score * weight
                rarity[rowid] += idf
                weighed[rowid] += idf * weight
                matched[rowid].append(term)
            else:
                sums[rowid], rarity[rowid], weighed[rowid], matched[rowid] = score * weight, idf, idf * weight, [term]
    total_idf = weighed_idf(p, p.kept) or 1.0
    scores = {r: sums[r] * (weighed[r] / total_idf) ** COVERAGE_POWER for r in scope.keep(sums)}
    return scores, matched, passage_held(scope.passages, scores, rarity, matched, p.idf)


def passage_held(runs: list[tuple[int, int]], rows: Collection[int], rarity: dict[int, float],
                 matched: dict[int, list[str]], idf: dict[str, float]) -> float:
    """The most rarity of the question's terms one passage holds: one chunk, or one run of chunks cut
    from a long ri comment (``runs``, in order). The evidence gate's concentration is then the same
    however finely such a comment is cut for ranking. ``rows``: the matching chunks in scope;
    ``rarity``: each one's own."""
    best = max((rarity[r] for r in rows), default=0.0)
    if not runs:
        return best
    starts = [first for first, _ in runs]
    together: dict[int, set[str]] = {}
    for rowid in rows:
        i = bisect.bisect_right(starts, rowid) - 1
        if i >= 0 and rowid <= runs[i][1]:
            together.setdefault(i, set()).update(matched[rowid])
    return max([best, *(sum(idf[t] for t in terms) for terms in together.values())])


def _boost_versions(conn: sqlite3.Connection, owned: list[tuple[str, str]], scope: Scope, scores: dict,
                    top: float) -> None:
    """A version number is an identifier: chunks whose title holds it come first. As a whole version
    or the series it opens ("6.1" in "6.1.4"), not the tail of another (rake's "0.6.1" for "Rails 6.1");
    and when the word before it names a gem of the bundle, only in that gem's docs (version_owners)."""
    for phrase, word in owned:
        rows = conn.execute("SELECT c.id, c.title, c.gem FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid "
                            "WHERE chunks_fts MATCH ?", [f"title:{q.quote(phrase)}"])  # fmt: skip
        whole = version_in_title(phrase)
        owners = version_owners(conn, word, scope) if VERSION_OWNERS else set()
        for rowid, title, gem in rows:
            if rowid in scope and (not WHOLE_VERSIONS or whole.search(title.lower())) and (not owners or gem in owners):
                scores[rowid] = scores.get(rowid, 0.0) + NAME_BONUS * top


def version_owners(conn: sqlite3.Connection, word: str, scope: Scope) -> set[str]:
    """The gems a version number written after ``word`` is a version of, when ``word`` names a gem of the
    bundle: that gem and every gem it locks at the same version ("Rails 6.1": rails and its
    frameworks, released together). Empty when ``word`` names none: the version may be any gem's."""
    if not word:
        return set()
    marks = ",".join("?" * len(scope.entries))
    rows = conn.execute(f"SELECT name, version FROM gems WHERE id IN ({marks})", list(scope.entries)).fetchall()
    named = {version for name, version in rows if re.sub(r"[-_]", "", name.lower()) == word}
    return {name for name, version in rows if version in named}


def version_in_title(phrase: str) -> re.Pattern:
    """A version (terms.versions' phrase, ``6 1``) written in a lower-cased title: not after a digit or
    a dot, and not followed by more digits ("6.1" is in "rails 6.1.4" and "v6.1", not in "0.6.1" or "16.1")."""
    return re.compile(r"(?<![\d.])" + r"[.\-]".join(map(re.escape, phrase.split())) + r"(?!\d)")


def _weigh_named(conn: sqlite3.Connection, named: q.Named, scores: dict) -> set[int]:
    """Entries of the APIs the question names, already matching the question, count more; returns them.
    When ``FileList resolve`` names a method, the method is asked about, not all of FileList."""
    weighed: set[int] = set()
    owners = {word for word, ident in named.pairs if _weigh(conn, ident, scores, weighed)}
    for word, ident in named.words:
        if word not in owners:
            _weigh(conn, ident, scores, weighed)
    return weighed


def _weigh(conn: sqlite3.Connection, ident: q.Identifier, scores: dict, weighed: set[int]) -> bool:
    """``Sidekiq::Job`` names that class (or ``X::Sidekiq::Job`` when no entry is exactly it), not every
    method called ``job``. Adds the entries to ``weighed``."""
    found = entries_named(conn, ident, scores)
    for rowid in found:
        scores[rowid] *= NAMED_FACTOR
    weighed.update(found)
    return bool(found)


def _boost_identifier(
    conn: sqlite3.Connection, ident: q.Identifier, scope: Scope, scores: dict, top: float
) -> dict[int, bool]:
    """An API named exactly comes first; a documented entry before an empty reopening of it.
    Returns the boosted chunks, each with whether it is the API under exactly the name asked."""
    named = {}
    for rowid, title, documented in ri_entries(conn, ident.name):
        if rowid in scope:
            named[rowid] = title in ident.full_names
            bonus = EXACT_BONUS if named[rowid] else NAME_BONUS
            scores[rowid] = scores.get(rowid, 0.0) + bonus * top * (1.0 if documented else 0.5)
    return named


EXACT_NAMES_FIRST = True  # an entry under exactly the full name given is named, not its namesakes elsewhere


def entries_named(conn: sqlite3.Connection, ident: q.Identifier, among: Container[int]) -> list[int]:
    """The API entries ``among`` the given ids that ``ident`` names: under that full name, else with it
    as the tail of theirs (``Template#expand`` names ``Addressable::Template#expand``). A full name
    some entry bears exactly names that entry, not a copy under another namespace
    (``Rack::Builder#map`` is not Puma's vendored ``Puma::Rack::Builder#map``)."""
    suffixes = tuple(f"{sep}{spelling}" for spelling in ident.full_names for sep in ("::", "#"))
    rows = [(r, title) for r, title, _ in ri_entries(conn, ident.name) if r in among]
    exact = [r for r, title in rows if title in ident.full_names]
    if exact and EXACT_NAMES_FIRST:
        return exact
    return [r for r, title in rows if title in ident.full_names or title.endswith(suffixes)]


# Owner#method, Owner::method, Owner.method
METHOD_NAME = re.compile(rf"^(.*[A-Za-z0-9_])(?:#|::|\.)({q.METHOD})$")


def entries_akin(conn: sqlite3.Connection, name: str, among: Container[int]) -> list[int]:
    """The entries a method's full name points at when RDoc files it elsewhere: as the other kind
    (``Rack::Utils#escape_html`` documented as ``Rack::Utils::escape_html``), else in a module under
    the owner's namespace that defines it (``Zeitwerk::Loader#push_dir`` is
    ``Zeitwerk::Loader::Config#push_dir``), else in one beside the owner, under its parent
    (``ActiveRecord::Base#with_lock`` is ``ActiveRecord::Locking::Pessimistic#with_lock``; AKIN_SIBLINGS),
    or for a ``ClassMethods`` owner on the parent itself (``ActiveStorage::Attached::Model#has_one_attached``):
    only when the bundle documents the owner (for ``ClassMethods``, its parent), so that a class these
    versions lack (``Sidekiq::Batch``) does not borrow a method beside it.
    For a name that picks no entry as written. RDoc files a class's ``initialize`` as its own ``::new``."""
    match = METHOD_NAME.match(name)
    if not match:
        return []
    constructor = match[2] == "initialize"
    owner, method = match[1], "new" if constructor else match[2]
    rows = _method_rows(conn, method, among)
    same_owner = _same_owner(rows, owner, method)
    if same_owner or constructor:  # an inner class's ::new is another class's constructor
        return same_owner
    found = _modules_under(conn, rows, owner, method, among)
    if found or not AKIN_SIBLINGS or "::" not in owner:
        return found
    parent = owner.rsplit("::", 1)[0]
    concern = owner.endswith("::ClassMethods")
    if not documented_as(conn, {parent if concern else owner}, among, ("class", "module")):  # not Sidekiq::Batch (Pro)
        return []
    own = _same_owner(rows, parent, method) if concern else []
    return own or _modules_under(conn, rows, parent, method, among)


def _modules_under(conn: sqlite3.Connection, rows: list[tuple[int, str]], owner: str, method: str,
                   among: Container[int]) -> list[int]:
    """Of ``rows``, the method as a module under ``owner`` defines it, not a class nested in it."""
    inner = re.compile(rf"{re.escape(owner)}(?:::\w+)+(?:#|::){re.escape(method)}")
    found = {r: _nested(owner, METHOD_NAME.match(title)[1]) for r, title in rows if inner.fullmatch(title)}
    nested = {n for names in found.values() for n in names}
    classes = documented_as(conn, nested, among, ("class",)) if AKIN_MODULES else set()
    return [r for r, names in found.items() if not classes.intersection(names)]


def _nested(owner: str, inner: str) -> list[str]:
    """The namespaces from ``owner`` down to ``inner``, below ``owner``: ``A``, ``A::B::C`` -> ``A::B``, ``A::B::C``."""
    below = inner[len(owner) + 2 :].split("::")
    return ["::".join([owner, *below[: i + 1]]) for i in range(len(below))]


def documented_as(conn: sqlite3.Connection, names: set[str], among: Container[int],
                  kinds: tuple[str, ...]) -> set[str]:
    """Which of the full ``names`` the bundle documents as one of ``kinds``. As a class: a class nested
    in the owner (``Redis::Distributed``), or a module inside such a class, is another object's, whose
    methods the owner's instances do not have; as a class or module: an owner the bundle has."""
    short = sorted({n.split("::")[-1].lower() for n in names})  # chunks.name is indexed; titles are not
    marks, kind_marks = ",".join("?" * len(short)), ",".join("?" * len(kinds))
    sql = f"SELECT id, title FROM chunks WHERE name IN ({marks}) AND source_type = 'ri' AND kind IN ({kind_marks})"
    rows = conn.execute(sql, [*short, *kinds]).fetchall() if short else []
    return {title for r, title in rows if title in names and r in among}


def entries_other_kind(conn: sqlite3.Connection, name: str, among: Container[int]) -> list[int]:
    """The entries of the method a full name writes as the other kind, its owner the same
    (``ERB::Util#html_escape`` documented as ``ERB::Util::html_escape``): the first half of entries_akin."""
    match = METHOD_NAME.match(name)
    if not match or match[2] == "initialize":
        return []
    return _same_owner(_method_rows(conn, match[2], among), match[1], match[2])


def _method_rows(conn: sqlite3.Connection, method: str, among: Container[int]) -> list[tuple[int, str]]:
    """The entries ``among`` these ids with the method's short name: id and full name."""
    return [(r, title) for r, title, _ in ri_entries(conn, method.lower()) if r in among]


def _same_owner(rows: list[tuple[int, str]], owner: str, method: str) -> list[int]:
    return [r for r, title in rows if title in (f"{owner}#{method}", f"{owner}::{method}")]


def ri_entries(conn: sqlite3.Connection, name: str) -> list[tuple[int, str, bool]]:
    """Every API entry with this short name: id, full name, and whether it has a comment."""
    return conn.execute("SELECT id, title, body != '' FROM chunks WHERE name = ? AND source_type = 'ri'", [name]).fetchall()


def explain(conn: sqlite3.Connection, p: Plan, hits: list[Hit]) -> dict[int, dict]:
    """Per hit: the question's terms it holds, each field's bm25 share, the coverage factor, and its
    gem's factor (gem_fit: role and size)."""
    ids = [h.id for h in hits]
    fields: dict[int, dict[str, float]] = {i: {} for i in ids}
    if p.kept:
        marks = ",".join("?" * len(ids))
        for column in FTS_COLUMNS:
            weights = ", ".join(str(WEIGHTS[c]) if c == column else "0" for c in FTS_COLUMNS)
            rows = conn.execute(
                f"SELECT rowid, -bm25(chunks_fts, {weights}) FROM chunks_fts "
                f"WHERE chunks_fts MATCH ? AND rowid IN ({marks})",
                [q.any_of(p.kept), *ids],
            )
            for rowid, value in rows:
                fields[rowid][column] = round(value, 4)
    kept_idf = weighed_idf(p, p.kept) or 1.0
    out = {}
    for hit in hits:
        share = weighed_idf(p, [t for t in hit.matched if t in p.kept]) / kept_idf
        out[hit.id] = {"matched": hit.matched, "fields": fields.get(hit.id, {}), "coverage": round(share, 4),
                       "coverage_factor": round(share**COVERAGE_POWER, 4),
                       "gem_factor": round(p.fit.get(hit.gem, 1.0), 4)}  # fmt: skip
    return out


def fetch(conn: sqlite3.Connection, ids: list[int], scores: dict, matched: dict) -> list[Hit]:
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


def citation(hit: Hit) -> tuple:
    """What one citation is: a gem's file and the ri title (a long comment's sections are one) or the
    prose heading (a long section's pieces are one)."""
    return hit.gem, hit.file, hit.title if hit.source_type == "ri" else hit.heading


def best_per_citation(hits: list[Hit]) -> list[Hit]:
    seen: set[tuple] = set()
    best = []
    for hit in hits:
        key = citation(hit)
        if key not in seen:
            seen.add(key)
            best.append(hit)
    return best

"""`gemdoc query` and `gemdoc vsearch`: the vector arm, and its fusion with the keyword arm.

A query may carry typed sub-queries, one per line or inline: ``lex: ...`` goes to the
keyword arm only, ``vec: ...`` to the vector arm only, ``hyde: ...`` (a hypothetical
answer passage) is embedded as a document and goes to the vector arm; untyped text goes
to both. Every ranked list is fused with reciprocal rank fusion, k = 60, by citation: the pieces of
one long comment or section that different arms found are one result, with every arm's vote.
"""

import re
import sqlite3
from dataclasses import dataclass, field

from gemdoc import terms, vectors
from gemdoc.evidence import Evidence
from gemdoc import search as searcher

RRF_K = 60
# The keyword arm's first place stays first; the fusion orders what follows. With all-MiniLM-L6-v2
# the vector arm alone ranks the accepted answer first 0.22 of the time against the keyword arm's
# 0.48, and where the two disagree about first place each is right about as often: measured on the
# ruler with both builds (benchmarks/fusion_rules.py), plain fusion loses first places and keeping
# the keyword arm's gives the same hit@1 as `search` with a better MRR, hit@3 and hit@10.
KEYWORD_FIRST = True
# ...only when it is a clear first (its score at least FIRST_MARGIN times the keyword arm's second; 1.0:
# always) or the query is an identifier alone (see first_place). A long question in users' words often
# gives the keyword arm a weak, narrow first, and then the first place both arms agree on is the better bet.
FIRST_MARGIN = 1.5
# ...and when the question names it (search._weigh_named): the API asked about is no narrow guess.
# Measured by benchmarks/rank_rules.py (named_clear).
NAMED_CLEAR = True
UNCLEAR_PLACE = 2  # where an unclear keyword first goes: second, under the fusion's first (0: wherever fusion puts it)
# Measured by benchmarks/rank_rules.py (questions mostly in users' words): query hit@1 +0.017 on dev and +0.073
# on test against always pinning, MRR +0.010 and +0.031.
# A question about a release ("since upgrading", "changed in 3.5.3") weighs the notes of the locked
# version LOCKED_RELEASE_FACTOR times in the fusion too: the vector arm cannot tell one release's
# notes from another's, and fused ranks lost the keyword arm's preference (rank_rules.py, locked_release).
ARM_DEPTH = 50  # how deep each arm's list goes into the fusion
# A typed query's ``lex:`` part names APIs by their full names (``Sidekiq::ScheduledSet``,
# ``Addressable::Template#expand``, ``Metrics/MethodLength``) or by method names that read as code
# (``on_worker_boot``): the entries the bundle documents under exactly those names (when a name picks
# one entry) come first, in the order named.
# Measured by benchmarks/rank_rules.py on the agent forms.
NAMED_FIRST = True
# A full name that picks no entry as written names the one RDoc files elsewhere: the other kind of
# method, or the module under the owner that defines it (search.entries_akin). Agents name a method
# on the class they call it on (``Zeitwerk::Loader#push_dir``), not where RDoc documents it.
AKIN_NAMES = True
# After the named entries, the question's own words (its untyped part) keep their keyword first place
# by first_place (NAMED_CLEAR is not applied there, nor measured): a typed query adds guesses, it does not
# outvote the question. Like every pin it goes no lower than that place, higher where fusion ranks it higher.
# Version questions gain most: the vector arm cannot tell 13.0.6's notes from 0.9.6's.
QUESTION_FIRST = True
# In a typed query whose own words (any part but ``lex:``) ask about a release ("is that in the release we have
# locked", "what changed in 3.5.3"), the notes of the locked version go first when the fusion ranks them within
# the first RELEASE_NOTES_FIRST (0: off): the APIs an agent names for such a question are where the change
# lives, the notes are what it asked. The query's lex: names do not count ("Semaphore#release").
# Measured on the ruler's agent forms (benchmarks/ruler.py): hit@1 dev 0.848 -> 0.858, test 0.842 -> 0.849; on a
# query of one part (verbatim `query`) dev gained a question and test lost one, so it is for typed queries only.
# Listed in benchmarks/rank_rules.py (release_notes_first), whose results predate it.
RELEASE_NOTES_FIRST = 3
QUALIFIED = re.compile(r"::|#|\w\.\w|^[A-Z]\w+/[A-Z]\w+$")
BARE_METHOD = re.compile(r"^[a-z]\w*_\w+[?!=]?$")  # a method name alone that reads as code: ``on_worker_boot``
TYPED = re.compile(r"(?:^|\s)(lex|vec|hyde):[ \t]*", re.I)  # an empty part never swallows the next line


@dataclass
class Fused:
    mode: str  # hybrid | keyword | vector
    hits: list[searcher.Hit]
    arms: dict[int, dict[str, int]] = field(default_factory=dict)  # shown chunk id -> {arm: its citation's best rank}
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
    query = embedder.embed_part(text, as_document)
    ranked = matrix.rank(query, depth * 3)
    scores = dict(ranked)
    hits = searcher.fetch(conn, [i for i, _ in ranked], scores, {})
    return searcher.best_per_citation(hits)[:depth]


def query(
    conn: sqlite3.Connection, text: str, gems, limit: int, embedder=None, matrix=None
) -> Fused:
    """Hybrid when a model and vectors are there; the keyword arm alone, saying so, when not.

    The keyword arm's evidence comes back with the results; ask.py judges it (with each typed part
    and the vectors) and refuses for every arm, since a model always finds a nearest neighbour."""
    parts = parse(text) or [(None, text)]
    vector_ready = embedder is not None and matrix is not None and len(matrix) > 0
    mode = "keyword" if not vector_ready else "hybrid" if any(k in (None, "lex") for k, _ in parts) else "vector"
    whole = searcher.run(conn, " ".join(body for _, body in parts), gems, ARM_DEPTH)
    lists: list[tuple[str, list[searcher.Hit]]] = []
    untyped: list[searcher.Hit] = []
    for kind, body in parts:
        if kind in (None, "lex"):
            hits = whole.hits if len(parts) == 1 else searcher.search(conn, body, gems, ARM_DEPTH)
            lists.append(("keyword", hits))
            if kind is None:
                untyped = hits
        if kind in (None, "vec", "hyde") and vector_ready:
            lists.append(("vector", vector_hits(conn, matrix, embedder, body, kind == "hyde", ARM_DEPTH)))
    one_keyword_part = len(parts) == 1 and parts[0][0] in (None, "lex")
    pinned: list[tuple[searcher.Hit, int]] = []
    if KEYWORD_FIRST and one_keyword_part and whole.hits:
        place = keyword_place(whole, text)
        pinned = [(whole.hits[0], place)] if place else []
    elif NAMED_FIRST and len(parts) > 1:
        named = named_entries(conn, " ".join(body for kind, body in parts if kind == "lex"), gems)
        pinned = [(hit, place) for place, hit in enumerate(named, start=1)]
        fresh = QUESTION_FIRST and untyped and untyped[0].id not in {hit.id for hit in named}
        place = first_place(untyped, parts[0][1]) if fresh else 0
        pinned += [(untyped[0], len(named) + place)] if place else []
    notes_asked = len(parts) > 1 and asks_release(" ".join(body for kind, body in parts if kind != "lex"))
    return _fuse(mode, lists, limit, whole, pinned, asks_release(" ".join(body for _, body in parts)), notes_asked)


def asks_release(text: str) -> bool:
    """Whether a query asks about a release: an upgrade word (search.UPGRADE) or a version number."""
    return searcher.LOCKED_RELEASE_FACTOR != 1.0 and bool(searcher.UPGRADE.search(text) or terms.versions(text))


def named_entries(conn: sqlite3.Connection, text: str, gems) -> list[searcher.Hit]:
    """The API entries ``text`` names, one per name, in the order named: by full name
    (``Addressable::Template#expand``), or by a method name that reads as code (``on_worker_boot``).
    A name matching more than one API of the bundle picks none."""
    scope = searcher.Scope(conn, gems)
    words = list(dict.fromkeys(terms.token(w, ",;:()[]'\"`") for w in text[: terms.MAX_QUERY_CHARS].split()))
    ids: list[int] = []
    for word in words:
        rows = _entries(conn, word, scope) or _entries(conn, word.rstrip("?"), scope)  # `empty?`, or a sentence's end
        rows = one_per_api(conn, rows)
        if len(rows) == 1 and rows[0] not in ids:
            ids.append(rows[0])
    found = {hit.id: hit for hit in searcher.fetch(conn, ids, {i: 0.0 for i in ids}, {})}
    return [found[i] for i in ids if i in found]


def one_per_api(conn: sqlite3.Connection, rows: list[int]) -> list[int]:
    """``rows`` less the second entry RDoc keeps for one API: an attribute's reader documented as a
    method and its ``attr_writer`` share a gem version and a full name
    (``ActiveSupport::Deprecation::Disallowed#disallowed_warnings``), and name one API."""
    if len(rows) < 2:
        return rows
    marks = ",".join("?" * len(rows))
    found = conn.execute(f"SELECT id, entry, title FROM chunks WHERE id IN ({marks}) ORDER BY id", rows)
    first: dict[tuple, int] = {}
    for chunk_id, entry, title in found:
        first.setdefault((entry, title), chunk_id)
    return sorted(first.values())


def _entries(conn: sqlite3.Connection, word: str, scope: searcher.Scope) -> list[int]:
    """The entries of the bundle one word of a ``lex:`` part names."""
    if BARE_METHOD.match(word):
        return [r for r, _, _ in searcher.ri_entries(conn, word.lower()) if r in scope]
    ident = terms.identifier(word.replace("/", "::")) if QUALIFIED.search(word) else None
    if ident is None:
        return []
    named = searcher.entries_named(conn, ident, scope)
    return named if named or not AKIN_NAMES else searcher.entries_akin(conn, word, scope)


def keyword_place(whole: searcher.Found, text: str) -> int:
    """Where the keyword arm's first result goes in a query of one part: first when the question
    names it (an API of its sentence that asks, search._weigh_named: ``what does FileList resolve
    do``), else as first_place says."""
    named = NAMED_CLEAR and bool(whole.hits) and whole.plan is not None and whole.hits[0].id in whole.plan.named
    return 1 if named else first_place(whole.hits, text)


def first_place(hits: list[searcher.Hit], text: str) -> int:
    """Where the keyword arm's first result goes: first when it is clear, or when the query is an
    identifier alone (the API named exactly is what was asked for, however close its namesakes in
    other gems score); else UNCLEAR_PLACE."""
    return 1 if _clear_first(hits) or terms.identifier(text) else UNCLEAR_PLACE


def _clear_first(hits: list[searcher.Hit]) -> bool:
    return bool(hits) and (len(hits) == 1 or hits[0].score >= FIRST_MARGIN * hits[1].score)


def _fuse(mode: str, lists, limit: int, whole: searcher.Found, pinned: list[tuple[searcher.Hit, int]],
          release: bool = False, notes_asked: bool = False) -> Fused:
    """Reciprocal rank fusion by citation (_votes); each ``pinned`` hit's citation (the keyword arm's
    first place, or an API the query names) takes the place given with it, or stays where fusion put
    it when that is higher. ``whole`` is the keyword arm's reading of the whole question (its evidence
    and plan); for a question about a ``release``, the locked version's notes weigh more, and when
    the query's own words ask about one (``notes_asked``) they go first (notes_first)."""
    fused, shown, arms = _votes(lists)
    for key, hit in shown.items():
        fused[key] *= searcher.gem_prior(whole.plan, hit.gem) if whole.plan else 1.0
        if release and searcher.locked_release(hit):
            fused[key] *= searcher.LOCKED_RELEASE_FACTOR
    order = _placed(fused, shown, pinned)
    if notes_asked:
        notes_first(order, shown)
    result = [shown[key] for key in order]
    for at in range(len(result) - 1, -1, -1):  # scores stay in order, whatever moved
        below = fused[order[at + 1]] + 1e-6 if at + 1 < len(order) else 0.0
        result[at].score = max(fused[order[at]], below)
        fused[order[at]] = result[at].score
    arms_of = {shown[key].id: ranks for key, ranks in arms.items()}
    return Fused(mode, result[:limit], arms_of, whole.evidence, whole.plan)


def notes_first(order: list[tuple], shown: dict[tuple, searcher.Hit]) -> None:
    """Move the best-placed notes of the locked version (search.locked_release) within the first
    RELEASE_NOTES_FIRST citations of ``order`` to the first place."""
    near = [at for at, key in enumerate(order[:RELEASE_NOTES_FIRST]) if searcher.locked_release(shown[key])]
    if near:
        order.insert(0, order.pop(near[0]))


def _votes(lists) -> tuple[dict[tuple, float], dict[tuple, searcher.Hit], dict[tuple, dict[str, int]]]:
    """Each citation's fused score: the pieces of one long comment or section that different arms
    ranked are one result with every arm's vote. Also the piece that shows it (the one ranked best,
    the keyword arm's on a tie) and each arm's best rank of any of its pieces."""
    fused: dict[tuple, float] = {}
    best: dict[tuple, tuple[tuple[int, bool], searcher.Hit]] = {}
    arms: dict[tuple, dict[str, int]] = {}
    for arm, ranked in lists:
        for rank, hit in enumerate(ranked, start=1):
            key = searcher.citation(hit)
            fused[key] = fused.get(key, 0.0) + 1.0 / (RRF_K + rank)
            if key not in best or (rank, arm != "keyword") < best[key][0]:
                best[key] = ((rank, arm != "keyword"), hit)
            ranks = arms.setdefault(key, {})
            ranks[arm] = min(ranks.get(arm, rank), rank)
    return fused, {key: hit for key, (_, hit) in best.items()}, arms


def _placed(fused: dict[tuple, float], shown: dict[tuple, searcher.Hit],
            pinned: list[tuple[searcher.Hit, int]]) -> list[tuple]:
    """The citations in fused order, each pinned one at its place, or where fusion put it when that
    is higher (a pin never moves down; of two pins of one citation, the higher place). A pinned
    citation no arm ranked joins ``fused`` (at 0) and ``shown``, for the caller's scores."""
    def by_score(keys) -> list[tuple]:
        return sorted(keys, key=lambda key: (-fused[key], shown[key].id))

    natural = {key: at for at, key in enumerate(by_score(fused), start=1)}
    places: dict[tuple, int] = {}
    for hit, place in pinned:
        key = searcher.citation(hit)
        shown.setdefault(key, hit)
        fused.setdefault(key, 0.0)
        places[key] = min(place, natural.get(key, place), places.get(key, place))
    order = by_score(key for key in fused if key not in places)
    at = -1
    for place, _, key in sorted((place, n, key) for n, (key, place) in enumerate(places.items())):
        at = max(place - 1, at + 1)  # pins sharing a place keep the order given
        order.insert(at, key)
    return order

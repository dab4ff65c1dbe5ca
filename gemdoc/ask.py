"""Asking a bundle a question: the library behind `search`, `vsearch`, `query`, `show` and the
MCP server. Each call returns the reply as data; render.py turns it into text or JSON."""

import re
import sqlite3
from dataclasses import dataclass, field, replace
from pathlib import Path

from gemdoc import evidence, hybrid, paths, project, store, uri
from gemdoc import show as shower
from gemdoc import terms as q
from gemdoc import search as searcher
from gemdoc.errors import GemdocError, UsageError
from gemdoc.evidence import Evidence

DEFAULT_MAX_CHARS = 12_000  # the whole reply; fits an agent's context with room to spare
MAX_CHARS_BOUNDS = (500, 200_000)
LIMIT_BOUNDS = (1, 100)
SURROGATE = re.compile("[\ud800-\udfff]")  # not text: no encoder, JSON writer or terminal takes it


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
    refused: bool = False  # the gate found no evidence and the caller let it refuse


NEAREST = 3  # the rejected candidates a refusal names
PLAIN_WORD = re.compile(r"[a-z][a-z0-9]*[?!]?")  # ``normalizes``: search.py reads it as a word, not a name
ELSEWHERE = 3  # the entries under other owners a note on a missing name points at (_elsewhere)
# A method named as the other kind (``Redis#initialize`` documented as ``Redis::new``) is
# named as much as written: agents rarely know which kind RDoc filed (benchmarks/evidence_bars.py)
OTHER_KIND_NAMED = True
# An option or environment variable the docs write (``RUBY_DEBUG_OPEN``) is named as an API is: a query that
# names the setting it wants in the docs' own words has evidence (benchmarks/evidence_bars.py)
OPTIONS_NAMED = True
# A lex: ``Minitest::VERSION`` under a documented namespace is no wrong guess (version_constant). Found through a
# test question (core-018); the one dev form naming one has a passage near enough to spare it (evidence_bars.py)
VERSION_CONSTANTS = True
OPTION_WORD = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
API_WORD = re.compile(
    rf"[a-z0-9]_[a-z0-9]|[a-z][A-Z]|::|#[a-z_]|\w{{2}}\.[a-z_]{{2}}|^[A-Z]\w+/[A-Z]\w+$|{q.OPERATOR_NAME}"
)


def open_bundle(root: Path) -> Bundle:
    conn = store.connect(paths.store_path())
    return Bundle(conn, project.scope(conn, root), root)


def only_gem(bundle: Bundle, name: str | None) -> Bundle:
    """The bundle narrowed to one of its gems (``--gem``); ``None`` or empty keeps it whole."""
    if not name:
        return bundle
    wanted = name.strip().lower()
    ids = [i for (gem, _), (i, state) in bundle.scope.entries.items() if gem.lower() == wanted and state == "complete"]
    if not ids:
        import difflib  # only on this error path

        names = sorted({g for g, _ in bundle.scope.entries})
        near = [g for g in names if wanted in g.lower()] or difflib.get_close_matches(wanted, names, 3, 0.6)
        hint = f" (did you mean {', '.join(near[:5])}?)" if near else ""
        raise GemdocError(f"no gem {name!r} indexed in this bundle{hint}: name a gem as Gemfile.lock spells it")
    narrowed = replace(bundle.scope, gems=ids)
    return Bundle(bundle.conn, narrowed, bundle.root)


def typed(question: str = "", api_names: list[str] | None = None, rephrasing: str = "", passage: str = "") -> str:
    """One query from its separate parts, in the CLI's typed syntax: the verbatim question goes to
    both arms, API names to the keyword arm (``lex:``), a rephrasing to the vector arm (``vec:``), a
    hypothetical passage to the vector arm embedded as a document (``hyde:``)."""
    lines = [question.strip()] if question and question.strip() else []
    names = " ".join(n.strip() for n in api_names or [] if n and n.strip())
    for kind, body in (("lex", names), ("vec", rephrasing), ("hyde", passage)):
        if body and body.strip():
            lines.append(f"{kind}: {' '.join(body.split())}")
    if not lines:
        raise GemdocError("empty query: give a question, API names, a rephrasing or a passage")
    return "\n".join(lines)


def clean(text: str) -> tuple[str, list[str]]:
    """The query as searched, and a note when it had to be cut."""
    text = SURROGATE.sub("\ufffd", text.replace("\x00", " ")).strip()  # argv's undecodable bytes, a lone \ud800
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
    found = searcher.run(bundle.conn, text, bundle.scope.gems, options.limit)
    arms = {h.id: {"keyword": i} for i, h in enumerate(found.hits, start=1)}
    named = named_apis(bundle, text)
    judged = evidence.judge([(None, found.evidence)], named, None, defined=defined_apis(bundle, text, named),
                            products=products_of([(None, text)]))
    return _finish(Reply(text, "keyword", found.hits, arms, judged, bundle, found.plan, notes), options)


def semantic(bundle: Bundle, text: str, options: Options, embedder, matrix, vector_only: bool) -> Reply:
    text, notes = clean(text)
    notes += project.outside(bundle.scope, text)
    routed = f"vec: {text}" if vector_only else text
    reply = hybrid.query(bundle.conn, routed, bundle.scope.gems, options.limit, embedder, matrix)
    parts = hybrid.parse(routed) or [(None, routed)]
    rephrased = [(kind, body) for kind, body in hybrid.parse(text) if kind == "vec"]  # the agent's, not vsearch's
    judged = _judge_parts(bundle, parts, reply.evidence, embedder, matrix, rephrased)
    return _finish(Reply(text, reply.mode, reply.hits, reply.arms, judged, bundle, reply.plan, notes), options)


def _judge_parts(bundle: Bundle, parts: list, whole: Evidence, embedder, matrix, rephrased: list) -> Evidence:
    """Each typed part judged on its own; the nearest chunk's cosine only when the words alone refuse.
    ``rephrased``: the query's own ``vec:`` parts, whose nearest chunk must come close enough."""
    if len(parts) == 1:
        lexical = [(parts[0][0], whole)]
    else:
        lexical = [(kind, searcher.run(bundle.conn, body, bundle.scope.gems, 1).evidence)
                   for kind, body in parts]  # fmt: skip
    named = named_apis(bundle, " ".join(body for _, body in parts))
    defined = defined_apis(bundle, " ".join(body for _, body in parts), named)
    code = code_of(parts)
    vectors_on = embedder is not None and matrix is not None
    floor = vectors_on and matrix.complete  # with chunks not embedded yet, nothing near may be something missed
    rephrasing = nearest_cosine(rephrased, embedder, matrix) if floor else None
    guessed, asked_missing = guessed_names(bundle, parts) if vectors_on else ([], [])  # nothing near to spare them
    asked = nearest_cosine(parts, embedder, matrix) if floor and _one_sentence(parts) else None
    found = {"code": code, "rephrasing": rephrasing, "guessed": guessed, "question": asked, "defined": defined,
             "products": products_of(parts), "asked_missing": asked_missing}
    judged = evidence.judge(lexical, named, None, **found)
    if judged.refused and vectors_on and (evidence.BARS.min_cosine <= 1 or guessed or asked_missing):
        cosine = asked if asked is not None else nearest_cosine(parts, embedder, matrix)
        judged = evidence.judge(lexical, named, cosine, **found)
    return judged


def code_of(parts: list) -> list[set[str]]:
    """Each part's terms written as code (terms.code_terms); a ``lex:`` part is all names, not prose."""
    return [q.code_terms(body, prose=kind != "lex") for kind, body in parts]


def products_of(parts: list) -> list[dict[str, str]]:
    """Each part's terms written as a technology is named (terms.product_terms: ``product``) or, in the
    user's own question (the untyped part), as a name is (terms.proper_names: ``proper``), for
    evidence.coined: a typed part capitalises its class names, not names of things."""
    return [dict.fromkeys(q.proper_names(body) if kind is None else (), "proper")
            | dict.fromkeys(q.product_terms(body), "product") for kind, body in parts]  # fmt: skip


def _one_sentence(parts: list) -> bool:
    """Whether the query is the question alone, in one sentence: no scene dilutes its vector."""
    return len(parts) == 1 and parts[0][0] is None and len(q.sentences_of(parts[0][1])) == 1


def nearest_cosine(parts: list, embedder, matrix) -> float | None:
    """The best cosine between any semantic part (untyped, ``vec:``, ``hyde:``) and a chunk of the bundle;
    None without such a part."""
    best = None
    for kind, body in parts:
        if kind == "lex" or not len(matrix):
            continue
        query = embedder.embed_part(body, kind == "hyde")
        ranked = matrix.rank(query, 1)
        if ranked:
            best = max(best or -1.0, ranked[0][1])
    return best


def named_apis(bundle: Bundle, text: str) -> list[str]:
    """The words of ``text`` that name an API (``Rack::Builder#map``, ``WhereChain``, ``where_not``,
    ``Style/StringLiterals``) the bundle documents under that name, or as the other kind of method
    (OTHER_KIND_NAMED), and the options its docs write (OPTIONS_NAMED): evidence by themselves. Unlike
    the ``lex:`` pins, not a method filed in a module under the owner (the rest of search.entries_akin):
    as evidence those answered one more absent question on dev and no answerable one
    (benchmarks/evidence_bars.py)."""
    scope = searcher.Scope(bundle.conn, bundle.scope.gems)
    found = []
    for word in api_words(text):
        entries = _entries(bundle.conn, word, scope)
        if not entries and OTHER_KIND_NAMED:
            entries = _other_kind(bundle.conn, word, scope)
        if entries:
            found.append(word if "/" not in word or _cops(bundle.conn, entries) else word.replace("/", "::"))
    return found + (_options(bundle, text, found, scope) if OPTIONS_NAMED else [])


def _other_kind(conn: sqlite3.Connection, word: str, scope: searcher.Scope) -> list[int]:
    """The entries of the method ``word`` names as the other kind (search.entries_other_kind)."""
    return next(filter(None, (searcher.entries_other_kind(conn, s, scope) for s in _spellings(word))), [])


def _options(bundle: Bundle, text: str, named: list[str], scope: searcher.Scope) -> list[str]:
    """The option and environment variable names of ``text`` (``max_attempts``, ``RUBY_DEBUG_OPEN``)
    that the bundle's docs write as such, in a passage: as evidence as an API's name."""
    words = (w.split("=")[0] for w in _tokens(text, "?!"))
    options = [w for w in dict.fromkeys(words) if OPTION_WORD.fullmatch(w) and w not in named]
    return [w for w in options if searcher.written(bundle.conn, w, scope, exact=True)]


def defined_apis(bundle: Bundle, text: str, named: list[str]) -> list[str]:
    """The words of ``text`` that name a method no entry documents but the bundle's source defines
    (``Devise::FailureApp#recall_app``, protected without a comment: definition); ``named``: the
    documented ones, not looked up again."""
    return [word for word in api_words(text) if word not in named and definition(bundle, word)]


def guessed_names(bundle: Bundle, parts: list[tuple[str | None, str]]) -> tuple[list[str], list[str]]:
    """The API names of the query's ``lex:`` parts the bundle documents nowhere, neither under that
    name nor where RDoc files it (search.entries_akin), nor defines in the source (definition), as
    (every one, when it documents none of them; the first, when it is missing and the question's own
    words write it as code, asked_by_name, whether the others are missing or not). Either way the
    agent's picture of the answer is an API these gem versions lack (``ActiveRecord::Relation#load_async``
    on Rails 6.1; "how do I use perform_all_later" with ``lex: ActiveJob::perform_all_later
    ...#perform_later``). A first
    name the agent guessed on its own, not asked for, is only a wrong guess beside right ones; so is one
    whose method another name documents under another owner (``Job#retry_on Retry#retry_on``). A name
    asked for is documented only as itself (_documented ``exact``): "a Pundit authorization" in a README
    is no ``Pundit::Authorization``. A first name that is a ``VERSION`` constant leaves the names after
    it to the first rule."""
    scope = searcher.Scope(bundle.conn, bundle.scope.gems)
    named = lex_words(parts)
    words = [w for w in named if not version_constant(bundle.conn, w, scope)]  # no guess either way
    if not words:
        return [], []
    asked = words[0] == named[0] and asked_by_name(named[0], parts)
    if _known(bundle, words[0], scope, exact=asked):  # asked for: the API itself, not its words in a row
        return [], []  # neither rule holds: the common case stops at one look-up, as the old any() did
    missing = [words[0], *(w for w in words[1:] if not _known(bundle, w, scope))]
    if missing == words:
        return words, named[:1] if asked else []  # asked for: no documented name elsewhere spares it
    found = {_last_name(w) for w in words if w not in missing}
    asked = asked and _last_name(named[0]) not in found
    return [], named[:1] if asked else []


def _known(bundle: Bundle, word: str, scope: searcher.Scope, exact: bool = False) -> bool:
    """Whether the bundle documents the API ``word`` (_documented) or its source defines it (definition)."""
    return _documented(bundle.conn, word, scope, exact) or definition(bundle, word) is not None


def _last_name(word: str) -> str:
    """The last segment of an API name, without a predicate's or writer's ending (``retry_on`` of
    ``Retry#retry_on``, ``pending`` of ``Job#pending?``)."""
    return re.split(r"::|#|\.", word)[-1].rstrip("?!=")


def asked_by_name(word: str, parts: list[tuple[str | None, str]]) -> bool:
    """Whether the question's own words (its untyped part) write the last name of the API ``word``
    (``perform_all_later`` of ``ActiveJob::perform_all_later``, ``associated`` in ``Post.where.associated``)
    as code, in a word written as an API name (api_words). Said in English ("is there a builder for
    HTML5", "when an error is raised") it is a subject the agent may have made a name of."""
    last = _last_name(word)
    if not re.search(r"\w", last):
        return False  # an operator (``Foo#[]``) is no name a sentence writes
    within = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(last)}(?![A-Za-z0-9_])")  # code ends where ASCII does
    return any(kind is None and any(map(within.search, api_words(body))) for kind, body in parts)


def version_constant(conn: sqlite3.Connection, word: str, scope: searcher.Scope) -> bool:
    """Whether ``word`` is the ``VERSION`` constant of a class or module the bundle documents
    (``Minitest::VERSION``): an agent's name for "this gem's release" when asking what changed in it,
    neither a wrong guess at an API nor evidence for the other names beside it. RDoc files constants
    inside their namespace's entry, often ``:nodoc:``, so no entry bears the name and no note says so."""
    owner, _, constant = word.rpartition("::")
    return VERSION_CONSTANTS and constant == "VERSION" and bool(
        searcher.documented_as(conn, {owner}, scope, ("class", "module")))


def lex_words(parts: list[tuple[str | None, str]]) -> list[str]:
    """The API names of a typed query's ``lex:`` parts (api_words), each once."""
    return list(dict.fromkeys(w for kind, body in parts if kind == "lex" for w in api_words(body)))


def _documented(conn: sqlite3.Connection, word: str, scope: searcher.Scope, exact: bool = False) -> bool:
    """An entry under that name or where RDoc files it, or the name written in the bundle's docs
    (``max_attempts`` in a README). The gate counts its terms in a row anywhere, so as not to refuse
    an answerable question, but for a name the question asks for (guessed_names); the note and that
    name (``exact``) only the name itself in a passage, so that ``Retry#retry`` is not taken for
    written because ``Retry#retry_on`` is. Then a name's writer or predicate documents it (``verify_partial_doubles``
    by ``…#verify_partial_doubles=``), and an attribute with a writer documents its writer: RDoc files
    ``attr_accessor :max_attempts`` under ``Retry#max_attempts``. Operators are only themselves (``==``)."""
    if exact and re.search(r"\w=$", word) and _writable(conn, _entries(conn, word[:-1], scope)):
        return True
    if exact and re.search(r"\w$", word) and any(_entries(conn, word + end, scope) for end in "=?"):
        return True
    return bool(_entries(conn, word, scope) or searcher.entries_akin(conn, word, scope)
                or searcher.written(conn, word, scope, exact))  # fmt: skip


def _writable(conn: sqlite3.Connection, ids: list[int]) -> bool:
    """Whether one of the entries ``ids`` is an attribute with a writer (``attr_accessor``, ``attr_writer``)."""
    marks = ",".join("?" * len(ids))
    rows = conn.execute(f"SELECT signature FROM chunks WHERE id IN ({marks}) AND kind = 'attribute'", ids)
    return any(not (signature or "").startswith("attr_reader") for (signature,) in rows)


def api_words(text: str) -> list[str]:
    """The words of ``text`` written as an API name (API_WORD), each once; a predicate keeps its ``?``."""
    return [w for w in dict.fromkeys(_tokens(text)) if API_WORD.search(w)]


def _tokens(text: str, also: str = "") -> list[str]:
    """The words of ``text`` (up to MAX_QUERY_CHARS), without the punctuation around them (and ``also``)."""
    return [q.token(w, ",;:()[]'\"`." + also) for w in text[: q.MAX_QUERY_CHARS].split()]


def _spellings(word: str) -> list[str]:
    """An API word as written, and without a ``?`` that ends a sentence (``what does Retry#retry_on?``)."""
    return list(dict.fromkeys((word, word.rstrip("?"))))


def _entries(conn: sqlite3.Connection, word: str, scope: searcher.Scope) -> list[int]:
    """The entries an API word names exactly (search.entries_named), as written or without a ``?``
    that ends a sentence; a cop's slash read as ``::``."""
    for spelling in _spellings(word):
        ident = q.identifier(spelling.replace("/", "::"))
        entries = searcher.entries_named(conn, ident, scope) if ident else []
        if entries:
            return entries
    return []


def unnamed(bundle: Bundle, text: str, refused: bool = False) -> list[str]:
    """Notes on the APIs the query asks for that the bundle does not document: a query that is one
    API name, written as code, or the names of a typed query's ``lex:`` parts. Undocumented is no
    entry bearing the name, none where RDoc files it, and no passage writing it
    (``allow_forgery_protection``). A name the source defines all the same (``:nodoc:``, private)
    gets a note pointing there; the rest a note that these versions document no API by that name:
    the results then only share the name's words, and an agent should not take the first for the API
    asked about; on a ``refused`` reply it says what the refusal's diagnosis cannot (which name is
    missing). A name the docs write (an option, ``max_attempts``) gets no note: the results hold it.
    Undocumented, not absent: a method defined in C or by metaprogramming can lack docs. Under
    ``--gem`` the note names that gem: another gem of the bundle may document the name. A query of
    one plain word (``normalizes``) is checked as a method or class name (plain_unnamed)."""
    parts = hybrid.parse(text)
    typed = any(kind for kind, _ in parts)
    if not typed and PLAIN_WORD.fullmatch(text.strip().strip("`")):
        return plain_unnamed(bundle, text.strip().strip("`"), refused)
    asked = lex_words(parts) if typed else _one_name(text)
    if not asked:
        return []  # a question in words, the common case, costs no store look-up
    scope = searcher.Scope(bundle.conn, bundle.scope.gems)
    missing = [w for w in asked if not _documented(bundle.conn, w, scope, exact=True)
               and not version_constant(bundle.conn, w, scope)]  # fmt: skip
    places: dict[tuple, tuple[dict, list[str]]] = {}
    for word in missing:
        if found := definition(bundle, word):
            places.setdefault((found["gem"], found["file"], found["line"]), (found, []))[1].append(word)
    lead = "lex: " if typed else ""
    notes = [lead + _defined(words, found) for found, words in places.values()]
    missing = [w for w in missing if not any(w in words for _, words in places.values())]
    if missing:
        tail = "" if typed or refused else ": the results only share its words"
        names = ", ".join(w + _elsewhere(bundle, w, scope) for w in missing)
        notes.append(f"{lead}{_whose(bundle)} no API named {names}{tail}")
    return notes


def _elsewhere(bundle: Bundle, word: str, scope: searcher.Scope) -> str:
    """Where the bundle documents the method a full name guesses at under another owner of the same
    namespace (``WebMock::API#disable_net_connect!`` is ``WebMock::disable_net_connect!``), as a
    parenthesis for the note; empty when it documents none there."""
    match = searcher.METHOD_NAME.match(word)
    if not match:
        return ""
    root = re.compile(re.escape(re.split(r"::|#|\.", match[1])[0]) + r"(?:::|#)")
    titles = [t for r, t, _ in searcher.ri_entries(bundle.conn, match[2].lower()) if r in scope and root.match(t)]
    near = list(dict.fromkeys(titles))[:ELSEWHERE]
    return f" (documented: {', '.join(near)})" if near else ""


def plain_unnamed(bundle: Bundle, word: str, refused: bool) -> list[str]:
    """The note for a query of one plain word that no method, class or module of the bundle is named
    and no source defines: an agent checking whether ``normalizes`` exists (a refusal's hint says to
    ``gemdoc search NAME``) learns that the results are passages using the word, not that API."""
    scope = searcher.Scope(bundle.conn, bundle.scope.gems)
    spellings = dict.fromkeys((word, word.rstrip("?!")))  # ``valid?`` as a name, or a word ending a question
    if any(r in scope for spelling in spellings for r, _, _ in searcher.ri_entries(bundle.conn, spelling)):
        return []
    if found := definition(bundle, word):
        return [_defined([word], found)]
    tail = "" if refused else ": the results only use the word"
    return [f"{_whose(bundle)} no method, class or module named {word}{tail}"]


def _one_name(text: str) -> list[str]:
    """The query as an API name when it is one, written as code."""
    word = text.strip().strip("`")
    if not API_WORD.search(word) or q.identifier(word.replace("/", "::")) is None:
        return []
    return [word]


def definition(bundle: Bundle, word: str) -> dict | None:
    """Where the bundle's source defines the method ``word`` names though no entry documents it (RDoc
    leaves out ``:nodoc:`` and private methods: ``Kaminari::ConfigurationMethods::ClassMethods#paginates_per``),
    by full name (the owner, a class or module under it, or one it ends) or by a method name alone;
    the first such definition, or None."""
    match = searcher.METHOD_NAME.match(word)
    owner, method = (match[1], match[2]) if match else ("", word)
    if not re.fullmatch(q.METHOD, method) or not bundle.scope.gems:
        return None
    if not store.has_table(bundle.conn, store.UNDOCUMENTED):  # a store written before the table existed
        return None
    marks = ",".join("?" * len(bundle.scope.gems))
    sql = (f"SELECT u.owner, u.file, u.line, g.name AS gem, g.version FROM {store.UNDOCUMENTED} u "
           f"JOIN gems g ON g.id = u.entry WHERE u.name = ? AND u.entry IN ({marks}) ORDER BY u.entry, u.file, u.line")
    rows = bundle.conn.execute(sql, [method, *bundle.scope.gems]).fetchall()
    return next((dict(row) for row in rows if not owner or _owns(owner, row["owner"])), None)


def _owns(named: str, owner: str) -> bool:
    """Whether a method defined in ``owner`` answers to a name given on ``named``: the same class or
    module, one whose full name ends with it, or a module under it (as search.entries_akin)."""
    return owner == named or owner.endswith("::" + named) or owner.startswith(named + "::")


def _defined(words: list[str], found: dict) -> str:
    """The note for API names no entry documents but the source defines (at one place)."""
    where = uri.make(found["gem"], found["version"], found["file"], found["line"], words[0])
    owner = f" in {found['owner']}" if found["owner"] else ""
    return (f"{', '.join(words)}: no docs (:nodoc:, private, or protected without a comment), but {found['gem']} "
            f"{found['version']} defines it{owner}: gemdoc show {where} --source")


def _whose(bundle: Bundle) -> str:
    """Who documents nothing by that name: the bundle's gem versions, or the one gem of ``--gem``."""
    scope = bundle.scope
    if len(scope.gems) == 1 and len(scope.entries) > 1:
        gem, version = next(key for key, (i, _) in scope.entries.items() if i == scope.gems[0])
        return f"{gem} {version} documents"
    return "these gem versions document"


def _cops(conn: sqlite3.Connection, entries: list[int]) -> bool:
    """Whether ``Dept/Name`` named RuboCop cops, not a class written with a slash (``Net/HTTP``): the
    slash form is what evidence.specific takes for a cop."""
    marks = ",".join("?" * len(entries))
    titles = conn.execute(f"SELECT title FROM chunks WHERE id IN ({marks})", entries).fetchall()
    return all(title.startswith("RuboCop::Cop::") for (title,) in titles)


def _finish(reply: Reply, options: Options) -> Reply:
    reply.refused = options.refuse and reply.evidence.refused
    if reply.refused:
        reply.evidence.nearest = [f"{h.gem} {h.version} {h.title}" for h in reply.hits[:NEAREST]]
        reply.hits, reply.arms = [], {}
    if options.min_score is not None:
        reply.hits = [h for h in reply.hits if h.score >= options.min_score]
    restricted = store.visibility_of(reply.bundle.conn, [h.id for h in reply.hits])  # the shown ones only
    reply.hits = [replace(h, visibility=restricted.get(h.id, "")) for h in reply.hits]
    if reply.hits or reply.refused:  # a reply --min-score emptied says nothing of names
        reply.notes += unnamed(reply.bundle, reply.query, refused=not reply.hits)
    if options.explain and reply.hits and reply.plan:
        reply.explain = searcher.explain(reply.bundle.conn, reply.plan, reply.hits)
    return reply


def show(bundle: Bundle, address_text: str, source: bool = False, context: int = 12, offset: int = 0) -> str:
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
        link = uri.make(row["gem"], row["version"], row["file"], row["line"], row["title"])
        text = shower.window(shower.whole(conn, row, entry), max(0, offset), link)
        return shower.chunk_text(row, link, text, store.visibility_of(conn, [row["id"]]).get(row["id"], ""))
    line = address.line if address.line is not None else (row["line"] if row is not None else None)
    if row is None and line is None:
        raise UsageError(f"nothing at {uri.shorten(address_text)}: no such chunk in {address.gem} {address.version}")
    if address.path is None or line is None:
        raise GemdocError(f"{uri.shorten(address_text)} has no source line: gemdoc found no Ruby definition for it")
    return shower.source_lines(conn, address, entry, line, context)

"""The keyword ranker and query builder on a real SQLite FTS5 store (no Ruby needed)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gemdoc import paths, store, terms
from gemdoc import search as searcher
from gemdoc.chunk import Chunk
from gemdoc.store import GemRecord, Writer


def ri(title, body, signature="", kind="method"):
    name = title.replace("::", "#").split("#")[-1].lower()
    return Chunk("ri", title, title, body, "lib/x.rb", 1, signature, kind, name)


def section(heading, body, file="README.md", part=""):
    return Chunk("readme", heading + part, heading, body, file, 1, kind="section", name=heading.lower())


def put(writer, name, version, chunks) -> int:
    """Store a gem; returns its entry id (what a scope holds)."""
    return writer.replace_gem(GemRecord(name, version, "/x", "gem", f"d-{name}-{version}", "complete"), chunks)[1]


def entries(conn, *gems) -> list[int]:
    """The entry ids of (name, version) pairs, each stored once in these tests."""
    return [conn.execute("SELECT id FROM gems WHERE name = ? AND version = ?", g).fetchone()[0] for g in gems]


@pytest.fixture
def conn():
    writer = Writer(paths.store_path())
    put(writer, "rack", "2.2.0", [
        ri("Rack::Utils#parse_nested_query", "Parses a query string with brackets into nested hashes.",
           "parse_nested_query(qs, separator = nil)"),
        ri("Rack::Utils#escape_html", "Escapes ampersands, brackets and quotes in HTML."),
        ri("Rack::Builder", "Builds a middleware stack for a rack application.", kind="class"),
        ri("Rack::Builder#use", "Adds a middleware to the stack."),
        section("Rack > Middleware", "How to add middleware to your application stack. " * 20, part=" · 1/2"),
        section("Rack > Middleware", "More about middleware ordering in the stack. " * 20, part=" · 2/2"),
    ])  # fmt: skip
    put(writer, "rack", "3.0.0", [ri("Rack::Utils#parse_nested_query", "Version three parser for nested query.")])
    put(writer, "hash_tools", "1.0", [
        ri("Hash#dig", "Extracts the nested value at a sequence of keys."),
        ri("Hash#[]", "Returns the value stored under a key."), ri("Hash#[]=", "Stores a value under a key."),
        ri("Hash::[]", "Makes a new hash of the given pairs."), ri("Hash#<=>", "Compares two hashes."),
    ])  # fmt: skip
    writer.close()
    connection = store.connect(paths.store_path())
    yield connection
    connection.close()


SCOPE = [1, 3]  # rack 2.2.0 and hash_tools 1.0, as the fixture stores them


def test_natural_language_question_finds_the_documented_method(conn):
    hits = searcher.search(conn, "how do I turn a query string into nested hashes", SCOPE)
    assert hits[0].title == "Rack::Utils#parse_nested_query"
    assert set(hits[0].matched) >= {"query", "string", "nested", "hashes"}


def test_only_the_projects_exact_versions_answer(conn):
    hits = searcher.search(conn, "parse_nested_query", SCOPE)
    assert [(h.gem, h.version) for h in hits if h.title.endswith("parse_nested_query")] == [("rack", "2.2.0")]
    other = searcher.search(conn, "parse_nested_query", entries(conn, ("rack", "3.0.0")))
    assert other[0].version == "3.0.0" and "three" in other[0].body


@pytest.mark.parametrize(
    "ident, expected",
    [
        ("Rack::Utils.parse_nested_query", "Rack::Utils#parse_nested_query"),
        ("Hash#dig", "Hash#dig"),
        ("#dig", "Hash#dig"),
        ("escape_html", "Rack::Utils#escape_html"),
        ("Rack::Builder", "Rack::Builder"),
        ("Hash#[]", "Hash#[]"),  # an operator method, as RDoc names it
        ("Hash#[]=", "Hash#[]="),
        ("Hash.[]", "Hash::[]"),
        ("Hash#<=>", "Hash#<=>"),
    ],
)
def test_identifiers_work_as_queries(conn, ident, expected):
    assert searcher.search(conn, ident, SCOPE)[0].title == expected


def test_best_chunk_per_citation(conn):
    hits = searcher.search(conn, "middleware stack application", SCOPE, limit=10)
    readme = [h for h in hits if h.source_type == "readme"]
    assert len(readme) == 1  # two parts of one section, one citation


def test_limit_and_empty_scope(conn):
    assert len(searcher.search(conn, "rack middleware stack", SCOPE, limit=2)) == 2
    assert searcher.search(conn, "rack", []) == []


HOSTILE = [
    '"unbalanced quote', "*", "OR", "AND NOT", "NEAR(", "a:b", "-rack", "((((", "))", "title:foo",
    "rack*", "^start", "x" * 10_000, "🙂🙂 emoji", "如何解析查询字符串", "\x00nul", "'; DROP TABLE chunks; --",
    "col:(a OR b)", "NEAR(a b, 3)", "{title}: x", ":", "-", "+", "", "   ",
]  # fmt: skip


@pytest.mark.parametrize("text", HOSTILE)
def test_nothing_a_user_types_raises(conn, text):
    searcher.search(conn, text, SCOPE)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_random_text_never_raises(text):
    conn = store.connect(paths.store_path()) if paths.store_path().exists() else None
    if conn is None:
        writer = Writer(paths.store_path())
        put(writer, "rack", "2.2.0", [ri("Rack::Utils#escape_html", "Escapes HTML.")])
        writer.close()
        conn = store.connect(paths.store_path())
    searcher.search(conn, text, entries(conn, ("rack", "2.2.0")))
    conn.close()


def test_query_terms_are_always_quoted():
    assert terms.terms('Puma::Server "OR" NEAR(x) a-b') == ["puma", "server", "or", "near", "x", "a", "b"]
    assert terms.quote('say "hi"') == '"say ""hi"""'
    assert len(terms.terms("word " * 1000 + " ".join(f"w{i}" for i in range(100)))) <= terms.MAX_TERMS


def test_identifier_recognition():
    assert terms.identifier("Rack::Utils.parse_nested_query").full_names == (
        "Rack::Utils.parse_nested_query", "Rack::Utils::parse_nested_query",
    )  # fmt: skip
    assert terms.identifier("sidekiq_options").name == "sidekiq_options"
    assert terms.identifier("Puma::Server").name == "server"
    assert terms.identifier("how do I retry") is None
    assert terms.identifier("retry") is None  # a plain word is a keyword
    assert terms.identifier("REXML::Element#[]").name == "[]" and terms.identifier("#<=>").name == "<=>"
    assert terms.identifier("[]") is None and terms.identifier("a+b") is None  # an operator needs its #, :: or .
    assert terms.identifier("#!") is None and terms.identifier("Ruby.*") is None  # a shebang, a glob: prose
    assert terms.identifier("C#!") is None and terms.identifier("Set#^").name == "^"  # a language exclaimed: prose
    assert terms.identifier("C#<=>").name == "<=>" and terms.identifier("Foo::C#!").name == "!"
    assert terms.CODE.search("I write C#!") is None and terms.CODE.search("BasicObject#!")
    for name in ("Foo::C#!", "C::D#&", "Set#^", "C::!", "C#<=>"):  # each regex reads an operator name alike
        assert terms.ENDS_IN_OPERATOR.search(name) and terms.identifier(name), name
    assert [w for w, _ in terms.named_asked("what does REXML::Element#[] return?").words] == ["REXML::Element#[]"]


def test_version_numbers_are_phrases():
    assert terms.versions("what changed in rake 13.0.6 or 7.1.rc2") == ["13 0 6", "7 1 rc2"]
    assert terms.versions("Is that in sidekiq 5.x or test-unit 3.5.3.") == ["5 x", "3 5 3"]
    assert terms.versions("bundle list says sidekiq (7.2.4)") == ["7 2 4"]


def test_numbers_in_code_or_a_quoted_message_are_no_versions():
    """``10.minutes`` and ``eq(0.9)`` are Ruby, and a quoted failure message holds values: none of them
    is a release whose notes should come first."""
    message = "expect(0.3 * 3).to eq(0.9) fails with 'expected: 0.9 got: 0.8999999999999999 (compared using ==)'"
    assert terms.versions(message) == [] and terms.owned_versions(message) == []
    assert terms.versions("retry in 10.minutes, or 3.days.ago, be_within(0.01).of(0.9)") == []
    assert terms.owned_versions('since Rails 6.1 "got 0.9 instead"') == [("6 1", "rails")]


def test_search_runs_in_any_thread(conn):
    """The MCP server answers each call in a worker thread; per-thread state must not leak across."""
    import threading

    errors = []

    def ask():
        try:
            connection = store.connect(paths.store_path())
            assert searcher.search(connection, "nested query", SCOPE)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    for _ in range(2):
        worker = threading.Thread(target=ask)
        worker.start()
        worker.join()
    assert searcher.search(conn, "nested query", SCOPE) and not errors, errors


def test_documentation_and_docs_outrank_bare_signatures_and_change_notes():
    """Two chunks that match a question alike: the one with a comment beats the bare signature,
    and the docs beat a changelog entry, unless the question names a version."""
    writer = Writer(paths.store_path())
    put(writer, "jobs", "1.0", [
        ri("Jobs::Worker#retry_later", "", "retry_later(delay)"),
        ri("Jobs::Job#retry_later", "Runs it again.", "retry_later(delay)"),
        Chunk("changelog", "1.0", "1.0", "Retry a failed job later with a delay.", "CHANGELOG.md", 1, kind="section", name="1.0"),
        section("Jobs > Failures", "A failed job can retry later with a delay; the delay grows each time, and the job gives up after its last retry."),
        *(ri(f"Jobs::Filler{i}#noop", f"Filler number {i} says nothing.") for i in range(40)),
    ])  # fmt: skip
    writer.close()
    conn = store.connect(paths.store_path())
    scope = entries(conn, ("jobs", "1.0"))
    titles = [h.title for h in searcher.search(conn, "retry later", scope)]
    assert titles.index("Jobs::Job#retry_later") < titles.index("Jobs::Worker#retry_later")
    titles = [h.title for h in searcher.search(conn, "retry a failed job later with a delay", scope)]
    assert titles.index("Jobs > Failures") < titles.index("1.0")
    assert searcher.search(conn, "retry a failed job in 1.0", scope)[0].title == "1.0"


def test_an_api_named_inside_a_question_counts_more():
    writer = Writer(paths.store_path())
    put(writer, "orm", "1.0", [
        ri("Orm::Associations#has_many", "Declares a one-to-many association. Options: dependent, through, inverse_of, class_name, foreign_key and more."),
        ri("Orm::Associations#has_one", "Declares a one-to-one association. The dependent option destroys the other record."),
        section("Options > Dependent option of many associations", "The dependent option says what happens to the many associated records."),
        *(ri(f"Orm::Filler{i}#noop", f"Filler number {i} says nothing.") for i in range(40)),
    ])  # fmt: skip
    writer.close()
    conn = store.connect(paths.store_path())
    assert searcher.search(conn, "has_many dependent option", entries(conn, ("orm", "1.0")))[0].title == "Orm::Associations#has_many"
    assert searcher.search(conn, "dependent option of has many", entries(conn, ("orm", "1.0")))[0].title.startswith("Options >")


def test_apis_named_in_a_question():
    def named(text):
        found = terms.named_in(text)
        return [i.full_names for _, i in found.words], [i.full_names for _, i in found.pairs]

    assert named("has_many dependent option") == ([("has_many",)], [])
    assert named("Sidekiq::Job as the new name for Sidekiq::Worker") == ([("Sidekiq::Job",), ("Sidekiq::Worker",)], [("Sidekiq::Job#as",)])
    assert named("what does `Hash#dig` return?") == ([("Hash#dig",)], [])
    assert named("what does FileList resolve do") == ([("FileList",)], [("FileList#resolve",)])
    assert named("has_many") == ([], []) and named("plain words only") == ([], [])
    assert named("has_many or has_many, FileList resolve FileList resolve") == ([("has_many",), ("FileList",)], [("FileList#resolve",)])


def test_a_class_and_method_named_in_prose_find_that_method():
    """``FileList resolve`` asks about the method: its owner class, also named, is not raised."""
    writer = Writer(paths.store_path())
    put(writer, "files", "1.0", [
        ri("Files::FileList", "A list of files from glob patterns; resolve expands the patterns into names.", kind="class"),
        ri("Files::FileList#resolve", "Expands the patterns."),
        *(ri(f"Files::Filler{i}#noop", f"Filler number {i} says nothing.") for i in range(40)),
    ])  # fmt: skip
    writer.close()
    conn = store.connect(paths.store_path())
    scope = entries(conn, ("files", "1.0"))
    assert searcher.search(conn, "what does FileList resolve do with glob patterns", scope)[0].title == "Files::FileList#resolve"
    assert searcher.search(conn, "what is a FileList for glob patterns", scope)[0].title == "Files::FileList"


def test_a_named_api_is_matched_on_whole_name_segments():
    writer = Writer(paths.store_path())
    put(writer, "jobs", "1.0", [
        ri("Sidekiq::Job", "A job class for background work.", kind="class"),
        ri("NotSidekiq::Job", "A job class for background work.", kind="class"),
        *(ri(f"Jobs::Filler{i}#noop", f"Filler number {i} says nothing.") for i in range(40)),
    ])  # fmt: skip
    writer.close()
    conn = store.connect(paths.store_path())
    scores = dict.fromkeys((i for (i,) in conn.execute("SELECT id FROM chunks WHERE title LIKE '%Job'")), 1.0)
    searcher._weigh_named(conn, terms.named_in("Sidekiq::Job background work"), scores)
    titles = {conn.execute("SELECT title FROM chunks WHERE id = ?", [i]).fetchone()[0]: s for i, s in scores.items()}
    assert titles == {"Sidekiq::Job": searcher.NAMED_FACTOR, "NotSidekiq::Job": 1.0}


def test_the_gate_weighs_a_passage_cut_in_pieces_as_one_passage():
    """A long class comment cut into sections for ranking is one passage to the evidence gate: the
    words of a question spread over its sections are together, as they were before the cut. Two
    neighbouring classes' comments are not one passage, nor a method and an attribute of one name.
    A reply cites the comment once, at its best section."""
    sections = [Chunk("ri", "Gears::Box", f"Gears::Box > {h}", body, "lib/gears/box.rb", 3, kind="class", name="box")
                for h, body in (("Shifting", "Press the clutch pedal, then move the lever."),
                                ("Lubrication", "Pour synthetic oil into the housing."))]  # fmt: skip
    writer = Writer(paths.store_path())
    put(writer, "gears", "1.0", [
        ri("Gears::Pedal", "A pedal with a spring and a pad.", kind="class"),
        ri("Gears::Housing", "The housing holds a sump and a drain plug.", kind="class"),
        *sections,
        ri("Gears::Box#ratio", "Returns the gear ratio."),
        ri("Gears::Box#ratio", "Sets the gear ratio.", kind="attribute"),
        *(ri(f"Gears::Filler{i}#noop", f"Filler number {i} says nothing.") for i in range(40)),
    ])  # fmt: skip
    writer.close()
    conn = store.connect(paths.store_path())
    scope = entries(conn, ("gears", "1.0"))
    assert [tuple(r) for r in conn.execute("SELECT last - first FROM passages")] == [(1,)]
    assert searcher.run(conn, "clutch pedal and synthetic oil", scope).evidence.concentration == 1.0
    assert searcher.run(conn, "spring pad and drain plug", scope).evidence.concentration < 0.6
    assert [h.title for h in searcher.search(conn, "clutch pedal and synthetic oil", scope)].count("Gears::Box") == 1

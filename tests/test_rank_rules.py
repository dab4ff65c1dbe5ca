"""Ranking rules for questions in users' words (issue #14 item 3), each kept because it helped on the
dev questions and test agreed (benchmarks/rank_rules.py). The store is filled directly (no Ruby)."""

import re
from pathlib import Path

import pytest

from gemdoc import lockfile, paths, roles
from gemdoc import search as searcher
from gemdoc.chunk import Chunk
from gemdoc.store import GemRecord, Writer

NOTES = [("1.3.0", "Workers start one per CPU core by default; set the count with the workers option."),
         ("1.2.0", "Workers start two by default; the count of parallel workers is now an option."),
         ("1.1.0", "Parallel workers can be started by default when the suite is large.")]  # fmt: skip
DOCS = [("Runner#workers", "The number of parallel workers the runner starts by default."),
        ("Runner#run", "Runs the suite, starting parallel workers.")] + [
       (f"Filler#m{i}", f"Filler method {i} says nothing of interest.") for i in range(60)]  # fmt: skip

SCENE = [("Image#nightly", "Nightly builds happen in a container image, one build each night."),
         ("Pool#size", "The pool size says how many threads serve requests."),
         ("Clock#limit", "Sets the time limit of each test: one that hangs longer is stopped.")]  # fmt: skip
AKIN = [("Suite::Runner::Config#push_dir", "Adds a root directory for the loader."),
        ("Suite::Runner::Config#ignore", "Leaves a directory out."),
        ("Suite::Runner::Paths#ignore", "Leaves a path out."),
        ("Suite::Runner::Config#add_root", "Adds a root to the config."),
        ("Suite::Runner::Paths#add_root", "Adds a root to the paths."),
        ("Suite::Runner::Config::new", "A config with the defaults."),
        ("Suite::Runner::Paths::Store::new", "A store of paths."),
        ("Suite::Runner::Remote#push_dir", "Pushes a directory to the remote host."),
        ("Suite::Runner::Config#prune", "Drops the roots that no longer exist."),
        ("Suite::Runner::Remote::Sync#prune", "Drops the remote host's stale roots.")]  # fmt: skip

READER = "Suite::Runner#time_limit"  # RDoc keeps a reader method and its attr_writer as two entries


@pytest.fixture
def bundle(tmp_path):
    app = tmp_path / "app"
    app.mkdir()
    (app / "Gemfile.lock").write_text("GEM\n  specs:\n    runner (1.2.0)\n\nDEPENDENCIES\n  runner\n")
    chunks = [Chunk("ri", t, t, body, "lib/runner.rb", n, "", "method", t.split("#")[-1])
              for n, (t, body) in enumerate(DOCS + SCENE, start=1)]  # fmt: skip
    chunks += [Chunk("ri", "Suite::Runner", "Suite::Runner", "The suite's own runner class.", "lib/suite.rb", 1, "",
                     "class", "runner"),
               Chunk("ri", "Clock::Stalled", "Clock::Stalled", "Raised when a test hangs.", "lib/clock.rb", 1, "",
                     "class", "stalled"),
               Chunk("ri", "Suite::Runner::Remote", "Suite::Runner::Remote", "A runner's remote host.",
                     "lib/suite/remote.rb", 1, "", "class", "remote"),
               Chunk("ri", "Suite::Runner::Loader", "Suite::Runner::Loader", "A runner's loader.",
                     "lib/suite/loader.rb", 1, "", "module", "loader"),
               Chunk("ri", "Suite::Runner#start_all", "Suite::Runner#start_all", "Starts the suite's runner.",
                     "lib/suite.rb", 5, "", "method", "start_all"),
               Chunk("ri", "Suite::Runner#idle?", "Suite::Runner#idle?", "True when nothing is left to do.",
                     "lib/suite.rb", 9, "", "method", "idle?")]  # fmt: skip
    chunks += [Chunk("ri", READER, READER, "The cap.", "lib/suite.rb", 12, "time_limit()",
                     "method", "time_limit"),
               Chunk("ri", READER, READER, "Sets the cap.", "lib/suite.rb", 12, "attr_writer :time_limit",
                     "attribute", "time_limit")]  # fmt: skip
    chunks += [Chunk("ri", t, t, body, "lib/suite/config.rb", n, "", "method", re.split("#|::", t)[-1])
               for n, (t, body) in enumerate(AKIN, start=1)]  # fmt: skip
    chunks += [Chunk("changelog", f"History > {v}", f"History > {v}", body, "History.md", n * 10, kind="section")
               for n, (v, body) in enumerate(NOTES, start=1)]  # fmt: skip
    writer = Writer(paths.store_path())
    _, entry = writer.replace_gem(GemRecord("runner", "1.2.0", str(tmp_path), "gem", "d", "complete"), chunks)
    writer.record_project(str(app), lockfile.load(app / "Gemfile.lock").sha256, "direct", [("runner", "1.2.0")],
                          [entry], True)  # fmt: skip
    writer.close()
    from gemdoc import ask

    return ask.open_bundle(Path(app))


def titles(bundle, text: str) -> list[str]:
    return [h.title for h in searcher.search(bundle.conn, text, bundle.scope.gems, 5)]


def test_an_upgrade_question_gets_the_notes_of_the_locked_release_first(bundle):
    question = "Since upgrading, how many parallel workers does the runner start by default?"
    assert titles(bundle, question)[0] == "History > 1.2.0"
    assert titles(bundle, "how many parallel workers does the runner start by default")[0] == "Runner#workers"


def _hit(chunk_id: int, score: float) -> searcher.Hit:
    return searcher.Hit(chunk_id, "g", "1.0", "ri", "method", f"T{chunk_id}", f"T{chunk_id}", "", "", "f.rb", chunk_id,
                        score)  # fmt: skip


def _note(chunk_id: int, version: str) -> searcher.Hit:
    return searcher.Hit(chunk_id, "g", "1.2.0", "changelog", "section", f"History > {version}",
                        f"History > {version}", "", "", "History.md", chunk_id, 0.0)  # fmt: skip


def test_in_the_fusion_a_release_question_weighs_the_locked_versions_notes(monkeypatch):
    """The vector arm cannot tell one release's notes from another's: where both arms list the notes of
    another version higher, a question about a release still gets the locked version's (1.2.0) first."""
    from gemdoc import hybrid

    old, locked = _note(1, "1.1.0"), _note(2, "1.2.0")
    lists = [("keyword", [old, locked]), ("vector", [old, _hit(3, 0.0), locked])]

    def first(text: str) -> str:
        release = hybrid.asks_release(text)
        return hybrid._fuse("hybrid", lists, 3, searcher.Found([], None, None), [], release).hits[0].heading

    assert first("what changed in the worker count since upgrading") == "History > 1.2.0"
    assert first("worker count in 1.2.0") == "History > 1.2.0"  # a version named
    assert first("how many workers start") == "History > 1.1.0"  # not about a release
    monkeypatch.setattr(searcher, "LOCKED_RELEASE_FACTOR", 1.0)
    assert first("what changed in the worker count since upgrading") == "History > 1.1.0"


def test_a_typed_release_question_gets_the_locked_notes_before_the_apis_it_names(bundle, monkeypatch):
    """An agent names the API a change lives in; when its own words ask what the release changed, the
    locked version's notes (ranked near the top) go first. A lex: name's words ("release") ask nothing."""
    from gemdoc import hybrid

    def first(text: str) -> str:
        return hybrid.query(bundle.conn, text, bundle.scope.gems, 5).hits[0].title

    asked = "did the locked release change how many workers start?\nlex: Runner#workers"
    assert first(asked) == "History > 1.2.0"
    assert first("how many workers start by default?\nlex: Runner#workers") == "Runner#workers"
    assert first("how many workers start by default?\nlex: Runner#workers Semaphore#release") == "Runner#workers"
    monkeypatch.setattr(hybrid, "RELEASE_NOTES_FIRST", 0)
    assert first(asked) == "Runner#workers"


@pytest.mark.parametrize("text, second_score, order", [
    ("how many workers start", 0.9, [2, 1, 3]), ("how many workers start", 0.5, [1, 2, 3]),
    ("Runner#workers", 0.9, [1, 2, 3]), ("assert_in_delta", 0.9, [1, 2, 3]),
])  # fmt: skip
def test_a_weak_keyword_first_yields_to_the_fusion_but_stays_second(text, second_score, order):
    """A keyword first barely ahead of its second (under FIRST_MARGIN) is not pinned first, where
    both arms agree on another chunk; a clear one is, and so is the first for an identifier alone.
    Either way it is never pulled below second."""
    from gemdoc import hybrid

    keyword = [_hit(1, 1.0), _hit(2, second_score)]
    vector = [_hit(2, 0.8), _hit(3, 0.7), *[_hit(i, 0.1) for i in range(4, 40)]]
    whole = searcher.Found(keyword, None, None)
    place = hybrid.first_place(keyword, text)
    fused = hybrid._fuse("hybrid", [("keyword", keyword), ("vector", vector)], 3, whole, [(keyword[0], place)])
    assert [h.id for h in fused.hits] == order
    assert [h.score for h in fused.hits] == sorted((h.score for h in fused.hits), reverse=True)


def test_the_keyword_arm_records_the_entries_the_question_names(bundle):
    found = searcher.run(bundle.conn, "what does Runner workers return by default", bundle.scope.gems)
    assert [h.title for h in found.hits if h.id in found.plan.named] == ["Runner#workers"]
    found = searcher.run(bundle.conn, "how many workers start by default", bundle.scope.gems)
    assert found.plan.named == set()


def test_a_keyword_first_the_question_names_stays_first_however_narrow(monkeypatch):
    """``what does FileList resolve do``: when the keyword arm's first is the API the question names
    (search._weigh_named), it is pinned first even when barely ahead of its second."""
    from gemdoc import hybrid

    keyword = [_hit(1, 1.0), _hit(2, 0.9)]
    vector = [_hit(2, 0.8), _hit(3, 0.7), *[_hit(i, 0.1) for i in range(4, 40)]]
    plan = searcher.Plan([], [], [], {}, 0.0, named={1})
    whole = searcher.Found(keyword, None, plan)

    def order() -> list[int]:
        place = hybrid.keyword_place(whole, "what does Runner resolve do")
        fused = hybrid._fuse("hybrid", [("keyword", keyword), ("vector", vector)], 3, whole, [(keyword[0], place)])
        return [h.id for h in fused.hits]

    assert order() == [1, 2, 3]
    plan.named = {2}
    assert order() == [2, 1, 3]
    plan.named = {1}
    monkeypatch.setattr(hybrid, "NAMED_CLEAR", False)
    assert order() == [2, 1, 3]


def test_an_api_the_lex_part_names_by_full_name_comes_first(bundle, monkeypatch):
    """An agent's ``lex:`` part naming ``Runner#run`` (or a method name that reads as code) puts that
    entry first, over a passage that matches the question's words better; a plain word (``run``) pins nothing."""
    from gemdoc import hybrid

    def first(text: str) -> str:
        return hybrid.query(bundle.conn, text, bundle.scope.gems, 5).hits[0].title

    question = "how many parallel workers does the runner start by default"
    assert first(question + "\nlex: workers Runner#run") == "Runner#run"
    assert first(question + "\nlex: workers run") == "Runner#workers"
    assert first(question + "\nlex: Suite::Runner") == "Suite::Runner"
    assert first(question + "\nlex: start_all Runner#run") == "Suite::Runner#start_all"  # a method name alone, as code
    assert first(question + "\nlex: Runner#run start_all") == "Runner#run"  # the order named
    assert first(question + "\nlex: Runner#start_all") == "Suite::Runner#start_all"  # a partly qualified name
    assert first(question + "\nlex: Suite::Runner#idle?") == "Suite::Runner#idle?"  # a predicate keeps its ?
    # a method name several classes define pins none of them (SKILL.md: "when a name picks one entry")
    assert first(question + "\nlex: add_root") not in {"Suite::Runner::Config#add_root", "Suite::Runner::Paths#add_root"}
    assert first(question + "\nlex: Suite::Runner::Paths#add_root") == "Suite::Runner::Paths#add_root"
    monkeypatch.setattr(hybrid, "NAMED_FIRST", False)
    assert first(question + "\nlex: workers Runner#run") == "Runner#workers"


def _piece(chunk_id: int, title: str) -> searcher.Hit:
    return searcher.Hit(chunk_id, "g", "1.0", "ri", "method", title, title, "", "", "f.rb", 1, 0.0)


def test_the_fusion_counts_each_citation_once_whichever_of_its_pieces_an_arm_found():
    """A long comment cut in pieces is one citation: when the keyword arm finds one piece of it and
    the vector arm another, both votes go to it, and it beats a chunk both arms rank second. It is
    shown by the piece ranked best, with each arm's best rank; a pin on any piece pins it, once."""
    from gemdoc import hybrid

    first, second, rival = _piece(1, "Retry#limit"), _piece(2, "Retry#limit"), _piece(3, "Retry#wait")
    nobody = searcher.Found([], None, None)
    lists = [("keyword", [first, rival]), ("vector", [second, rival])]
    fused = hybrid._fuse("hybrid", lists, 3, nobody, [])
    assert [h.title for h in fused.hits] == ["Retry#limit", "Retry#wait"] and fused.arms[1] == {"keyword": 1, "vector": 1}
    pinned = hybrid._fuse("hybrid", lists, 5, nobody, [(rival, 1), (second, 2), (first, 3)])
    assert [h.title for h in pinned.hits] == ["Retry#wait", "Retry#limit"]
    assert pinned.arms[pinned.hits[1].id] == {"keyword": 1, "vector": 1}
    many = [_piece(i, f"Retry#other{i}") for i in range(10, 19)]
    shown = hybrid._fuse("hybrid", [("keyword", [*many, first]), ("keyword", [rival, first]), ("vector", [second])],
                         20, nobody, [])
    limit = next(h for h in shown.hits if h.title == "Retry#limit")
    assert limit.id == 2 and shown.arms[2] == {"keyword": 2, "vector": 1}  # vector #1 beats keyword #10 and #2


def test_named_apis_keep_the_order_named_even_when_fusion_ranks_a_later_one_higher():
    from gemdoc import hybrid

    keyword = [_hit(2, 1.0), _hit(3, 0.9), _hit(1, 0.5)]
    whole = searcher.Found(keyword, None, None)
    fused = hybrid._fuse("hybrid", [("keyword", keyword)], 3, whole, [(_hit(1, 0.0), 1), (_hit(2, 0.0), 2)])
    assert [h.id for h in fused.hits] == [1, 2, 3]


def test_an_empty_typed_part_does_not_swallow_the_next():
    from gemdoc import hybrid

    assert hybrid.parse("lex:\nvec: retry a job") == [("vec", "retry a job")]
    assert hybrid.parse("how?\nlex: Foo#bar\nvec:") == [(None, "how?"), ("lex", "Foo#bar")]


def test_a_full_name_that_picks_no_entry_names_the_one_rdoc_files_elsewhere(bundle, monkeypatch):
    """Agents name a method on the class they call it on, or as the other kind: ``Suite::Runner#push_dir``
    is documented as ``Suite::Runner::Config#push_dir``, ``Suite::Runner.start_all`` as an instance method,
    ``#initialize`` as ``::new``.
    Where two modules under the owner define the method (``ignore``), the name picks nothing; a class
    nested in the owner (``Suite::Runner::Remote``) is another object, and does not count. When none
    under the owner does, one beside it, under its parent, does (``Suite::Runner::Loader#push_dir``), when
    the bundle documents the owner, and a ``ClassMethods`` module's method is its parent's."""
    from gemdoc import hybrid

    def first(lex: str) -> str:
        return hybrid.query(bundle.conn, f"how many parallel workers\nlex: {lex}", bundle.scope.gems, 5).hits[0].title

    assert first("Suite::Runner#push_dir") == "Suite::Runner::Config#push_dir"
    assert first("Suite::Runner.start_all") == "Suite::Runner#start_all"
    assert first("Suite::Runner::start_all") == "Suite::Runner#start_all"
    assert first("Suite::Runner::Config#initialize") == "Suite::Runner::Config::new"  # RDoc files initialize as ::new
    assert first("Suite::Runner::Paths#initialize") not in {t for t, _ in AKIN}  # not an inner class's constructor
    assert first("Suite::Runner#ignore") not in {t for t, _ in AKIN}
    assert first("Runner#push_dir") != "Suite::Runner::Config#push_dir"  # a partial owner is not a namespace
    assert first("Suite::Runner#prune") == "Suite::Runner::Config#prune"  # a module inside Remote is Remote's
    assert first("Suite::Runner::Loader#push_dir") == "Suite::Runner::Config#push_dir"  # beside the owner
    assert first("Suite::Runner::ClassMethods#start_all") == "Suite::Runner#start_all"  # on a ClassMethods' parent
    assert first("Suite::Runner::Loader#ignore") not in {t for t, _ in AKIN}  # two modules beside it: none
    assert first("Suite::Runner::Gone#push_dir") not in {t for t, _ in AKIN}  # an owner the bundle lacks borrows none
    assert first("Suite::Runner::Loader#prune") == "Suite::Runner::Config#prune"  # not inside the class Remote
    monkeypatch.setattr(searcher, "AKIN_SIBLINGS", False)
    assert first("Suite::Runner::Loader#push_dir") not in {t for t, _ in AKIN}
    assert first("Suite::Runner::ClassMethods#start_all") != "Suite::Runner#start_all"
    monkeypatch.setattr(searcher, "AKIN_SIBLINGS", True)
    monkeypatch.setattr(searcher, "AKIN_MODULES", False)
    assert first("Suite::Runner#push_dir") not in {t for t, _ in AKIN}  # Config's and Remote's: two
    monkeypatch.setattr(searcher, "AKIN_MODULES", True)
    monkeypatch.setattr(hybrid, "AKIN_NAMES", False)
    assert first("Suite::Runner#push_dir") != "Suite::Runner::Config#push_dir"


def test_a_name_rdoc_documents_twice_as_reader_and_attr_writer_names_one_api(bundle, monkeypatch):
    """Two entries under one full name in one gem version are one API, and the name picks it."""
    from gemdoc import hybrid

    def first(lex: str) -> str:
        return hybrid.query(bundle.conn, f"how many parallel workers\nlex: {lex}", bundle.scope.gems, 5).hits[0].title

    assert first(READER) == READER
    assert first("time_limit") == READER
    monkeypatch.setattr(hybrid, "one_per_api", lambda conn, rows: rows)
    assert first(READER) != READER


def test_the_questions_own_clear_keyword_first_follows_the_named_entries(bundle, monkeypatch):
    """In a typed query the untyped words keep their keyword first place, after what ``lex:`` names:
    other parts add guesses, they do not outvote the question (here, the notes of the locked release)."""
    from gemdoc import hybrid

    def top(text: str) -> list[str]:
        return [h.title for h in hybrid.query(bundle.conn, text, bundle.scope.gems, 5).hits[:2]]

    monkeypatch.setattr(hybrid, "RELEASE_NOTES_FIRST", 0)  # which puts these notes first (the test above)
    question = "Since upgrading, how many parallel workers does the runner start by default?"
    assert titles(bundle, question)[0] == "History > 1.2.0"
    assert top(f"{question}\nlex: runner start_all workers")[:2] == ["Suite::Runner#start_all", "History > 1.2.0"]
    assert top(f"{question}\nlex: runner suite workers")[0] == "History > 1.2.0"
    monkeypatch.setattr(hybrid, "QUESTION_FIRST", False)
    monkeypatch.setattr(hybrid, "asks_release", lambda text: False)  # the fusion's own preference for the notes
    assert "History > 1.2.0" not in top(f"{question}\nlex: runner start_all workers")


def test_words_that_only_set_the_scene_weigh_less_than_the_asking_sentence(bundle, monkeypatch):
    """"Our nightly build runs in a container image" says where the user is; the sentence that asks
    says what they want. Words only in the scene count half."""
    scene, ask = "Our nightly build runs in a container image.", "How do I change the pool size for threads?"
    assert titles(bundle, f"{scene} {ask}")[0] == "Pool#size"
    assert titles(bundle, f"{ask} {scene}")[0] == "Pool#size"  # the sentence that asks, wherever it stands
    monkeypatch.setattr(searcher, "SCENE_WEIGHT", 1.0)
    assert titles(bundle, f"{scene} {ask}")[0] == "Image#nightly"


def test_an_api_named_only_to_set_the_scene_is_not_what_is_asked_for(bundle, monkeypatch):
    """"Our suite raises Clock::Stalled when a test hangs." names the symptom; the sentence that asks
    names the subject. An API named there counts NAMED_FACTOR, one named only in the scene does not."""
    scene, ask = "Our suite raises Clock::Stalled when a test hangs.", "How do I set a time limit for each test?"
    assert titles(bundle, f"{scene} {ask}")[0] == "Clock#limit"
    assert titles(bundle, f"{scene[:-1]}, so {ask[0].lower()}{ask[1:]}")[0] == "Clock::Stalled"  # one sentence
    monkeypatch.setattr(searcher, "NAMED_ASKED_ONLY", False)
    assert titles(bundle, f"{scene} {ask}")[0] == "Clock::Stalled"


@pytest.mark.parametrize("text", ["json.array! jbuilder", "Array#empty? vs any?", "use Foo.bar. then Baz"])
def test_a_bang_or_predicate_method_does_not_end_a_sentence(text):
    assert searcher.q.scene_terms(text, searcher.q.terms(text)) == set()


@pytest.fixture
def two_gems(tmp_path):
    """A big web framework and a small paginator, each documenting a page size in the same words, under names
    of the same lengths: the framework's chunk comes first when nothing tells them apart (lower id)."""
    app = tmp_path / "two"
    app.mkdir()
    (app / "Gemfile.lock").write_text("GEM\n  specs:\n    bigweb (1.0.0)\n    pagers (1.0.0)\n\n"
                                      "DEPENDENCIES\n  bigweb\n  pagers\n")  # fmt: skip
    same = "Limits how many records one page shows: the page size."
    mapping = "Routes requests under a path to another application."
    gems = {"bigweb": ([Chunk("ri", "Web#per", "Web#per", same, "lib/web.rb", 1, "", "method", "per"),
                        Chunk("ri", "Web::Builder#map", "Web::Builder#map", mapping, "lib/web.rb", 2, "", "method",
                              "map"),
                        Chunk("ri", "Web::Builder", "Web::Builder", "Builds an app.", "lib/web.rb", 3, "", "class",
                              "builder")]
                       + [Chunk("ri", f"Web#m{i}", f"Web#m{i}", f"Renders view {i}.", "lib/web.rb", i + 2, "",
                                "method", f"m{i}") for i in range(200)],
                       "bigweb\nA full-stack web framework: routing, views and controllers"),
            "pagers": ([Chunk("ri", "Pags#per", "Pags#per", same, "lib/pags.rb", 1, "", "method", "per"),
                       Chunk("ri", "Pags#total", "Pags#total", "Counts every record.", "lib/pags.rb", 2, "",
                             "method", "total"),
                       Chunk("ri", "Pags::Web::Builder#map", "Pags::Web::Builder#map",  # a vendored copy
                             f"{mapping} Maps a path to an application of pages.", "lib/pags.rb", 3, "", "method",
                             "map"),
                       Chunk("ri", "RuboCop::Cop::Style::PageSize", "RuboCop::Cop::Style::PageSize",
                             "Checks the page size.", "lib/pags.rb", 4, "", "class", "pagesize")],
                      "pagers\nA paginator that splits long lists into pages")}  # fmt: skip
    writer = Writer(paths.store_path())
    entries = [writer.replace_gem(GemRecord(name, "1.0.0", str(tmp_path / name), "gem", name, "complete"), chunks,
                                  profile)[1] for name, (chunks, profile) in gems.items()]  # fmt: skip
    writer.record_project(str(app), lockfile.load(app / "Gemfile.lock").sha256, "direct",
                          [("bigweb", "1.0.0"), ("pagers", "1.0.0")], entries, True)  # fmt: skip
    writer.close()
    from gemdoc import ask

    return ask.open_bundle(Path(app))


@pytest.mark.parametrize("rule, other, question", [
    ((roles, "ROLE_WEIGHT"), (searcher, "SIZE_POWER"), "How does the paginator decide how many records a page shows?"),
    ((searcher, "SIZE_POWER"), (roles, "ROLE_WEIGHT"), "how many records does one page show"),
])  # fmt: skip
def test_a_gem_described_by_its_role_or_small_ranks_an_equal_match_first(two_gems, monkeypatch, rule, other, question):
    """Each prior alone (the other off): "the paginator" is no word of either gem's docs but what the small
    gem's gemspec says it is (role); the framework holds some 200 chunks, the paginator a few (size)."""
    monkeypatch.setattr(*other, 0.0)
    assert titles(two_gems, question)[:2] == ["Pags#per", "Web#per"]
    monkeypatch.setattr(*rule, 0.0)
    assert titles(two_gems, question)[:2] == ["Web#per", "Pags#per"]


def test_a_store_without_profiles_gives_no_role_prior():
    """A store an older gemdoc wrote has no profiles table: no prior, no error."""
    import sqlite3

    assert roles.fit(sqlite3.connect(":memory:"), ["paginator"], {1: "pagers"}) == {}


def test_a_slash_name_is_a_cop_only_when_rubocop_documents_one(two_gems):
    """``Style/PageSize`` names a cop and spares the rephrasing floor; ``Web/Builder`` is a class written
    with a slash, named as ``Web::Builder``, which does not."""
    from gemdoc import ask, evidence

    named = ask.named_apis(two_gems, "Web/Builder Style/PageSize")
    assert named == ["Web::Builder", "Style/PageSize"]
    assert not evidence.specific(named[:1]) and evidence.specific(named[1:])


def test_a_full_name_names_its_own_entry_not_a_vendored_copy(two_gems, monkeypatch):
    """``lex: Web::Builder#map`` is the framework's entry, though the paginator vendors a copy as
    ``Pags::Web::Builder#map`` that matches the question's words better. Without the rule the name
    matches both, pins neither, and the copy ranks first."""
    from gemdoc import hybrid

    text = "map a path to an application of pages\nlex: Web::Builder#map"
    first = hybrid.query(two_gems.conn, text, two_gems.scope.gems, 3).hits[0].title
    assert first == "Web::Builder#map"
    monkeypatch.setattr(searcher, "EXACT_NAMES_FIRST", False)
    assert hybrid.query(two_gems.conn, text, two_gems.scope.gems, 3).hits[0].title == "Pags::Web::Builder#map"


def test_a_version_asked_is_a_whole_version_of_the_gem_named_before_it(tmp_path):
    """"Rails 6.1" is no version of rake (whose notes hold 0.6.1), and "faraday 1.1.0" none of minitest
    (whose notes hold 1.1.0): a version matches a title's whole version or the series it opens, and
    after a gem's name only that gem's titles and those of gems locked at its version (a release train)."""
    app = tmp_path / "app"
    app.mkdir()
    locked = [("train", "6.1.4"), ("train-parts", "6.1.4"), ("tool", "13.0.6")]
    (app / "Gemfile.lock").write_text("GEM\n  specs:\n" + "".join(f"    {n} ({v})\n" for n, v in locked)
                                      + "\nDEPENDENCIES\n  train\n  tool\n")  # fmt: skip
    notes = {"train": ["6.1.4", "6.0.0"], "train-parts": ["6.1.0"], "tool": ["0.6.1", "16.1.0", "6.1.0"]}
    writer = Writer(paths.store_path())
    entries = []
    for name, version in locked:
        chunks = [Chunk("changelog", f"History > {v}", f"History > {v}", f"Release {v} of {name}: fixes and changes.",
                        "History.md", n * 10, kind="section") for n, v in enumerate(notes[name], start=1)]
        chunks += [Chunk("ri", f"Filler{name}#m{i}", f"Filler{name}#m{i}", f"Filler method {i}.", "lib/f.rb", i, "",
                         "method", f"m{i}") for i in range(30)]  # fmt: skip
        entries.append(writer.replace_gem(GemRecord(name, version, str(tmp_path), "gem", "d", "complete"), chunks)[1])
    writer.record_project(str(app), lockfile.load(app / "Gemfile.lock").sha256, "direct", locked, entries, True)
    writer.close()
    from gemdoc import ask

    bundle = ask.open_bundle(Path(app))

    def firsts(text: str) -> list[tuple[str, str]]:
        hits = searcher.search(bundle.conn, text, bundle.scope.gems, 10)
        return [(h.gem, h.title) for h in hits if h.source_type == "changelog"][:2]  # the boosted come first

    train = {("train", "History > 6.1.4"), ("train-parts", "History > 6.1.0")}
    assert set(firsts("what changed in Train 6.1")) == train
    assert set(firsts("what changed in 6.1")) < {("train", "History > 6.1.4"), ("train-parts", "History > 6.1.0"),
                                                 ("tool", "History > 6.1.0")}  # fmt: skip

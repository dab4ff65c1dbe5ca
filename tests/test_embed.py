"""Semantic recall with the real fastembed and the small ONNX model in ../shared/models."""

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gemdoc import embed, hybrid, lockfile, models, paths, vectors
from gemdoc import search as searcher
from gemdoc.chunk import Chunk
from gemdoc.cli import main
from gemdoc import encoder
from gemdoc.encoder import Embedder
from gemdoc.errors import GemdocError
from gemdoc.store import GemRecord, Writer

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT.parent / "shared" / "models"
INT8 = MODELS / "all-MiniLM-L6-v2-onnx-int8"
FP32 = MODELS / "all-MiniLM-L6-v2-onnx"

CHUNKS = [
    ("Signal::trap", "Installs a handler that runs when the operating system delivers the given signal to the process."),
    ("Array#rotate", "Returns a new array rotated so that the element at count is first."),
    ("Queue#pop", "Removes an item from the queue, blocking the thread until one is available."),
    ("String#squeeze", "Collapses runs of the same character into one."),
    ("Kernel#sleep", "Suspends the current thread for the given number of seconds."),
]


def chunk(title, body):
    return Chunk("ri", title, title, body, "lib/core.rb", 1, "", "method", title.split("#")[-1].split("::")[-1].lower())


@pytest.fixture
def bundle(tmp_path, monkeypatch):
    """A project whose bundle is one stored gem, without Ruby: the store is filled directly."""
    monkeypatch.setenv("GEMDOC_MODEL_DIR", str(INT8))
    project_dir = tmp_path / "app"
    project_dir.mkdir()
    (project_dir / "Gemfile.lock").write_text("GEM\n  specs:\n    core (1.0)\n\nDEPENDENCIES\n  core\n")
    writer = Writer(paths.store_path())
    _, entry = writer.replace_gem(GemRecord("core", "1.0", "/x", "gem", "d1", "complete"), [chunk(*c) for c in CHUNKS])
    digest = lockfile.load(project_dir / "Gemfile.lock").sha256
    writer.record_project(str(project_dir.resolve()), digest, "direct", [("core", "1.0")], [entry], True)
    writer.close()
    return project_dir.resolve()


def cli(*args):
    return CliRunner().invoke(main, list(args))


def test_embed_is_incremental_and_records_identity(bundle):
    first = embed.embed_project(bundle)
    assert (first.embedded, first.already, first.failed) == (5, 0, 0)
    assert "all-MiniLM-L6-v2" in first.identity and "384d" in first.identity
    again = embed.embed_project(bundle)
    assert (again.embedded, again.already) == (0, 5)
    writer = Writer(paths.store_path())
    changed = [chunk(*c) for c in CHUNKS[:4]] + [chunk("Kernel#sleep", "Pauses the thread for a while.")]
    _, entry = writer.replace_gem(GemRecord("core", "1.0", "/x", "gem", "d2", "complete"), changed)
    digest = lockfile.load(bundle / "Gemfile.lock").sha256
    writer.record_project(str(bundle), digest, "direct", [("core", "1.0")], [entry], True)
    writer.close()
    third = embed.embed_project(bundle)
    assert (third.embedded, third.already) == (1, 4)  # only the changed chunk
    conn = sqlite3.connect(paths.store_path())
    assert vectors.stored_identity(conn) == first.identity


def test_paraphrase_found_by_vectors_and_fused(bundle):
    embed.embed_project(bundle)
    # five chunks hold almost none of these words: the evidence gate would refuse, so it is lifted
    result = cli("query", "--json", "--no-refusal", "--project", str(bundle), "stop the process when the OS sends a signal")
    data = json.loads(result.stdout)
    assert data["mode"] == "hybrid" and data["results"][0]["title"] == "Signal::trap"
    assert data["results"][0]["arms"]["vector"] == 1
    vs = json.loads(cli("vsearch", "--json", "--no-refusal", "--project", str(bundle), "wait until an item arrives").stdout)
    assert vs["mode"] == "vector" and vs["results"][0]["title"] == "Queue#pop"
    typed = json.loads(cli("query", "--json", "--project", str(bundle), "lex: squeeze").stdout)
    assert typed["results"][0]["title"] == "String#squeeze" and set(typed["results"][0]["arms"]) == {"keyword"}


def test_without_vectors_query_falls_back_and_vsearch_refuses(bundle):
    result = CliRunner().invoke(main, ["query", "--json", "--project", str(bundle), "squeeze characters"])
    assert json.loads(result.stdout)["mode"] == "keyword" and "gemdoc embed" in result.stderr
    refused = cli("vsearch", "--project", str(bundle), "anything")
    assert refused.exit_code == 1 and "gemdoc embed" in refused.output


def test_another_model_is_refused_until_force(bundle, monkeypatch):
    embed.embed_project(bundle)
    monkeypatch.setenv("GEMDOC_MODEL_DIR", str(FP32))
    with pytest.raises(vectors.VectorMismatch, match="gemdoc embed --force"):
        embed.embed_project(bundle)
    result = cli("query", "--project", str(bundle), "signal")
    assert result.exit_code == 1 and "gemdoc embed --force" in result.output
    forced = embed.embed_project(bundle, force=True)
    assert forced.reset and forced.embedded == 5 and forced.already == 0


def test_no_model_on_the_machine_means_no_download(bundle, monkeypatch):
    monkeypatch.delenv("GEMDOC_MODEL_DIR")
    result = cli("vsearch", "--project", str(bundle), "anything")
    assert result.exit_code == 1 and "run `gemdoc embed`" in result.output
    assert not any(models.cache_dir().rglob("*.onnx"))


class Flaky:
    """The embedder's boundary: fails on any batch holding a poisoned text."""

    identity = "flaky · 2d"
    dimension = 2

    def embed_documents(self, texts):
        import numpy as np

        if any("poison" in t for t in texts):
            raise RuntimeError("tokenizer exploded")
        return np.ones((len(texts), 2), dtype=np.float32) / 2**0.5


def test_a_failing_batch_is_halved_down_to_the_bad_chunk(tmp_path):
    writer = Writer(paths.store_path())
    bodies = [f"text {i}" for i in range(100)]
    bodies[37] = "poison"
    _, entry = writer.replace_gem(GemRecord("g", "1", "/x", "gem", "d", "complete"), [chunk(f"G#m{i}", b) for i, b in enumerate(bodies)])
    report = embed._embed(writer, Flaky(), [entry], force=False, progress=None)
    assert (report.embedded, report.failed) == (99, 1)
    assert [text for _, text in vectors.pending(writer.db.conn, [entry])] == ["G#m37\npoison"]
    writer.close()


def test_nothing_embeddable_is_an_error(tmp_path):
    writer = Writer(paths.store_path())
    _, entry = writer.replace_gem(GemRecord("g", "1", "/x", "gem", "d", "complete"), [chunk("G#a", "poison")])
    with pytest.raises(GemdocError, match="no chunk could be embedded"):
        embed._embed(writer, Flaky(), [entry], force=False, progress=None)
    writer.close()


def test_hybrid_keeps_the_keyword_arms_first_place(bundle, monkeypatch):
    """The vector arm (here: a stand-in that ranks the keyword arm's first place last) reorders what follows
    the keyword arm's first place, never that place itself; plain fusion would let it take it."""
    embed.embed_project(bundle)
    conn = sqlite3.connect(paths.store_path())
    scope = [1]  # the one entry of the bundle
    keyword = searcher.search(conn, "current thread", scope)
    ids = [i for (i,) in conn.execute("SELECT id FROM chunks")]
    every = searcher.fetch(conn, ids, dict.fromkeys(ids, 0.0), {})
    others = [h for h in every if h.id != keyword[0].id]
    reversed_arm = others[::-1] + [h for h in every if h.id == keyword[0].id]  # keyword's first comes last
    monkeypatch.setattr(hybrid, "vector_hits", lambda *args: reversed_arm)
    embedder, matrix = Embedder(models.configured()), vectors.Matrix(conn, scope)

    def titles():
        hits = hybrid.query(conn, "current thread", scope, 5, embedder, matrix).hits
        return [h.title for h in hits]

    kept = titles()
    monkeypatch.setattr(hybrid, "KEYWORD_FIRST", False)
    plain = titles()
    assert kept[0] == keyword[0].title != plain[0]
    assert kept[1:] == [t for t in plain if t != keyword[0].title]  # the rest in fused order


def test_typed_subqueries_parse():
    assert hybrid.parse("lex: Rack::Utils vec: parse query strings") == [("lex", "Rack::Utils"), ("vec", "parse query strings")]
    assert hybrid.parse("plain question\nhyde: A passage that answers it") == [(None, "plain question"), ("hyde", "A passage that answers it")]
    assert hybrid.parse("no types at all") == [(None, "no types at all")]


@pytest.mark.parametrize("model", [INT8, FP32])
def test_gemdocs_own_encoder_equals_fastembed(model, monkeypatch):
    """gemdoc runs the model's files directly (fastembed's import costs a second per query);
    each text must get the vector fastembed gives it."""
    monkeypatch.setenv("GEMDOC_MODEL_DIR", str(model))
    spec = models.configured()
    ours = Embedder(spec)
    assert type(ours.model).__name__ == "OnnxEncoder"
    fastembed_model = encoder._load(spec, allow_download=False)
    assert type(fastembed_model).__name__ == "TextEmbedding"
    for text in ["retry a job only three times", "Rack::Utils.escape_html " * 60, "日本語", "", "x"]:
        theirs = next(iter(fastembed_model.embed([text[: encoder.MAX_CHARS]], batch_size=1)))
        assert float(abs(ours.embed_query(text) - theirs).max()) < 1e-5, text


def _imports_after(command: list[str], env: dict) -> tuple[str, list[str]]:
    code = (
        "import sys, runpy, json; sys.argv = ['gemdoc'] + json.loads(sys.argv[1])\n"
        "try:\n    runpy.run_module('gemdoc', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print([m for m in ('numpy', 'onnxruntime', 'fastembed', 'sqlite_utils', 'yaml', 'filelock') if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code, json.dumps(command)], capture_output=True, text=True, env=env)
    *output, imported = done.stdout.strip().splitlines()
    return "\n".join(output), eval(imported)  # noqa: S307 - our own print of a list of names


def test_search_and_query_load_only_what_they_need(bundle):
    embed.embed_project(bundle)
    search = ["search", "-C", str(bundle), "--no-refusal", "signal handler"]
    _imports_after(search, dict(os.environ))  # the first explicit command records trust (a write)
    output, imported = _imports_after(search, dict(os.environ))
    assert "Signal::trap" in output and imported == []
    output, imported = _imports_after(["query", "-C", str(bundle), "--no-refusal", "signal handler"], dict(os.environ))
    assert "Signal::trap" in output and "fastembed" not in imported and "onnxruntime" in imported


@pytest.mark.parametrize("model, batches", [(FP32, True), (INT8, False)])
def test_a_vector_does_not_depend_on_its_batch(model, batches):
    """Texts of one token length share a batch only when the model gives them the same vector
    there as alone; the int8 model's dynamic quantization does not, so it embeds one by one."""
    onnx = encoder.OnnxEncoder(model, "mean")
    texts = ["one two three", "four five six", "a longer text about retrying jobs", "x", "one two three"]
    together = list(onnx.embed(texts, batch_size=64))
    assert onnx.batches_exactly is batches
    for text, vector in zip(texts, together):
        assert float(abs(next(iter(onnx.embed([text]))) - vector).max()) < 1e-5, text


def test_a_query_embeds_each_of_its_parts_once(bundle):
    """The vector arm and the evidence gate (rephrasing floor, question floor) look at the same parts:
    each is run through the model once per query, a question or rephrasing as a query, a hyde:
    passage as a document."""
    from gemdoc import ask

    embed.embed_project(bundle)
    asked = ask.open_bundle(bundle)
    embedder = Embedder(models.configured())
    calls: list[tuple[str, str]] = []
    for how in ("embed_query", "embed_documents"):
        real = getattr(embedder, how)
        setattr(embedder, how, lambda texts, real=real, how=how: calls.append((how, str(texts))) or real(texts))
    matrix = vectors.Matrix(asked.conn, asked.scope.gems)
    typed = "pause a thread\nvec: suspend the current thread\nhyde: Suspends the current thread."
    for text, parts in (("make the thread wait a few seconds", 1), (typed, 3)):
        calls.clear()
        reply = ask.semantic(asked, text, ask.Options(refuse=False), embedder, matrix, vector_only=False)
        assert reply.hits[0].title == "Kernel#sleep" and len(calls) == parts == len(set(calls)), calls
    assert ("embed_documents", str(["Suspends the current thread."])) in calls
    assert not embedder.embed_part("pause a thread", False).flags.writeable

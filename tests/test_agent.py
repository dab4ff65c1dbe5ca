"""The agent surface: refusal, output options, URIs and `show`, the skill, and the MCP server
driven through a real MCP client session. The store is filled directly (no Ruby needed) and
embedded with the real fastembed and the small model in ../shared/models."""

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner

from gemdoc import embed, lockfile, paths, show, skills, store, uri
from gemdoc.chunk import Chunk
from gemdoc.cli import main
from gemdoc.store import GemRecord, Writer

ROOT = Path(__file__).resolve().parent.parent
INT8 = ROOT.parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx-int8"
SOURCE = "module Retry\n" + "".join(f"  # line {n}\n" for n in range(2, 40)) + "  def retry_on(error, attempts: 5)\n  end\nend\n"
DOCS = [
    ("Retry#retry_on", "Retries the job when the given error is raised, up to attempts times, waiting between tries.",
     "lib/retry.rb", 40),
    ("Retry#discard_on", "Discards the job without retrying when the given error is raised.", "lib/retry.rb", None),
    ("Queue#push", "Pushes a job onto the queue so a worker picks it up later.", None, None),
] + [(f"Filler#m{i}", f"Filler method number {i} documents nothing about jobs.", "lib/filler.rb", i) for i in range(1, 60)]


def cli(*args):
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def project(tmp_path, monkeypatch):
    return make_project(tmp_path, monkeypatch)


def make_project(tmp_path, monkeypatch, extra: tuple[Chunk, ...] = ()) -> Path:
    """The retrier gem's store, filled directly (``extra``: chunks besides DOCS) and embedded."""
    monkeypatch.setenv("GEMDOC_MODEL_DIR", str(INT8))
    gem_root = tmp_path / "gems" / "retrier-2.0.0"
    (gem_root / "lib").mkdir(parents=True)
    (gem_root / "lib" / "retry.rb").write_text(SOURCE)
    app = tmp_path / "app"
    app.mkdir()
    (app / "Gemfile.lock").write_text("GEM\n  specs:\n    retrier (2.0.0)\n\nDEPENDENCIES\n  retrier\n")
    chunks = [Chunk("ri", t, t, body, f, line, "", "method", t.split("#")[-1]) for t, body, f, line in DOCS]
    chunks.append(Chunk("readme", "Retrier > Usage", "Retrier > Usage", "Call retry_on in a job class. " * 200,
                        "README.md", 3, kind="section", name="usage"))  # fmt: skip
    chunks += extra
    writer = Writer(paths.store_path())
    _, entry = writer.replace_gem(GemRecord("retrier", "2.0.0", str(gem_root), "gem", "d1", "complete"), chunks)
    writer.record_project(str(app.resolve()), lockfile.load(app / "Gemfile.lock").sha256, "direct",
                          [("retrier", "2.0.0")], [entry], True)  # fmt: skip
    writer.close()
    embed.embed_project(app.resolve())
    return app.resolve()


def reply(*args) -> dict:
    result = cli(*args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


ABSENT = "train a neural network on gpu tensors"


@pytest.mark.parametrize("command", ["search", "query", "vsearch"])
def test_no_evidence_means_no_results_and_a_diagnosis(project, command):
    data = reply(command, "-C", str(project), ABSENT)
    assert data["results"] == [] and data["refused"] is True
    diagnosis = data["diagnosis"]
    assert diagnosis["reason"] == "no_query_term_in_index" and diagnosis["hint"]
    assert {"distinctive", "matched", "ubiquitous", "coverage", "concentration", "min_coverage",
            "min_concentration"} <= set(diagnosis)  # fmt: skip
    text = cli(command, "-C", str(project), ABSENT).output
    assert "no answer in this bundle" in text and "coverage" in text
    files = cli(command, "-C", str(project), "--files", ABSENT)
    assert files.stdout == "" and "no answer in this bundle" in files.stderr
    partial = "retry a neural network job on gpu tensors"
    assert reply(command, "-C", str(project), partial)["diagnosis"]["reason"] == "too_little_of_the_query_matched"
    assert reply(command, "-C", str(project), "--no-refusal", partial)["results"]  # the gate, not an empty index


def test_scattered_words_are_refused_but_a_named_api_is_not(project):
    scattered = reply("search", "-C", str(project), "push discards usage attempts")  # every word, never together
    assert scattered["refused"] and scattered["diagnosis"]["reason"] == "matched_terms_are_scattered"
    named = reply("search", "-C", str(project), "Retry#retry_on")
    assert not named["refused"] and named["results"][0]["title"] == "Retry#retry_on"
    assert named["diagnosis"] is None
    hybrid = reply("query", "-C", str(project), "Retry#retry_on")
    assert hybrid["mode"] == "hybrid" and hybrid["results"][0]["title"] == "Retry#retry_on"
    bare = reply("query", "-C", str(project), "retry_on")  # a method name alone: still first, as in `search`
    assert bare["results"][0]["title"] == "Retry#retry_on"
    assert reply("vsearch", "-C", str(project), "Retry#retry_on")["mode"] == "vector"


def test_files_explain_min_score(project):
    files = cli("search", "-C", str(project), "--files", "retry up to a number of attempts")
    lines = files.stdout.splitlines()
    assert lines[0] == "retrier@2.0.0 lib/retry.rb:40"
    explained = reply("query", "-C", str(project), "--explain", "retry up to a number of attempts")
    top = explained["results"][0]
    assert set(top["arms"]) == {"keyword", "vector"} and top["explain"]["fields"]["title"] > 0
    assert "retry" in top["explain"]["matched"] and 0 < top["explain"]["coverage"] <= 1
    assert top["explain"]["gem_factor"] == 1.0  # one gem: its size is the median, and no profile was written
    assert "explain: score" in cli("search", "-C", str(project), "--explain", "retry error").stdout
    scores = [r["score"] for r in reply("search", "-C", str(project), "retry error job")["results"]]
    cut = reply("search", "-C", str(project), "--min-score", str(scores[0]), "retry error job")["results"]
    assert [r["score"] for r in cut] == [s for s in scores if s >= scores[0]]


def test_the_reply_fits_its_budget(project):
    full = reply("search", "-C", str(project), "-n", "20", "--no-refusal", "filler method", "--max-chars", "200000")
    assert full["omitted_for_budget"] == 0 and len(full["results"]) > 3
    small = cli("search", "-C", str(project), "-n", "20", "--no-refusal", "filler method", "--json", "--max-chars", "1500")
    data = json.loads(small.stdout)
    assert len(small.stdout.rstrip("\n")) <= 1500
    assert data["omitted_for_budget"] == len(full["results"]) - len(data["results"]) > 0
    tiny_out = cli("search", "-C", str(project), "call retry_on in a job class", "--json", "--max-chars", "900").stdout
    tiny = json.loads(tiny_out)
    assert tiny["results"][0].get("text_truncated") is True and len(tiny_out.rstrip("\n")) <= 900
    default = cli("query", "-C", str(project), "-n", "100", "--no-refusal", "filler method", "--json").stdout
    assert len(default.rstrip("\n")) <= 12_000


def test_every_uri_shows_its_chunk(project):
    for result in reply("search", "-C", str(project), "-n", "5", "--no-refusal", "retry job queue")["results"]:
        shown = cli("show", "-C", str(project), result["uri"])
        assert shown.exit_code == 0 and shown.stdout.startswith(result["title"]), (result["uri"], shown.output)
    line_40 = uri.make("retrier", "2.0.0", "lib/retry.rb", 40, "x")
    source = cli("show", "-C", str(project), "--source", "--context", "2", line_40)
    assert ">40    def retry_on(error, attempts: 5)" in source.stdout and len(source.stdout.splitlines()) == 6
    discard_on = uri.make("retrier", "2.0.0", "lib/retry.rb", None, "Retry#discard_on")
    by_title = cli("show", "-C", str(project), "--source", discard_on)
    assert by_title.exit_code == 1 and "has no source line" in by_title.output
    for bad, fragment in (("gemdoc://nope@1.0/lib/x.rb#L1", "not in the index"), ("http://x", "not a gemdoc URI"),
                          (uri.make("retrier", "2.0.0", "../../etc/passwd", 1, "x"), "not a file of")):  # fmt: skip
        result = cli("show", "-C", str(project), bad)
        assert result.exit_code == 2 and fragment in result.output and "Traceback" not in result.output  # usage


def test_show_prints_a_passage_cut_in_pieces_whole(tmp_path, monkeypatch):
    """A long section's pieces (`` · 2/2``) and a long class comment's sections share one location:
    `show` of any of them prints the passage whole, headed by its section or class; a method and an
    attribute of one name at one location are two passages; a store written before passages were
    recorded shows the chunk alone."""
    pieces = (Chunk("guides", "Guide > Backoff · 1/2", "Guide > Backoff", "Backoff waits longer each time.",
                    "guides/backoff.md", 7, kind="section", name="backoff"),
              Chunk("guides", "Guide > Backoff · 2/2", "Guide > Backoff", "Jitter spreads the retries out.",
                    "guides/backoff.md", 7, kind="section", name="backoff"),
              Chunk("ri", "Retry", "Retry", "Retry makes jobs retry.", "lib/retry.rb", 1, kind="module", name="retry"),
              Chunk("ri", "Retry", "Retry > Limits", "# Limits\nAttempts stop at five.", "lib/retry.rb", 1,
                    kind="module", name="retry"),
              Chunk("ri", "Retry#limit", "Retry#limit", "Returns the limit.", "lib/limit.rb", 2, kind="method",
                    name="limit"),
              Chunk("ri", "Retry#limit", "Retry#limit", "Sets the limit.", "lib/limit.rb", 2, kind="attribute",
                    name="limit"),
              *(Chunk("guides", f"Guide > Huge · {n}/2", "Guide > Huge", f"line {n}\n" * 9_000, "guides/huge.md", 1,
                      kind="section", name="huge") for n in (1, 2)))  # fmt: skip
    app = make_project(tmp_path, monkeypatch, pieces)
    backoff = uri.make("retrier", "2.0.0", "guides/backoff.md", 7, "x")
    second = cli("show", "-C", str(app), backoff).stdout
    assert second.startswith("Guide > Backoff\n") and "waits longer" in second and "Jitter" in second
    limits = cli("show", "-C", str(app), uri.make("retrier", "2.0.0", "lib/retry.rb", 1, "Retry")).stdout
    assert limits.startswith("Retry\n") and "makes jobs retry.\n\n# Limits\nAttempts stop at five." in limits
    limit = cli("show", "-C", str(app), uri.make("retrier", "2.0.0", "lib/limit.rb", 2, "Retry#limit")).stdout
    assert "Returns the limit." in limit and "Sets the limit." not in limit
    huge = uri.make("retrier", "2.0.0", "guides/huge.md", 1, "x")
    first = cli("show", "-C", str(app), huge).stdout.rstrip("\n")
    assert len(first) < show.MAX_PASSAGE + 300 and "line 1\n" in first and "line 2" not in first  # 126,000 whole
    assert first.endswith(f"[cut: the passage is 126,000 characters, 0 to 59,996 are shown; "
                          f"`gemdoc show --offset 59996 {huge}` prints the next]")
    pages, offset = [first], 59_996
    while (page := cli("show", "-C", str(app), "--offset", str(offset), huge).stdout).count("[cut:"):
        pages.append(page)
        offset = int(page.rsplit("--offset ", 1)[1].split()[0])
    assert f"[characters {offset:,} to 126,000 of 126,000]" in page.splitlines() and "[cut:" not in page
    assert sum(p.count("line 2") for p in [*pages, page]) == 9_000  # every line of the last piece, once
    assert show._cut_line("x" * 2_500) == "x" * 2_000 + " [… 500 more characters]"  # a --source line
    past = cli("show", "-C", str(app), "--offset", "126000", huge)
    assert past.exit_code == 2 and "past the end of this passage (126,000 characters)" in past.output
    conn = store.connect(paths.store_path())
    later = conn.execute("SELECT * FROM chunks WHERE title = 'Guide > Backoff · 2/2'").fetchone()
    assert "waits longer" in show.whole(conn, later, later["entry"])  # from any piece of the run
    conn.close()
    older = sqlite3.connect(paths.store_path())
    older.execute(f"DROP TABLE {store.PASSAGES}")
    older.commit()
    alone = cli("show", "-C", str(app), backoff).stdout
    assert alone.startswith("Guide > Backoff\n") and "waits longer" in alone and "Jitter" not in alone


def test_hostile_input_is_cut_or_saturated(project):
    long = reply("search", "-C", str(project), "retry " * 2000)
    assert long["notes"] == ["query truncated to its first 2000 characters"]
    assert len(reply("search", "-C", str(project), "-n", "999999", "retry")["results"]) <= 100
    assert cli("search", "-C", str(project), "--max-chars", "-5", "retry").exit_code == 0


def test_skill_install_project_and_global(tmp_path):
    assert cli("skill", "install", "-C", str(tmp_path)).exit_code == 0
    for directory in skills.SKILL_DIRS:
        assert (tmp_path / directory / "SKILL.md").read_text() == (ROOT / "SKILL.md").read_text()
    assert "unchanged" in cli("skill", "install", "-C", str(tmp_path)).stdout
    assert cli("skill", "install", "--global").exit_code == 0
    assert (Path(os.environ["HOME"]) / ".claude" / "skills" / "gemdoc" / "SKILL.md").is_file()


async def _mcp_session(project: Path) -> dict:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    keep = ("GEMDOC_HOME", "GEMDOC_MODEL_DIR", "HOME", "PATH", "PYTHONPATH")  # PYTHONPATH: the tree under test
    env = {k: os.environ[k] for k in keep if k in os.environ}
    params = StdioServerParameters(command=sys.executable, args=["-m", "gemdoc", "mcp"], env=env, cwd=str(project))
    out: dict = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            out["tools"] = {t.name for t in (await session.list_tools()).tools}

            async def call(name, **args):
                result = await session.call_tool(name, args)
                text = result.content[0].text
                return {"error": text} if result.is_error else json.loads(text)

            out["search"] = await call("search", query="retry up to a number of attempts", n=3)
            out["query"] = await call("query", question="retry up to a number of attempts", n=3)
            out["refused"] = await call("query", question=ABSENT)
            out["show"] = await call("show", uri=out["search"]["results"][0]["uri"])
            out["status"] = await call("status")
            out["hostile"] = [
                await call("search", query="x" * 100_000, n=-5, max_chars=10**9),
                await call("show", uri="gemdoc://nope@0/x#L1"),
                await call("show", uri="garbage"),
                await call("show", uri=out["search"]["results"][0]["uri"], source=True, context=10**9),
            ]
            out["after"] = await call("search", query="Retry#retry_on", n=1)
    return out


def test_mcp_server_through_a_real_client_session(project):
    out = anyio.run(_mcp_session, project)
    assert out["tools"] == {"search", "query", "show", "status"}
    assert out["search"] == reply("search", "-C", str(project), "-n", "3", "retry up to a number of attempts")
    assert out["query"]["mode"] == "hybrid" and out["query"]["results"][0]["title"] == "Retry#retry_on"
    assert out["refused"]["refused"] is True and out["refused"]["results"] == []
    assert out["show"]["text"].startswith("Retry#retry_on")
    assert out["status"]["indexed"] is True and out["status"]["project"] == str(project)
    search, unknown, garbage, source = out["hostile"]
    assert search.get("notes") and len(search["results"]) <= 1, search
    assert "not in the index" in unknown["error"] and "not a gemdoc URI" in garbage["error"]
    assert "def retry_on" in source["text"]
    assert out["after"].get("results", [{}])[0].get("title") == "Retry#retry_on", out["after"]  # the session survived


def test_mcp_without_the_package_is_one_line(tmp_path):
    code = "import sys; sys.modules['mcp'] = None; from gemdoc.cli import main; main()"
    done = subprocess.run([sys.executable, "-c", code, "mcp"], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 1 and done.stderr.strip() == "gemdoc: `gemdoc mcp` needs the mcp package: pip install 'gemdoc[mcp]'"


def test_status_names_the_gems_with_api_docs_only(tmp_path):
    """A gem whose package ships no README, guides or changelog (Debian's ruby-* packages) can answer only
    from its API docs: status says which, in text and JSON; a gem with prose is not listed."""
    from gemdoc import status

    app = tmp_path / "app"
    app.mkdir()
    (app / "Gemfile.lock").write_text("GEM\n  specs:\n    bare (1.0.0)\n    told (2.0.0)\n\nDEPENDENCIES\n  bare\n  told\n")
    api = [Chunk("ri", f"Bare#m{i}", f"Bare#m{i}", "A method.", "bare.rb", i, "", "method", f"m{i}") for i in range(3)]
    prose = [Chunk("readme", "Told > Usage", "Told > Usage", "How to use it.", "README.md", 1, kind="section")]
    writer = Writer(paths.store_path())
    entries = [writer.replace_gem(GemRecord(name, version, str(tmp_path), "gem", "d", "complete"), chunks)[1]
               for name, version, chunks in (("bare", "1.0.0", api), ("told", "2.0.0", api + prose))]  # fmt: skip
    writer.record_project(str(app.resolve()), lockfile.load(app / "Gemfile.lock").sha256, "direct",
                          [("bare", "1.0.0"), ("told", "2.0.0")], entries, True)  # fmt: skip
    writer.close()
    info = status.gather(app.resolve())
    assert info["api_docs_only"] == ["bare 1.0.0"], info
    assert "prose:     none for 1 gem, API docs only (no README, guides or changelog in the package): bare 1.0.0" in \
        status.text(info).splitlines()

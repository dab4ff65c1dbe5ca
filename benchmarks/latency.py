"""Query latency on the benchmark store, and scale on a synthetic 100,000-chunk store.

    python benchmarks/latency.py [--queries 300] [--synthetic 100000]

Warm latency: the ruler's questions (known and absent), cycled to --queries, in-process
(gemdoc.search) and whole-process (the `gemdoc search` command of a regular install of this
checkout, made in benchmarks/.work/latency-venv, and the same search through the click command). Scale: a store of
--synthetic chunks whose text is drawn from the benchmark store's own vocabulary: build
time, re-index of one changed gem, store open time, peak RSS, query time.
Results: benchmarks/results/latency.json.
"""

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import ruler  # noqa: E402

from gemdoc import paths, project, store  # noqa: E402
from gemdoc import search as searcher  # noqa: E402
from gemdoc.chunk import Chunk  # noqa: E402
from gemdoc.store import GemRecord, Writer  # noqa: E402

GEM_SIZE = 1000


def summary(samples_ms: list[float]) -> dict:
    ordered = sorted(samples_ms)
    return {
        "n": len(ordered),
        "median_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
    }


def questions(count: int) -> list[str]:
    known, absent = ruler.questions.load()
    pool = [q["q"] for q in known + absent]
    return [pool[i % len(pool)] for i in range(count)]


def warm_latency(count: int) -> dict:
    ruler.build("corpus")
    conn = store.connect(paths.store_path())
    scope = project.scope(conn, common.CORPUS.resolve()).gems
    qs = questions(count)
    for q in qs[:20]:
        searcher.search(conn, q, scope)  # warm the page cache
    in_process = []
    for q in qs:
        start = time.perf_counter()
        searcher.search(conn, q, scope)
        in_process.append((time.perf_counter() - start) * 1000)
    whole = whole_process(qs)
    return {
        "fingerprint": common.fingerprint(conn, scope),
        "in_process": summary(in_process),
        "whole_process": summary(whole["gemdoc"]),
        "whole_process_click": summary(whole["click"]),
    }


def whole_process(qs: list[str]) -> dict[str, list[float]]:
    """`gemdoc search` per question, and the same search through the click command (the path every
    other command takes), interleaved so that both see the same machine."""
    gemdoc = installed_gemdoc()
    python = str(Path(gemdoc).with_name("python"))
    ways = {"gemdoc": [gemdoc], "click": [python, "-c", "from gemdoc.cli import main; main()"]}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # a checkout on the path is not what users run
    samples: dict[str, list[float]] = {way: [] for way in ways}
    for q in qs:
        for way, command in ways.items():
            start = time.perf_counter()
            argv = [*command, "search", "--project", str(common.CORPUS), q]
            subprocess.run(argv, capture_output=True, check=True, env=env, cwd=common.WORK)
            samples[way].append((time.perf_counter() - start) * 1000)
    return samples


def installed_gemdoc() -> str:
    """The `gemdoc` command of a regular install of this checkout, as `pip install` gives users: an
    editable install's import hook alone adds tens of milliseconds to every start."""
    venv = common.WORK / "latency-venv"
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    if not (venv / "bin" / "gemdoc").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([*pip, str(common.ROOT.parent)], check=True)
    subprocess.run([*pip, "--force-reinstall", "--no-deps", str(common.ROOT.parent)], check=True)  # this code
    return str(venv / "bin" / "gemdoc")


def vocabulary(limit: int = 40000) -> list[str]:
    conn = store.connect(paths.store_path())
    words: list[str] = []
    for (body,) in conn.execute("SELECT body FROM chunks WHERE body != '' LIMIT ?", [limit]):
        words.extend(body.split()[:60])
    return words


def synthetic_chunks(rng: random.Random, words: list[str], gem: int, salt: str = "") -> list[Chunk]:
    chunks = []
    for i in range(GEM_SIZE):
        title = f"Synth{gem}::Mod{i // 50}#{rng.choice(words).strip('.,:;()`')[:20] or 'x'}_{i}"
        body = " ".join(rng.choices(words, k=rng.randint(10, 120))) + salt
        chunks.append(Chunk("ri", title, title, body, f"lib/synth{gem}/m{i // 50}.rb", i + 1, "call(x)", "method", f"m{i}"))
    return chunks


def scale(total: int) -> dict:
    words = vocabulary()
    common.use_home("scale")
    shutil.rmtree(paths.data_dir(), ignore_errors=True)
    rng = random.Random(7)
    gems = total // GEM_SIZE
    start = time.monotonic()
    writer = Writer(paths.store_path())
    for g in range(gems):
        writer.replace_gem(GemRecord(f"synth{g}", "1.0", "/x", "gem", f"d{g}", "complete", chunks=GEM_SIZE), synthetic_chunks(rng, words, g))
    build = time.monotonic() - start
    start = time.monotonic()
    writer.replace_gem(GemRecord("synth0", "1.0", "/x", "gem", "changed", "complete", chunks=GEM_SIZE), synthetic_chunks(rng, words, 0, " x"))
    reindex_one = time.monotonic() - start
    writer.close()
    start = time.perf_counter()
    conn = store.connect(paths.store_path())
    scope = [entry for (entry,) in conn.execute("SELECT id FROM gems WHERE state = 'complete'")]  # store entry ids
    assert searcher.Scope(conn, scope), "the synthetic store has no complete entry to search"
    open_ms = (time.perf_counter() - start) * 1000
    samples = []
    for q in questions(300):
        t = time.perf_counter()
        searcher.search(conn, q, scope)
        samples.append((time.perf_counter() - t) * 1000)
    return {
        "chunks": gems * GEM_SIZE,
        "gems": gems,
        "build_s": round(build, 1),
        "reindex_one_gem_s": round(reindex_one, 2),
        "store_open_ms": round(open_ms, 2),
        "store_mib": round(paths.store_path().stat().st_size / 2**20, 1),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "query": summary(samples),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--synthetic", type=int, default=100_000)
    args = parser.parse_args()
    warm = warm_latency(args.queries)
    big = scale(args.synthetic)
    common.save("latency", {"warm": warm, "scale": big})
    fp = warm["fingerprint"]
    print(f"warm, corpus {fp['gems']} gems / {fp['chunks']} chunks / {fp['digest']}:")
    print(f"  in-process    median {warm['in_process']['median_ms']} ms, p95 {warm['in_process']['p95_ms']} ms")
    print(f"  whole process median {warm['whole_process']['median_ms']} ms, p95 {warm['whole_process']['p95_ms']} ms")
    click = warm["whole_process_click"]
    print(f"  through click median {click['median_ms']} ms, p95 {click['p95_ms']} ms")
    print(f"synthetic {big['chunks']} chunks: build {big['build_s']} s, one gem re-indexed {big['reindex_one_gem_s']} s, "
          f"open {big['store_open_ms']} ms, {big['store_mib']} MiB, peak RSS {big['peak_rss_mib']} MiB, "
          f"query median {big['query']['median_ms']} ms p95 {big['query']['p95_ms']} ms")


if __name__ == "__main__":
    main()

"""The ruler: retrieval quality, silence and payload on known-answer and absent questions.

    python benchmarks/ruler.py [--corpus corpus|example] [--json]

Builds (or reuses) the benchmark store, runs gemdoc's search in-process on every
question (and once through the CLI, to prove the two agree), runs the grep-loop
baseline and plain `ri NAME` on the same questions, and prints a table and the
corpus fingerprint. Results go to benchmarks/results/ruler-<corpus>.json.
"""

import argparse
import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

from gemdoc import ask, embed, indexer, models, paths, project, render, store, vectors  # noqa: E402
from gemdoc import search as searcher  # noqa: E402
from gemdoc.encoder import Embedder  # noqa: E402

KINDS = ("howto", "api", "identifier", "version")
LOCATION_GEMS = ("rake", "rack", "activerecord")  # the share of ri methods given a file:line
LIMIT = 10
OPTIONS = ask.Options(limit=LIMIT)  # what the CLI does by default, refusal and budget included
GREP_UBIQUITOUS = 0.10  # a word in more than this share of the indexed files is "everywhere"


def load_questions(corpus: str) -> tuple[list[dict], list[str]]:
    known = yaml.safe_load((common.ROOT / "questions.yaml").read_text())
    absent = yaml.safe_load((common.ROOT / "absent.yaml").read_text())
    if corpus == "example":
        gems = set(yaml.safe_load((common.ROOT / "example-gems.yaml").read_text()))
        known = [k for k in known if k["gem"] in gems]
    return known, absent


def accepts(answer: str, hit: searcher.Hit) -> bool:
    if answer.startswith("doc:"):
        path, _, heading = answer[4:].partition("#")
        return hit.source_type != "ri" and hit.file == path and hit.heading.startswith(heading)
    return hit.source_type == "ri" and hit.title == answer


def answer_exists(conn, gem: str, version: str, answer: str) -> bool:
    if answer.startswith("doc:"):
        path, _, heading = answer[4:].partition("#")
        rows = conn.execute(
            "SELECT heading FROM chunks WHERE gem = ? AND version = ? AND file = ? AND source_type != 'ri'",
            [gem, version, path],
        ).fetchall()
        return any(r[0].startswith(heading) for r in rows)
    row = conn.execute(
        "SELECT 1 FROM chunks WHERE gem = ? AND version = ? AND title = ? AND source_type = 'ri'", [gem, version, answer]
    ).fetchone()
    return row is not None


def answer_files(conn, question: dict, versions: dict) -> set[str]:
    """The files an accepted answer lives in: what a file-granular grader accepts."""
    files = set()
    for answer in question["answers"]:
        if answer.startswith("doc:"):
            files.add(answer[4:].partition("#")[0])
        else:
            for (f,) in conn.execute(
                "SELECT file FROM chunks WHERE gem = ? AND version = ? AND title = ?",
                [question["gem"], versions[question["gem"]], answer],
            ):
                files.add(f)
    return {f"{question['gem']}/{f}" for f in files if f}


def rank_of(question: dict, hits: list[searcher.Hit]) -> int | None:
    for rank, hit in enumerate(hits, start=1):
        if hit.gem == question["gem"] and any(accepts(a, hit) for a in question["answers"]):
            return rank
    return None


def metrics(ranks: list[int | None]) -> dict:
    n = len(ranks) or 1
    return {
        "n": len(ranks),
        "hit@1": round(sum(1 for r in ranks if r == 1) / n, 3),
        "hit@3": round(sum(1 for r in ranks if r and r <= 3) / n, 3),
        "hit@10": round(sum(1 for r in ranks if r and r <= 10) / n, 3),
        "mrr": round(sum(1 / r for r in ranks if r) / n, 3),
    }


def grade(conn, scope, known, absent, ranker) -> dict:
    """One arm on every question: ``ranker(text)`` returns the reply the CLI would print."""
    by_kind, all_ranks, misses, payload, largest = defaultdict(list), [], [], 0, 0
    file_ranks = []
    versions = dict(scope)
    for question in known:
        reply = ranker(question["q"])
        hits = reply.hits
        size = len(render.results_json(reply, OPTIONS))
        payload, largest = payload + size, max(largest, size)
        rank = rank_of(question, hits)
        by_kind[question["kind"]].append(rank)
        all_ranks.append(rank)
        file_ranks.append(_file_rank(answer_files(conn, question, versions), [f"{h.gem}/{h.file}" for h in hits]))
        if rank != 1:
            misses.append({"q": question["q"], "rank": rank, "top": hits[0].title if hits else None})
    silent = sum(1 for q in absent if not ranker(q).hits)
    return {
        "overall": metrics(all_ranks),
        "by_kind": {k: metrics(by_kind[k]) for k in KINDS if by_kind[k]},
        "file_level": metrics(file_ranks),
        "silence": round(silent / (len(absent) or 1), 3),
        "payload_chars": payload,
        "largest_reply_chars": largest,
        "misses": misses,
    }


def arms(bundle: ask.Bundle) -> dict:
    """The rankers to grade, each the library call behind its command (refusal included):
    keyword always; vector and hybrid when the bundle has vectors."""
    rankers = {"search": lambda text: ask.keyword(bundle, text, OPTIONS)}
    if not vectors.any_embedded(bundle.conn, bundle.scope.gems):
        return rankers
    embedder = Embedder(models.configured())
    matrix = vectors.Matrix(bundle.conn, bundle.scope.gems)
    rankers["vsearch"] = lambda text: ask.semantic(bundle, text, OPTIONS, embedder, matrix, vector_only=True)
    rankers["query"] = lambda text: ask.semantic(bundle, text, OPTIONS, embedder, matrix, vector_only=False)
    return rankers


def _file_rank(accepted: set[str], ranked_files: list[str]) -> int | None:
    seen: list[str] = []
    for f in ranked_files:
        if f not in seen:
            seen.append(f)
    for rank, f in enumerate(seen, start=1):
        if f in accepted:
            return rank
    return None


def indexed_files(conn, scope) -> dict[str, str]:
    """Every file the index was built from (by citation), mapped to its lower-cased text."""
    texts = {}
    for name, version in scope:
        root = conn.execute("SELECT root FROM gems WHERE name = ? AND version = ?", [name, version]).fetchone()[0]
        for (rel,) in conn.execute(
            "SELECT DISTINCT file FROM chunks WHERE gem = ? AND version = ? AND file IS NOT NULL", [name, version]
        ):
            try:
                texts[f"{name}/{rel}"] = (Path(root) / rel).read_text(encoding="utf-8", errors="replace").lower()
            except OSError:
                continue
    return texts


def grade_grep(conn, scope, known) -> dict:
    """The grep loop: one substring search per content word, files ranked by distinct words hit."""
    texts = indexed_files(conn, scope)
    versions = dict(scope)
    hits_of: dict[str, set[str]] = {}

    def files_with(word: str) -> set[str]:
        if word not in hits_of:
            hits_of[word] = {f for f, t in texts.items() if word in t}
        return hits_of[word]

    ranks, payload, answered = [], 0, 0
    for question in known:
        words = [w for w in dict.fromkeys(re.findall(r"[a-z0-9_]+", question["q"].lower())) if len(w) > 1]
        content = [w for w in words if len(files_with(w)) <= GREP_UBIQUITOUS * len(texts)]
        counts: dict[str, int] = defaultdict(int)
        for word in content:
            for f in files_with(word):
                counts[f] += 1
        ranked = sorted(counts, key=lambda f: (-counts[f], f))
        answered += bool(ranked)
        payload += sum(_matching_chars(texts[f], content) for f in ranked)
        ranks.append(_file_rank(answer_files(conn, question, versions), ranked))
    return {"file_level": metrics(ranks), "payload_chars": payload, "answered": answered, "files": len(texts)}


def _matching_chars(text: str, words: list[str]) -> int:
    return sum(len(line) + 1 for line in text.splitlines() if any(w in line for w in words))


def grade_ri(known) -> dict:
    """What plain `ri NAME` (the developer's own ri, no gemdoc cache) answers for identifier questions."""
    idents = [q for q in known if q["kind"] == "identifier"]
    found = 0
    for question in idents:
        done = subprocess.run(["ri", "--no-pager", "-f", "markdown", question["q"]], capture_output=True, text=True)
        found += done.returncode == 0 and any(a.split("#")[-1] in done.stdout for a in question["answers"])
    return {"identifier_questions": len(idents), "answered": found}


def locations(conn, scope) -> dict:
    """ri methods joined to a source definition, for three real gems and the whole bundle."""
    rows = {
        n: conn.execute("SELECT located, methods FROM gems WHERE name = ? AND version = ?", [n, v]).fetchone()
        for n, v in scope
    }
    picked = {f"{n} {v}": list(rows[n]) for n, v in scope if n in LOCATION_GEMS}
    picked["all gems"] = [sum(r[0] or 0 for r in rows.values()), sum(r[1] or 0 for r in rows.values())]
    return picked


def cli_agrees(project_dir: Path, conn, scope, question: str) -> bool:
    done = subprocess.run(
        [sys.executable, "-m", "gemdoc", "search", "--json", "-n", str(LIMIT), "--project", str(project_dir), question],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    cli = [(r["gem"], r["title"]) for r in json.loads(done.stdout)["results"]]
    lib = [(h.gem, h.title) for h in ask.keyword(ask.open_bundle(project_dir.resolve()), question, OPTIONS).hits]
    return cli == lib


def build(corpus: str, embed_with: Path | None = None) -> Path:
    """Index the bundle (and embed it, when a model directory is given) in benchmarks/.work."""
    project_dir = common.CORPUS if corpus == "corpus" else common.EXAMPLE
    common.use_home(f"ruler-{corpus}")
    if corpus == "corpus":
        common.ensure_debian_packages()
    common.ensure_locked(project_dir)
    indexer.index_project(project_dir, scope="all", rebuild=True)
    if embed_with:
        os.environ["GEMDOC_MODEL_DIR"] = str(embed_with)
        embed.embed_project(project_dir.resolve())
    return project_dir


def run(corpus: str, embed_with: Path | None) -> dict:
    project_dir = build(corpus, embed_with)
    known, absent = load_questions(corpus)
    conn = store.connect(paths.store_path())
    own = project.scope(conn, project_dir.resolve())
    scope = [gem for gem, (_, state) in own.entries.items() if state == "complete"]  # (name, version) pairs
    bundle = ask.open_bundle(project_dir.resolve())
    graded = {name: grade(conn, scope, known, absent, ranker) for name, ranker in arms(bundle).items()}
    result = {
        "corpus": corpus,
        "fingerprint": common.fingerprint(conn, own.gems),
        "model": vectors.stored_identity(conn) if len(graded) > 1 else None,
        "questions": {"known": len(known), "absent": len(absent), "gems": len({q["gem"] for q in known})},
        "arms": graded,
        "search": graded["search"],
        "grep": grade_grep(conn, scope, known),
        "ri": grade_ri(known),
        "cli_agrees": cli_agrees(project_dir, conn, scope, known[0]["q"]),
        "locations": locations(conn, scope),
    }
    common.save(f"ruler-{corpus}", result)
    return result


def table(result: dict) -> str:
    fp = result["fingerprint"]
    s = result["search"]
    lines = [
        f"corpus {result['corpus']}: {fp['gems']} gems, {fp['chunks']} chunks, digest {fp['digest']}",
        f"{'arm':<10} {'kind':<11} {'n':>3} {'hit@1':>6} {'hit@3':>6} {'hit@10':>6} {'MRR':>6}",
    ]
    for arm, graded in result["arms"].items():
        for kind, m in [("all", graded["overall"]), *graded["by_kind"].items()]:
            lines.append(f"{arm:<10} {kind:<11} {m['n']:>3} {m['hit@1']:>6} {m['hit@3']:>6} {m['hit@10']:>6} {m['mrr']:>6}")
    g, f = result["grep"]["file_level"], s["file_level"]
    lines.append(f"file level: search hit@1 {f['hit@1']} MRR {f['mrr']} · grep loop hit@1 {g['hit@1']} MRR {g['mrr']}")
    silences = " · ".join(f"{arm} {g['silence']}" for arm, g in result["arms"].items())
    lines.append(f"silence on {result['questions']['absent']} absent questions: {silences}")
    lines.append(f"payload chars: search {s['payload_chars']} · grep {result['grep']['payload_chars']}")
    lines.append(f"plain ri NAME: {result['ri']['answered']}/{result['ri']['identifier_questions']} identifier questions")
    lines.append(f"CLI and library agree: {result['cli_agrees']}")
    return "\n".join(lines)


def regressions(result: dict) -> list[str]:
    """Metrics of any arm that fell more than the stated margin below the committed baseline."""
    baseline = json.loads((common.ROOT / "baseline.json").read_text())
    margin = baseline["margin"]
    failed = []
    for arm, expected in baseline[result["corpus"]].items():
        graded = result["arms"].get(arm)
        if graded is None:
            failed.append(f"{arm}: not graded (give --model-dir to grade vsearch and query)")
            continue
        found = {**graded["overall"], "silence": graded["silence"]}
        failed += [
            f"{arm} {metric} {found[metric]} < baseline {value} - margin {margin[metric]}"
            for metric, value in expected.items()
            if found[metric] < value - margin[metric]
        ]
    return failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=("corpus", "example"), default="corpus")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--misses", action="store_true", help="list the questions not answered first")
    parser.add_argument("--check", action="store_true", help="exit 1 if below benchmarks/baseline.json")
    parser.add_argument("--model-dir", type=Path, default=None, help="embed with this model directory and grade vsearch and query too")
    args = parser.parse_args()
    result = run(args.corpus, args.model_dir)
    print(json.dumps(result, indent=2) if args.json else table(result))
    if args.misses:
        for miss in result["search"]["misses"]:
            print(f"  rank {miss['rank']}: {miss['q']!r} -> {miss['top']}")
    if args.check:
        failed = regressions(result)
        for line in failed:
            print(f"REGRESSION: {line}")
        print(f"ruler check: {'failed' if failed else 'passed'} against benchmarks/baseline.json")
        sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

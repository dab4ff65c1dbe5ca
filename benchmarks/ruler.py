"""The ruler: retrieval quality and silence on answerable and absent questions, dev and test apart.

    python benchmarks/ruler.py [--model-dir DIR] [--reuse] [--json] [--check | --write-baseline]

Builds (or with --reuse, reuses) the benchmark store, runs each arm in-process on every question of
benchmarks/questions/ (split by benchmarks/questions.py), grades dev and test separately, runs the
grep-loop baseline and plain `ri NAME`, and checks the CLI agrees with the library. Arms: the questions
verbatim through `search`, `vsearch` and `query` as shipped (refusal on) and `search`/`query --no-refusal`;
and the agent arm, each question's agent form (benchmarks/agent_forms.py) when forms exist.
Results go to benchmarks/results/ruler-corpus.json.
"""

import argparse
import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import agent_forms  # noqa: E402
import common  # noqa: E402
import questions  # noqa: E402

from gemdoc import ask, cleanup, embed, indexer, models, paths, project, render, store, vectors  # noqa: E402
from gemdoc import search as searcher  # noqa: E402
from gemdoc.encoder import Embedder  # noqa: E402

KINDS = questions.KINDS
STYLES = ("user", "terse", "author")
LOCATION_GEMS = ("rake", "rack", "activerecord")  # the share of ri methods given a file:line
LIMIT = 10
OPTIONS = ask.Options(limit=LIMIT)  # what the CLI does by default, refusal and budget included
UNGATED = ask.Options(limit=LIMIT, refuse=False)
GREP_UBIQUITOUS = 0.10  # a word in more than this share of the indexed files is "everywhere"
CORPUS = "corpus"
GUARDED = ("hit@1", "mrr", "refused", "silence")  # what --check compares; refused is better lower


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


def metrics(ranks: list[int | None], refused: list[bool] | None = None) -> dict:
    """hit@k and MRR@10 over ``ranks`` (None: not in the first 10); ``refused``: which were refused."""
    n = len(ranks) or 1
    found = {
        "n": len(ranks),
        "hit@1": round(sum(1 for r in ranks if r == 1) / n, 3),
        "hit@3": round(sum(1 for r in ranks if r and r <= 3) / n, 3),
        "hit@10": round(sum(1 for r in ranks if r and r <= 10) / n, 3),
        "mrr": round(sum(1 / r for r in ranks if r and r <= 10) / n, 3),
    }
    if refused is not None:
        found["refused"] = round(sum(refused) / n, 3)
    return found


def grade(conn, scope, known: list[dict], absent: list[dict], ranker) -> dict:
    """One arm on the given questions: ``ranker(question)`` returns the reply the CLI would print."""
    by_kind, by_style, misses, payload, largest = defaultdict(list), defaultdict(list), [], 0, 0
    all_ranks, refused, file_ranks = [], [], []
    versions = dict(scope)
    for question in known:
        reply = ranker(question)
        size = len(render.results_json(reply, OPTIONS))
        payload, largest = payload + size, max(largest, size)
        rank = rank_of(question, reply.hits)
        by_kind[question["kind"]].append(rank)
        by_style[question["style"]].append(rank)
        all_ranks.append(rank)
        refused.append(reply.refused)
        file_ranks.append(_file_rank(answer_files(conn, question, versions), [f"{h.gem}/{h.file}" for h in reply.hits]))
        if rank != 1:
            top = reply.hits[0].title if reply.hits else None
            misses.append({"id": question["id"], "rank": rank, "refused": refused[-1], "top": top})
    silent = sum(1 for q in absent if not ranker(q).hits)
    return {
        "overall": metrics(all_ranks, refused),
        "by_kind": {k: metrics(by_kind[k]) for k in KINDS if by_kind[k]},
        "by_style": {k: metrics(by_style[k]) for k in STYLES if by_style[k]},
        "file_level": metrics(file_ranks),
        "silence": round(silent / (len(absent) or 1), 3),
        "payload_chars": payload,
        "largest_reply_chars": largest,
        "misses": misses,
    }


def verbatim(text_ranker):
    """A ranker of question texts as a ranker of questions: the question reaches gemdoc verbatim."""
    return lambda question: text_ranker(question["q"])


def arms(bundle: ask.Bundle) -> dict:
    """The verbatim arms, each the library call behind its command: keyword always; vector and
    hybrid when the bundle has vectors. ``--no-refusal`` arms rank whatever the evidence."""
    rankers = {
        "search": lambda text: ask.keyword(bundle, text, OPTIONS),
        "search --no-refusal": lambda text: ask.keyword(bundle, text, UNGATED),
    }
    if not vectors.any_embedded(bundle.conn, bundle.scope.gems):
        return rankers
    embedder = Embedder(models.configured())
    matrix = vectors.Matrix(bundle.conn, bundle.scope.gems)
    rankers["vsearch"] = lambda text: ask.semantic(bundle, text, OPTIONS, embedder, matrix, vector_only=True)
    rankers["query"] = lambda text: ask.semantic(bundle, text, OPTIONS, embedder, matrix, vector_only=False)
    rankers["query --no-refusal"] = lambda text: ask.semantic(bundle, text, UNGATED, embedder, matrix, False)
    return rankers


def agent_arm(project_dir: Path) -> tuple[list[dict[str, dict]], str]:
    """The samples of agent forms (each by question id) and a line saying what the agent arm is."""
    try:
        samples = agent_forms.load()
    except agent_forms.StaleForms as exc:
        return [], f"no forms: {exc}"
    if not samples:
        return [], "no forms: benchmarks/agent_forms.yaml is not written yet"
    return samples, (f"{len(samples)} samples of {len(samples[0])} forms written from gemdoc/SKILL.md "
                     f"{agent_forms.skill_sha256()[:12]}, every question asked once per sample")


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


def grade_grep(conn, scope, known: list[dict], texts: dict[str, str]) -> dict:
    """The grep loop: one substring search per content word, files ranked by distinct words hit."""
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
    data = json.loads(done.stdout)
    cli = [(r["gem"], r["title"]) for r in data["results"]]
    lib = [(h.gem, h.title) for h in ask.keyword(ask.open_bundle(project_dir.resolve()), question, OPTIONS).hits]
    return cli == lib[: len(cli)] and len(cli) + data["omitted_for_budget"] == len(lib)  # the budget cuts the reply


def build(corpus: str, embed_with: Path | None = None) -> Path:
    """Index the bundle (and embed it, when a model directory is given) in benchmarks/.work."""
    project_dir = common.CORPUS if corpus == "corpus" else common.EXAMPLE
    common.use_home(f"ruler-{corpus}")
    if corpus == "corpus":
        common.ensure_debian_packages()
    common.ensure_locked(project_dir)
    indexer.index_project(project_dir, scope="all", rebuild=True)
    cleanup.collect()  # a rebuild leaves the previous extractor's entries: store-wide rarity would count them twice
    if embed_with:
        os.environ["GEMDOC_MODEL_DIR"] = str(embed_with)
        embed.embed_project(project_dir.resolve())
    return project_dir



def prepare(embed_with: Path | None, reuse: bool) -> Path:
    """The corpus project, its store built (and embedded) unless ``reuse`` and the store is there
    (another checkout's copy of benchmarks/.work is reused as it is: its gems are keyed by source)."""
    common.use_home(f"ruler-{CORPUS}")
    if embed_with:
        os.environ["GEMDOC_MODEL_DIR"] = str(embed_with)
    if reuse and paths.store_path().exists():
        indexer.index_project(common.CORPUS, scope="all")  # re-reads what another extractor read
        cleanup.collect()  # entries of another extractor would count twice in store-wide rarity
        if embed_with:  # chunks the reuse re-extracted have no vectors yet
            embed.embed_project(common.CORPUS.resolve())
        check_store(common.CORPUS)
        return common.CORPUS
    return build(CORPUS, embed_with)


def check_store(project_dir: Path) -> None:
    """Stop unless the store holds this bundle's entries only, each chunk with a vector once any has
    one: another project's entries count twice in store-wide rarity, and an incomplete matrix lifts
    the evidence floors (a reused store after an extractor change, never embedded again)."""
    conn = store.connect(paths.store_path())
    own = project.scope(conn, project_dir.resolve())
    complete = conn.execute("SELECT count(*) FROM gems WHERE state = 'complete'").fetchone()[0]
    if complete > len(own.gems):
        raise SystemExit(f"the store holds {complete - len(own.gems)} entries of another project: "
                         "remove benchmarks/.work/ruler-corpus and build it again")  # fmt: skip
    if vectors.has_table(conn) and vectors.pending(conn, own.gems):
        raise SystemExit("some chunks have no vector: run ruler.py with --model-dir to embed them")


def grade_splits(conn, scope, known: list[dict], absent: list[dict], ranker) -> dict:
    return {
        split: grade(conn, scope, [q for q in known if q["split"] == split], [a for a in absent if a["split"] == split],
                     ranker)
        for split in questions.SPLITS
    }  # fmt: skip


def run(embed_with: Path | None, reuse: bool = False) -> dict:
    project_dir = prepare(embed_with, reuse)
    known, absent = questions.load()
    conn = store.connect(paths.store_path())
    own = project.scope(conn, project_dir.resolve())
    scope = [gem for gem, (_, state) in own.entries.items() if state == "complete"]  # (name, version) pairs
    bundle = ask.open_bundle(project_dir.resolve())
    graded = {name: grade_splits(conn, scope, known, absent, verbatim(r)) for name, r in arms(bundle).items()}
    samples, agent_note = agent_arm(project_dir)
    if samples:
        asked = agent_forms.asked(known, samples), agent_forms.asked(absent, samples)
        graded["agent"] = grade_splits(conn, scope, *asked, lambda q: agent_forms.run(q["form"], project_dir))
    texts = indexed_files(conn, scope)
    result = {
        "corpus": CORPUS,
        "fingerprint": common.fingerprint(conn, own.gems),
        "model": vectors.stored_identity(conn) if "query" in graded else None,
        "questions": questions.shares(known, absent) | {"gems": len({q["gem"] for q in known})},
        "split_rule": f"sha256('{questions.SPLIT_SEED}:' + id) < {questions.DEV_SHARE} of 2**256 -> dev",
        "agent": agent_note,
        "arms": graded,
        "grep": {s: grade_grep(conn, scope, [q for q in known if q["split"] == s], texts) for s in questions.SPLITS},
        "ri": grade_ri(known),
        "cli_agrees": cli_agrees(project_dir, conn, scope, known[0]["q"]),
        "locations": locations(conn, scope),
    }
    common.save(f"ruler-{CORPUS}", result)
    return result


def table(result: dict) -> str:
    fp = result["fingerprint"]
    q = result["questions"]
    lines = [
        f"corpus {result['corpus']}: {fp['gems']} gems, {fp['chunks']} chunks, digest {fp['digest']}",
        f"{q['answerable']} answerable ({q['users_words']:.0%} in users' words, {q['version']:.0%} about versions), "
        f"{q['absent']} absent; dev/test answerable {q['by_split']['dev'][0]}/{q['by_split']['test'][0]}, "
        f"absent {q['by_split']['dev'][1]}/{q['by_split']['test'][1]}",
        f"agent arm: {result['agent']}",
        f"{'arm':<20} {'split':<5} {'n':>3} {'hit@1':>6} {'hit@3':>6} {'MRR':>6} {'refused':>7} {'silence':>7} {'ident@1':>7}",
    ]
    for arm, splits in result["arms"].items():
        for split, g in splits.items():
            m, ident = g["overall"], g["by_kind"].get("identifier", {}).get("hit@1", "-")
            lines.append(f"{arm:<20} {split:<5} {m['n']:>3} {m['hit@1']:>6} {m['hit@3']:>6} {m['mrr']:>6} "
                         f"{m['refused']:>7} {g['silence']:>7} {ident:>7}")  # fmt: skip
    for split, g in result["grep"].items():
        f, s = g["file_level"], result["arms"]["search"][split]["file_level"]
        lines.append(f"file level ({split}): search hit@1 {s['hit@1']} MRR {s['mrr']} · grep hit@1 {f['hit@1']} MRR {f['mrr']}")
    lines.append(f"plain ri NAME: {result['ri']['answered']}/{result['ri']['identifier_questions']} identifier questions")
    lines.append(f"CLI and library agree: {result['cli_agrees']}")
    return "\n".join(lines)


def guarded(graded: dict) -> dict:
    """The figures --check compares, per split: silence only for arms that may refuse."""
    found = {**graded["overall"], "silence": graded["silence"]}
    return {m: found[m] for m in GUARDED}


def regressions(result: dict, baseline: dict) -> list[str]:
    """Figures of any arm, on dev or test, worse than the committed baseline by more than the margin."""
    margin, failed = baseline["margin"], []
    for split in questions.SPLITS:
        for arm, expected in baseline[split].items():
            graded = result["arms"].get(arm)
            if graded is None:
                failed.append(f"{arm}: not graded (give --model-dir for vsearch and query; forms for agent)")
                continue
            found = guarded(graded[split])
            for metric, value in expected.items():
                worse = found[metric] - value if metric == "refused" else value - found[metric]
                if worse > margin[metric] + 1e-9:
                    failed.append(f"{split} {arm} {metric} {found[metric]} vs baseline {value} (margin {margin[metric]})")
    return failed


def write_baseline(result: dict) -> None:
    path = common.ROOT / "baseline.json"
    baseline = json.loads(path.read_text())
    for split in questions.SPLITS:
        baseline[split] = {arm: guarded(g[split]) for arm, g in result["arms"].items()}
    baseline.pop(CORPUS, None)
    path.write_text(json.dumps(baseline, indent=2, sort_keys=True) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--misses", action="store_true", help="list the questions query does not answer first")
    parser.add_argument("--check", action="store_true", help="exit 1 if dev or test fall below benchmarks/baseline.json")
    parser.add_argument("--write-baseline", action="store_true", help="rewrite benchmarks/baseline.json from this run")
    parser.add_argument("--reuse", action="store_true", help="use the store in benchmarks/.work when it exists")
    parser.add_argument("--model-dir", type=Path, default=None, help="embed with this model and grade vsearch and query")
    args = parser.parse_args()
    result = run(args.model_dir, args.reuse)
    print(json.dumps(result, indent=2) if args.json else table(result))
    if args.misses:
        arm = "query" if "query" in result["arms"] else "search"
        for split, graded in result["arms"][arm].items():
            for miss in graded["misses"]:
                print(f"  {split} {miss['id']}: rank {miss['rank']} refused {miss['refused']} -> {miss['top']}")
    if args.write_baseline:
        write_baseline(result)
    if args.check:
        failed = regressions(result, json.loads((common.ROOT / "baseline.json").read_text()))
        for line in failed:
            print(f"REGRESSION: {line}")
        print(f"ruler check: {'failed' if failed else 'passed'} against benchmarks/baseline.json (dev and test)")
        sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

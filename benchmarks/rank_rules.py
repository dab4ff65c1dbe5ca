"""Ranking rules for questions in users' words (issue #14 item 3), each measured on dev and on test.

    python benchmarks/rank_rules.py [--model-dir DIR] [--misses]

Reuses the benchmark store ruler.py built in benchmarks/.work/ruler-corpus (it never indexes or
embeds). Every answerable question of benchmarks/ is asked verbatim, as a user wrote it, to `search`
and (with --model-dir and vectors in the store) `query`, both with --no-refusal: refusal is the
evidence gate's business, ranking is measured on its own. Each rule is a switch in gemdoc; the
script grades the shipped setting and the same with one rule flipped, on the dev and the test split.
A rule ships on only if it helps on dev and test agrees (does not lose on test). Results go to
benchmarks/results/rank-rules.json.

The split is benchmarks/questions.py's: a seeded hash of each question's id.
"""

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))
import agent_forms  # noqa: E402
import common  # noqa: E402
import questions as questions_file  # noqa: E402
import ruler  # noqa: E402

from gemdoc import ask, hybrid, models, paths, roles, vectors  # noqa: E402
from gemdoc import search as searcher  # noqa: E402

OPTIONS = ask.Options(limit=10, refuse=False)
# name -> (module, attribute, value when on, value when off)
RULES = {
    "named_gem": (searcher, "NAMED_GEM_FACTOR", 3.0, 1.0),
    "locked_release": (searcher, "LOCKED_RELEASE_FACTOR", 3.0, 1.0),
    "clear_first_only": (hybrid, "FIRST_MARGIN", 1.5, 1.0),
    "named_clear": (hybrid, "NAMED_CLEAR", True, False),
    "named_first": (hybrid, "NAMED_FIRST", True, False),
    "akin_names": (hybrid, "AKIN_NAMES", True, False),
    "akin_modules": (searcher, "AKIN_MODULES", True, False),
    "akin_siblings": (searcher, "AKIN_SIBLINGS", True, False),
    "question_first": (hybrid, "QUESTION_FIRST", True, False),
    "release_notes_first": (hybrid, "RELEASE_NOTES_FIRST", 3, 0),
    "scene_half": (searcher, "SCENE_WEIGHT", 0.5, 1.0),
    "named_asked_only": (searcher, "NAMED_ASKED_ONLY", True, False),
    "size_prior": (searcher, "SIZE_POWER", 0.1, 0.0),
    "role_prior": (roles, "ROLE_WEIGHT", 0.5, 0.0),
    "exact_names_first": (searcher, "EXACT_NAMES_FIRST", True, False),
    "whole_versions": (searcher, "WHOLE_VERSIONS", True, False),
    "version_owners": (searcher, "VERSION_OWNERS", True, False),
}


def load() -> list[dict]:
    """Every answerable question, with its id and split (benchmarks/questions.py)."""
    return questions_file.load()[0]


def arms(bundle: ask.Bundle, model_dir: Path | None) -> dict:
    """Rankers of questions: `search` and `query` read the question verbatim; `agent` runs the
    invocation a fresh agent wrote for it (benchmarks/agent_forms.yaml), with --no-refusal."""
    rankers = {"search": lambda question: ask.keyword(bundle, question["q"], OPTIONS)}
    if model_dir is None or not vectors.any_embedded(bundle.conn, bundle.scope.gems):
        return rankers
    from gemdoc.encoder import Embedder

    embedder = Embedder(models.configured())
    matrix = vectors.Matrix(bundle.conn, bundle.scope.gems)
    if not matrix.complete:  # chunks without a vector never reach the vector arm
        raise SystemExit("some chunks have no vector: run ruler.py with --model-dir to embed them")
    rankers["query"] = lambda question: ask.semantic(bundle, question["q"], OPTIONS, embedder, matrix, False)
    rankers["agent"] = lambda question: agent_forms.run(ungated(question["form"]), common.CORPUS)
    return rankers


def asked_by(questions: list[dict], rankers: dict) -> dict[str, list[dict]]:
    """The questions each arm is graded on: the agent arm's once per sample of forms (agent_forms.asked)."""
    samples = agent_forms.load() if "agent" in rankers else []
    return {arm: agent_forms.asked(questions, samples) if arm == "agent" else questions for arm in rankers}


def ungated(form: dict) -> dict:
    return form | {"args": form["args"] | {"no_refusal": True}}


def grade(questions: list[dict], ranker) -> dict:
    """Per split: hit@1, hit@3, MRR@10, and each question's rank (for the misses)."""
    ranks = {q["id"]: ruler.rank_of(q, ranker(q).hits) for q in questions}
    out = {}
    for split in ("dev", "test"):
        out[split] = ruler.metrics([ranks[q["id"]] for q in questions if q["split"] == split])
    out["ranks"] = ranks
    return out


def flipped(rule: str):
    """A context in which ``rule`` takes the other setting than it ships with."""
    module, attribute, on, off = RULES[rule]
    shipped = getattr(module, attribute)

    class Flip:
        def __enter__(self):
            setattr(module, attribute, off if shipped == on else on)

        def __exit__(self, *exc):
            setattr(module, attribute, shipped)

    return Flip()


def verdict(shipped_on: bool, base: dict, other: dict) -> dict:
    """``base``: graded as shipped; ``other``: the rule flipped. Deltas are rule on minus rule off."""
    on, off = (base, other) if shipped_on else (other, base)
    delta = {s: {m: round(on[s][m] - off[s][m], 3) for m in ("hit@1", "hit@3", "mrr")} for s in ("dev", "test")}
    helps_dev = delta["dev"]["hit@1"] > 0 or (delta["dev"]["hit@1"] == 0 and delta["dev"]["mrr"] > 0)
    test_agrees = delta["test"]["hit@1"] >= 0 and delta["test"]["mrr"] >= 0
    return {"on": {s: on[s] for s in ("dev", "test")}, "off": {s: off[s] for s in ("dev", "test")},
            "delta": delta, "keep": helps_dev and test_agrees}  # fmt: skip


def run(model_dir: Path | None, latency_count: int = 0) -> dict:
    common.use_home("ruler-corpus")
    if model_dir:
        os.environ["GEMDOC_MODEL_DIR"] = str(model_dir)
    bundle = ask.open_bundle(common.CORPUS.resolve())
    questions = [q for q in load() if q["gem"] in {g for g, _ in bundle.scope.entries}]
    rankers = arms(bundle, model_dir)
    result: dict = {"questions": {s: sum(q["split"] == s for q in questions) for s in ("dev", "test")},
                    "split": f"benchmarks/questions.py, seed {questions_file.SPLIT_SEED}",
                    "shipped": {}, "rules": {}}  # fmt: skip
    conn = sqlite3.connect(paths.store_path())
    result["fingerprint"] = common.fingerprint(conn, bundle.scope.gems)["digest"]
    asked = asked_by(questions, rankers)
    base = {arm: grade(asked[arm], ranker) for arm, ranker in rankers.items()}
    result["shipped"] = {arm: {s: g[s] for s in ("dev", "test")} for arm, g in base.items()}
    for rule, (module, attribute, on, _) in RULES.items():
        shipped_on = getattr(module, attribute) == on
        with flipped(rule):
            other = {arm: grade(asked[arm], ranker) for arm, ranker in rankers.items()}
        arms_verdict = {arm: verdict(shipped_on, base[arm], other[arm]) for arm in rankers}
        setting = f"{module.__name__}.{attribute}"
        result["rules"][rule] = {"shipped": shipped_on, "setting": setting, "arms": arms_verdict}
    if latency_count:
        result["latency"] = latency(questions, model_dir, latency_count)
    result["misses"] = {arm: {q["id"]: g["ranks"][q["id"]] for q in asked[arm] if g["ranks"][q["id"]] != 1
                              and q["split"] == "dev"} for arm, g in base.items()}  # fmt: skip
    return result


def latency(questions: list[dict], model_dir: Path | None, count: int) -> dict:
    """Whole-process median of `gemdoc search` and (with a model) `gemdoc query` on ``count`` dev questions."""
    env = {**os.environ, "PYTHONPATH": str(common.ROOT.parent)}
    commands = ["search", "query"] if model_dir else ["search"]
    out = {}
    for command in commands:
        samples = []
        for question in [q for q in questions if q["split"] == "dev"][:count]:
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "gemdoc", command, "--json", "--project", str(common.CORPUS),
                            question["q"]], env=env, capture_output=True, check=True)  # fmt: skip
            samples.append((time.perf_counter() - start) * 1000)
        out[command] = {"n": len(samples), "median_ms": round(statistics.median(samples), 1)}
    return out


def table(result: dict) -> str:
    lines = [f"questions: dev {result['questions']['dev']}, test {result['questions']['test']}"]
    for arm, graded in result["shipped"].items():
        lines.append(f"shipped {arm:<7} " + " · ".join(
            f"{s} hit@1 {m['hit@1']} hit@3 {m['hit@3']} MRR {m['mrr']}" for s, m in graded.items()))  # fmt: skip
    for rule, data in result["rules"].items():
        for arm, v in data["arms"].items():
            d = v["delta"]
            lines.append(f"{rule:<16} {arm:<7} on-off dev hit@1 {d['dev']['hit@1']:+.3f} MRR {d['dev']['mrr']:+.3f}"
                         f" · test hit@1 {d['test']['hit@1']:+.3f} MRR {d['test']['mrr']:+.3f}"
                         f" · shipped {'on' if data['shipped'] else 'off'} · keep {v['keep']}")  # fmt: skip
    for command, timing in result.get("latency", {}).items():
        lines.append(f"latency {command}: median {timing['median_ms']} ms over {timing['n']} whole-process calls")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", type=Path, default=None, help="grade query too, with this model directory")
    parser.add_argument("--latency", type=int, default=0, metavar="N", help="also time N whole-process calls")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.model_dir, args.latency)
    common.save("rank-rules", result)
    print(json.dumps(result, indent=2) if args.json else table(result))


if __name__ == "__main__":
    main()

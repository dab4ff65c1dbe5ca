"""How far re-ordering the keyword arm's candidates could lift first place on the ruler.

    python benchmarks/ranking_ceiling.py

For each known-answer question, the keyword arm's first 50 results (one per citation, no
refusal) are the pool. Three measurements:
- where the accepted answer sits in the pool: a perfect re-ranker of the first k results
  reaches hit@1 = hit@k and no better;
- a learned linear re-ranker of the pool (pairwise logistic regression on the features below),
  graded by 5-fold cross-validation over questions with several shuffles, and fitted on every
  question at once (an optimistic bound: it grades on what it learned from). Features: the
  shipped score and rank, each field's bm25, coverage, the share of terms matched, source type
  and kind, a bare signature, body length, how well the chunk's gem and owning class match the
  question, and (second run) the cosine of the chunk's vector to the question's from the
  ruler's model;
- whether the first result of a miss comes from the question's own gem, and how much of the
  question's rarity the accepted answer holds when it is first and when it is not.
Results: benchmarks/results/ceiling.json.
"""

import bisect
import heapq
import json
import math
import random
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import fusion_rules  # noqa: E402
import ruler  # noqa: E402

from gemdoc import ask, models, vectors  # noqa: E402
from gemdoc import search as searcher  # noqa: E402
from gemdoc.encoder import Embedder  # noqa: E402

POOL = 50
DEPTHS = (1, 3, 10, 50)
FOLDS, SHUFFLES = 5, 5
GEM_TOP = 3  # a gem's match with the question: the sum of its best GEM_TOP chunk scores
LEXICAL = ["score", "reciprocal rank", "bm25 title", "bm25 names", "bm25 signature", "bm25 body", "coverage",
           "terms matched", "ri", "class or module", "readme", "doc or guides", "changelog", "bare signature",
           "body length", "gem match", "owner match"]  # fmt: skip


class Context:
    """What a feature needs beyond the hit: every chunk's gem, and each method's owning class."""

    def __init__(self, bundle: ask.Bundle):
        rows = bundle.conn.execute(
            "SELECT name, first_id FROM gems WHERE state = 'complete' AND first_id IS NOT NULL ORDER BY first_id"
        ).fetchall()
        self.gems, self.starts = [r[0] for r in rows], [r[1] for r in rows]
        self.owner = _owners(bundle)

    def gem_of(self, rowid: int) -> str:
        return self.gems[bisect.bisect_right(self.starts, rowid) - 1]


def _owners(bundle: ask.Bundle) -> dict[int, int]:
    """Method chunk id -> the chunk of the class or module that defines it, in the same gem."""
    entries = bundle.conn.execute("SELECT id, gem, kind, title FROM chunks WHERE source_type = 'ri'").fetchall()
    classes = {(gem, title): i for i, gem, kind, title in entries if kind in ("class", "module")}
    owners = {}
    for i, gem, kind, title in entries:
        match = re.match(r"^(.*?)(?:#|::)[^:#]+$", title)
        if kind not in ("class", "module") and match and (gem, match[1]) in classes:
            owners[i] = classes[(gem, match[1])]
    return owners


def pool(bundle: ask.Bundle, ctx: Context, text: str) -> tuple[list[searcher.Hit], np.ndarray]:
    """The keyword arm's first POOL results and one lexical feature row per result."""
    found = searcher.run(bundle.conn, text, bundle.scope.gems, POOL)
    if not found.hits:
        return [], np.zeros((0, len(LEXICAL)))
    scope = searcher.Scope(bundle.conn, bundle.scope.gems)
    raw = searcher._score(found.plan, scope)[0]
    gem_match, top_raw = _gem_match(raw, ctx), max(raw.values(), default=1.0)
    fields = searcher.explain(bundle.conn, found.plan, found.hits)
    kept = max(1, len(found.plan.kept))
    rows = []
    for rank, hit in enumerate(found.hits, start=1):
        f = fields[hit.id]["fields"]
        rows.append([
            math.log1p(100 * hit.score / found.hits[0].score), 1 / rank,
            f.get("title", 0.0), f.get("names", 0.0), f.get("signature", 0.0), f.get("body", 0.0),
            fields[hit.id]["coverage"], len(hit.matched) / kept,
            hit.source_type == "ri", hit.kind in ("class", "module"), hit.source_type == "readme",
            hit.source_type in ("doc", "guides"), hit.source_type == "changelog",
            hit.source_type == "ri" and not hit.body, math.log1p(len(hit.body)),
            gem_match.get(ctx.gem_of(hit.id), 0.0), raw.get(ctx.owner.get(hit.id, -1), 0.0) / top_raw,
        ])  # fmt: skip
    return found.hits, np.array(rows, dtype=float)


def _gem_match(raw: dict[int, float], ctx: Context) -> dict[str, float]:
    per_gem: dict[str, list[float]] = {}
    for rowid, score in raw.items():
        per_gem.setdefault(ctx.gem_of(rowid), []).append(score)
    sums = {gem: sum(heapq.nlargest(GEM_TOP, scores)) for gem, scores in per_gem.items()}
    best = max(sums.values(), default=1.0)
    return {gem: s / best for gem, s in sums.items()}


def cosines(bundle: ask.Bundle, known: list[dict], pools: list) -> list[np.ndarray]:
    """Each pooled chunk's cosine to its question, with the ruler's model."""
    embedder = Embedder(models.configured())
    matrix = vectors.Matrix(bundle.conn, bundle.scope.gems)
    row = {int(i): j for j, i in enumerate(matrix.ids)}
    out = []
    for question, (hits, _) in zip(known, pools):
        q = embedder.embed_query(question["q"])
        out.append(np.array([[float(matrix.matrix[row[h.id]] @ q) if h.id in row else 0.0] for h in hits]))
    return out


class Reranker:
    """A linear score over standardised features, fitted on (accepted, other) pairs of one question."""

    def __init__(self, pools: list, labels: list[np.ndarray], questions: list[int]):
        stacked = np.vstack([pools[i][1] for i in questions if len(pools[i][1])])
        self.mean, self.scale = stacked.mean(0), stacked.std(0) + 1e-9
        pairs = [a - b for i in questions if labels[i].any()
                 for a in self._z(pools[i][1][labels[i]]) for b in self._z(pools[i][1][~labels[i]])]  # fmt: skip
        self.weights = _logistic(np.array(pairs))

    def _z(self, x: np.ndarray) -> np.ndarray:
        return (x - self.mean) / self.scale

    def order(self, hits: list[searcher.Hit], x: np.ndarray) -> list[searcher.Hit]:
        if not hits:
            return []
        scores = self._z(x) @ self.weights
        return [hits[j] for j in sorted(range(len(hits)), key=lambda j: (-scores[j], j))]


def _logistic(pairs: np.ndarray, steps: int = 300, rate: float = 0.5, l2: float = 0.01) -> np.ndarray:
    """Weights w maximising the mean log sigmoid(w . pair), by gradient ascent."""
    w = np.zeros(pairs.shape[1])
    for _ in range(steps):
        margin = pairs @ w
        gradient = (pairs * (1 / (1 + np.exp(margin)))[:, None]).mean(0) - l2 * w
        w += rate * gradient
    return w


def cross_validated(known: list[dict], pools: list, labels: list[np.ndarray]) -> dict:
    """Each question re-ranked by a model fitted on the other folds; mean and range over shuffles."""
    runs = []
    for seed in range(SHUFFLES):
        order = list(range(len(known)))
        random.Random(seed).shuffle(order)
        ranks: list[int | None] = [None] * len(known)
        for fold in range(FOLDS):
            held_out = set(order[fold::FOLDS])
            model = Reranker(pools, labels, [i for i in order if i not in held_out])
            for i in held_out:
                ranks[i] = ruler.rank_of(known[i], model.order(*pools[i]))
        runs.append(ruler.metrics(ranks))
    return {key: {"mean": round(sum(r[key] for r in runs) / len(runs), 3),
                  "min": min(r[key] for r in runs), "max": max(r[key] for r in runs)}
            for key in ("hit@1", "hit@3", "mrr")}  # fmt: skip


def learned(known: list[dict], pools: list, names: list[str]) -> dict:
    labels = [np.array([ruler.rank_of(q, [h]) == 1 for h in hits], dtype=bool) for q, (hits, _) in zip(known, pools)]
    fitted = Reranker(pools, labels, list(range(len(known))))
    ranks = [ruler.rank_of(q, fitted.order(*p)) for q, p in zip(known, pools)]
    return {"features": names, "cross_validated": cross_validated(known, pools, labels),
            "fitted_on_all": ruler.metrics(ranks),
            "weights": {n: round(float(w), 3) for n, w in zip(names, fitted.weights)}}  # fmt: skip


def misses_by_gem(known: list[dict], pools: list) -> dict:
    """Of the questions whose answer is not first, where the first result comes from."""
    own = other = 0
    for question, (hits, _) in zip(known, pools):
        if hits and ruler.rank_of(question, hits[:1]) != 1:
            own, other = (own + 1, other) if hits[0].gem == question["gem"] else (own, other + 1)
    return {"own_gem": own, "other_gem": other}


def answer_coverage(known: list[dict], pools: list) -> dict:
    """Median share of the question's rarity the accepted answer holds, by where it ranks."""
    column = LEXICAL.index("coverage")
    first, later = [], []
    for question, (hits, x) in zip(known, pools):
        ranks = [j for j, hit in enumerate(hits) if ruler.rank_of(question, [hit]) == 1]
        if ranks:
            (first if ranks[0] == 0 else later).append(float(x[ranks[0], column]))
    return {"first": round(float(np.median(first)), 3), "not_first": round(float(np.median(later)), 3),
            "not_first_n": len(later)}  # fmt: skip


def main() -> None:
    bundle = fusion_rules.prepare(fusion_rules.MODELS / fusion_rules.RULER_MODEL)
    known, _ = ruler.questions.load("dev")  # fitted on dev only
    ctx = Context(bundle)
    pools = [pool(bundle, ctx, q["q"]) for q in known]
    ranks = [ruler.rank_of(q, hits) for q, (hits, _) in zip(known, pools)]
    with_cosine = [(hits, np.hstack([x, c]) if len(x) else np.zeros((0, len(LEXICAL) + 1)))
                   for (hits, x), c in zip(pools, cosines(bundle, known, pools))]  # fmt: skip
    result = {
        "questions": len(known),
        "pool": POOL,
        "shipped": ruler.metrics([r if r and r <= 10 else None for r in ranks]),
        "answer_within": {str(k): round(sum(1 for r in ranks if r and r <= k) / len(known), 3) for k in DEPTHS},
        "misses_first_result": misses_by_gem(known, pools),
        "answer_coverage": answer_coverage(known, pools),
        "learned_lexical": learned(known, pools, LEXICAL),
        "learned_with_cosine": learned(known, with_cosine, [*LEXICAL, "cosine"]) | {"model": fusion_rules.RULER_MODEL},
        "folds": FOLDS,
        "shuffles": SHUFFLES,
    }
    common.save("ceiling", result)
    print(json.dumps({k: result[k] for k in ("shipped", "answer_within", "misses_first_result")}, indent=2))
    for key in ("learned_lexical", "learned_with_cosine"):
        print(key, json.dumps({k: result[key][k] for k in ("cross_validated", "fitted_on_all")}))


if __name__ == "__main__":
    main()

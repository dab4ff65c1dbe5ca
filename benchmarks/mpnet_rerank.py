"""Does all-mpnet-base-v2 pay as a re-ranker of `query --no-refusal`'s top 20? (issue #14 item 5)

    python benchmarks/mpnet_rerank.py [--mpnet /work/mpnet/onnx] [--depth 20] [--budget SECONDS]

For every answerable question of the ruler (benchmarks/questions.yaml, ids core-001…, and
benchmarks/questions/*.yaml), split once into dev (60 %) and test (40 %) by the hash of its id, it
takes hybrid `query --no-refusal`'s top DEPTH in-process (gemdoc.ask, MiniLM int8 vectors of the
benchmark store, as benchmarks/ruler.py runs it) and re-orders them four ways per model:
by the model's cosine between question and chunk alone ("cosine"), and by reciprocal rank fusion
(k = 60) of that cosine order with the hybrid order ("rrf"). Models: mpnet fp32 (the directory
benchmarks/mpnet_export.py writes), and MiniLM, the shipped model, int8 and fp32 (../shared/models).
Every model embeds the chunk text gemdoc embeds (vectors.chunk_text, first encoder.MAX_CHARS
characters) with gemdoc's own OnnxEncoder (one thread per batch, mean pooling, L2 norm);
candidate vectors are cached across questions and runs in benchmarks/.work/mpnet-cache. mpnet costs about
half a second of a core per candidate here, so ``--budget`` bounds its embedding time: questions are taken
in a fixed random order (by the hash of their id) and those embedded within the budget, a random sample of
both splits, are the ones every arm is graded on (the JSON says how many; hybrid is also graded on all).
A question whose top DEPTH holds no accepted answer is graded without embedding: no re-ordering changes it.

It also times each model on this machine, one thread: seconds per candidate text, per question, to
load the model, and what re-ranking a top 20 adds to one `query`. Grading is ruler.rank_of (its
accepts()). Results: benchmarks/results/mpnet-rerank.json. Needs the benchmark store
(benchmarks/.work/ruler-corpus, built by benchmarks/ruler.py --model-dir ../shared/models/...-int8).
"""

import argparse
import contextlib
import hashlib
import json
import os
import pickle
import sqlite3
import statistics
import sys
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import ruler  # noqa: E402

from gemdoc import ask, indexer, models, paths, vectors  # noqa: E402
from gemdoc.encoder import BATCH, MAX_CHARS, Embedder, OnnxEncoder  # noqa: E402

SPLIT_SEED = "gemdoc-split-1:"
DEV_SHARE = 60
RRF_K = 60
MRR_DEPTH = 10
SHARED = common.ROOT.parent.parent / "shared" / "models"
STORE_MODEL = SHARED / "all-MiniLM-L6-v2-onnx-int8"  # the model the benchmark store's vectors were made with
CACHE = common.WORK / "mpnet-cache"
TIMING_TEXTS = 40
PROGRESS_STEP = 256  # candidate texts embedded between cache saves
PADDED_BATCH = 16  # candidate texts timed one at a time per model


def _key(text: str) -> str:
    return hashlib.sha256(text[:MAX_CHARS].encode()).hexdigest()


def split_of(question_id: str) -> str:
    digest = int(hashlib.sha256((SPLIT_SEED + question_id).encode()).hexdigest(), 16)
    return "dev" if digest % 100 < DEV_SHARE else "test"


def load_questions() -> list[dict]:
    """Every answerable question with its id and split: core-NNN in file order, then each set's own ids."""
    core = yaml.safe_load((common.ROOT / "questions.yaml").read_text())
    found = [dict(q, id=f"core-{i + 1:03d}") for i, q in enumerate(core)]
    for path in sorted((common.ROOT / "questions").glob("*.yaml")):
        found += [q for q in yaml.safe_load(path.read_text()) or [] if isinstance(q, dict) and q.get("answers")]
    return [dict(q, split=split_of(q["id"])) for q in found]


class Model:
    """One model directory run by gemdoc's OnnxEncoder, its candidate vectors cached on disk by text."""

    def __init__(self, name: str, directory: Path):
        started = time.perf_counter()
        self.name, self.encoder = name, OnnxEncoder(directory, "mean")
        self.load_seconds = time.perf_counter() - started
        self.cache_path = CACHE / f"{name}.json"
        self.cache: dict[str, list[float]] = json.loads(self.cache_path.read_text()) if self.cache_path.exists() else {}

    def documents(self, texts: list[str]) -> dict[str, list[float]]:
        """Vectors of the chunk texts, embedding only those no earlier question or run embedded."""
        keys = {t: _key(t) for t in texts}
        todo = sorted({t[:MAX_CHARS] for t, k in keys.items() if k not in self.cache})
        for start in range(0, len(todo), PROGRESS_STEP):
            part = todo[start : start + PROGRESS_STEP]
            for text, vector in zip(part, self._embed(part)):
                self.cache[_key(text)] = [round(float(x), 6) for x in vector]
        return {t: self.cache[k] for t, k in keys.items()}

    def _embed(self, texts: list[str]):
        """gemdoc's own path when padding would change a vector (int8); otherwise padded, masked batches
        of similar length, which give the same vectors (cosine 1.0, checked by mpnet_export.py) faster."""
        if not self.encoder.batches_exactly:
            return list(self.encoder.embed(texts, batch_size=BATCH))
        ids = [e.ids for e in self.encoder.tokenizer.encode_batch(texts)]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        batches = [order[i : i + PADDED_BATCH] for i in range(0, len(order), PADDED_BATCH)]
        vectors = {}
        for batch, pooled in zip(batches, self.encoder._pool.map(lambda b: self._padded([ids[i] for i in b]), batches)):
            vectors.update(zip(batch, pooled))
        return [vectors[i] for i in range(len(ids))]

    def _padded(self, batch: list[list[int]]):
        import numpy as np

        width = max(map(len, batch))
        ids = np.array([t + [0] * (width - len(t)) for t in batch], dtype=np.int64)
        mask = np.array([[1] * len(t) + [0] * (width - len(t)) for t in batch], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.encoder.inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = self.encoder.session.run(None, feed)[0]
        pooled = (hidden * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

    def query(self, text: str):
        return next(iter(self.encoder.embed([text[:MAX_CHARS]])))

    def save(self) -> None:
        CACHE.mkdir(parents=True, exist_ok=True)
        self.cache_path.write_text(json.dumps(self.cache))


def open_store() -> tuple[ask.Bundle, Embedder]:
    """The benchmark store (this checkout's copy) and the model its vectors were made with."""
    common.use_home("ruler-corpus")
    os.environ["GEMDOC_MODEL_DIR"] = str(STORE_MODEL)
    common.ensure_locked(common.CORPUS)
    indexer.index_project(common.CORPUS.resolve(), scope="all")  # a copied store knows only the original's path
    bundle = ask.open_bundle(common.CORPUS.resolve())
    embedder = Embedder(models.configured())
    if vectors.stored_identity(bundle.conn) != embedder.identity:
        sys.exit(f"the store's vectors are {vectors.stored_identity(bundle.conn)!r}, not {embedder.identity!r}: "
                 "rebuild it with benchmarks/ruler.py --model-dir " + str(STORE_MODEL))  # fmt: skip
    return bundle, embedder


def candidates(bundle: ask.Bundle, embedder: Embedder, questions: list[dict], depth: int) -> list[list]:
    """`query --no-refusal`'s top ``depth`` for each question, in the hybrid order (cached per depth)."""
    cached = CACHE / f"candidates-{depth}-{fingerprint(bundle)['digest']}.pickle"
    if cached.exists():
        by_id = pickle.loads(cached.read_bytes())
        if all(q["id"] in by_id for q in questions):
            return [by_id[q["id"]] for q in questions]
    matrix = vectors.Matrix(bundle.conn, bundle.scope.gems)
    options = ask.Options(limit=depth, refuse=False)
    found = [ask.semantic(bundle, q["q"], options, embedder, matrix, vector_only=False).hits for q in questions]
    CACHE.mkdir(parents=True, exist_ok=True)
    cached.write_bytes(pickle.dumps({q["id"]: hits for q, hits in zip(questions, found)}))
    return found


def fingerprint(bundle: ask.Bundle) -> dict:
    """common.fingerprint, on a plain connection (it sorts tuples; the bundle's rows are sqlite3.Row)."""
    with contextlib.closing(sqlite3.connect(paths.store_path())) as conn:
        return common.fingerprint(conn, bundle.scope.gems)


def text_of(hit) -> str:
    return vectors.chunk_text(hit.title, hit.signature, hit.body)


def rrf(*orders: list[int]) -> list[int]:
    """Reciprocal rank fusion of orders of the same indexes; ties keep the first order's order."""
    score = {i: 0.0 for i in orders[0]}
    for order in orders:
        for rank, i in enumerate(order, start=1):
            score[i] += 1.0 / (RRF_K + rank)
    return sorted(orders[0], key=lambda i: (-score[i], orders[0].index(i)))


def embed_within(model: Model, questions: list[dict], found: list[list], budget: float) -> int:
    """Embed the candidates of questions in order until ``budget`` seconds are spent; how many were done.
    A question whose candidates hold no accepted answer is done without embedding: no order changes it."""
    started = time.perf_counter()
    for done, (question, hits) in enumerate(zip(questions, found)):
        if time.perf_counter() - started > budget:
            model.save()
            return done
        if ruler.rank_of(question, hits) is not None:
            model.documents([text_of(h) for h in hits])
        if done % 20 == 19:
            model.save()
            print(f"{model.name}: {done + 1}/{len(questions)} questions embedded", file=sys.stderr)
    model.save()
    return len(questions)


def orders_for(model: Model, questions: list[dict], found: list[list]) -> dict[str, list[list[int]]]:
    """Per question, the candidate indexes re-ordered by cosine and by RRF(cosine, hybrid)."""
    import numpy as np

    by_cosine, fused = [], []
    for question, hits in zip(questions, found):
        if ruler.rank_of(question, hits) is None:  # nothing to gain: keep the hybrid order
            by_cosine.append(list(range(len(hits))))
            fused.append(list(range(len(hits))))
            continue
        docs = model.documents([text_of(h) for h in hits])
        matrix = np.asarray([docs[text_of(h)] for h in hits], dtype=np.float32).reshape(len(hits), -1)
        scores = matrix @ model.query(question["q"])
        cosine = sorted(range(len(hits)), key=lambda i: (-scores[i], i))
        by_cosine.append(cosine)
        fused.append(rrf(list(range(len(hits))), cosine))
    return {"cosine": by_cosine, "rrf": fused}


def grade(questions: list[dict], found: list[list], orders: list[list[int]]) -> dict:
    """hit@1, hit@3 and MRR@10 on dev and on test, for one ordering of every question's candidates."""
    ranks: dict[str, list[int | None]] = {"dev": [], "test": []}
    for question, hits, order in zip(questions, found, orders):
        ranks[question["split"]].append(ruler.rank_of(question, [hits[i] for i in order]))
    return {split: _metrics(r) for split, r in ranks.items()}


def _metrics(ranks: list[int | None]) -> dict:
    n = len(ranks) or 1
    return {
        "n": len(ranks),
        "hit@1": round(sum(r == 1 for r in ranks) / n, 3),
        "hit@3": round(sum(bool(r) and r <= 3 for r in ranks) / n, 3),
        "mrr@10": round(sum(1 / r for r in ranks if r and r <= MRR_DEPTH) / n, 3),
        "in_candidates": round(sum(r is not None for r in ranks) / n, 3),
    }


def timing(model: Model, questions: list[dict], found: list[list], depth: int) -> dict:
    """Seconds on one thread: per candidate text, per question, to load; a cold top-``depth`` re-rank
    is one question plus ``depth`` candidate texts, each embedded alone."""
    texts = [text_of(h)[:MAX_CHARS] for hits in found for h in hits]
    sample = texts[:: max(1, len(texts) // TIMING_TEXTS)][:TIMING_TEXTS]  # spread over the questions
    per_text = statistics.median(_seconds(lambda t=t: list(model.encoder.embed([t]))) for t in sample)
    per_query = statistics.median(_seconds(lambda q=q: model.query(q["q"])) for q in questions[:TIMING_TEXTS])
    return {
        "load_seconds": round(model.load_seconds, 3),
        "seconds_per_text": round(per_text, 4),
        "seconds_per_question": round(per_query, 4),
        f"rerank_top{depth}_seconds": round(per_query + depth * per_text, 3),
        "texts_timed": len(sample),
    }


def _seconds(call) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mpnet", type=Path, default=Path("/work/mpnet/onnx"), help="mpnet_export.py's output")
    parser.add_argument("--depth", type=int, default=20, help="how many of query's results are re-ranked")
    parser.add_argument("--budget", type=float, default=float("inf"),
                        help="seconds mpnet may embed for; the questions done by then (a random sample) are graded")
    args = parser.parse_args()
    questions = sorted(load_questions(), key=lambda q: hashlib.sha256(("order:" + q["id"]).encode()).hexdigest())
    bundle, embedder = open_store()
    found = candidates(bundle, embedder, questions, args.depth)
    everything = grade(questions, found, [list(range(len(h))) for h in found])
    models_to_run = [(n, d) for n, d in (("mpnet-fp32", args.mpnet), ("minilm-int8", STORE_MODEL),
                     ("minilm-fp32", SHARED / "all-MiniLM-L6-v2-onnx")) if (d / "model.onnx").is_file()]  # fmt: skip
    loaded = [Model(name, directory) for name, directory in models_to_run]
    graded = embed_within(loaded[0], questions, found, args.budget)
    questions, found = questions[:graded], found[:graded]
    arms = {"hybrid": grade(questions, found, [list(range(len(h))) for h in found])}
    timings = {}
    for model in loaded:
        for how, orders in orders_for(model, questions, found).items():
            arms[f"{model.name} {how}"] = grade(questions, found, orders)
        model.save()
        timings[model.name] = timing(model, questions, found, args.depth)
    result = {
        "questions": {s: sum(q["split"] == s for q in load_questions()) for s in ("dev", "test")},
        "graded": {s: sum(q["split"] == s for q in questions) for s in ("dev", "test")},
        "hybrid_on_all_questions": everything,
        "depth": args.depth, "split_rule": f"sha256({SPLIT_SEED!r}+id) % 100 < {DEV_SHARE} -> dev",
        "store_model": vectors.stored_identity(bundle.conn),
        "fingerprint": fingerprint(bundle),
        "arms": arms, "timing_one_thread": timings, "load_average_1_5_15min": [round(x, 2) for x in os.getloadavg()],
    }  # fmt: skip
    common.save("mpnet-rerank", result)
    print(table(result))


def table(result: dict) -> str:
    lines = [f"{'arm':<20} {'dev hit@1':>9} {'MRR@10':>7} {'test hit@1':>10} {'MRR@10':>7}"]
    for arm, graded in result["arms"].items():
        d, t = graded["dev"], graded["test"]
        lines.append(f"{arm:<20} {d['hit@1']:>9} {d['mrr@10']:>7} {t['hit@1']:>10} {t['mrr@10']:>7}")
    for name, t in result["timing_one_thread"].items():
        lines.append(f"{name}: {json.dumps(t)}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()

"""Embedding throughput, vector ranking time, and `gemdoc query` whole-process time.

    python benchmarks/vector_speed.py [--sample 2000]

Throughput: --sample chunks of the benchmark bundle embedded by each model in
../shared/models (a fresh process per model, peak RSS included), as gemdoc does it (each
batch on one thread, one batch per core at a time) and, for comparison, one batch at a time
spread over every core. Ranking: one matrix
product over 20,000 and 100,000 synthetic unit vectors (384 dimensions). Whole process:
`gemdoc query` on the benchmark bundle with its vectors (hybrid) and without (keyword
fallback). Results: benchmarks/results/vectors.json.
"""

import argparse
import json
import os
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

MODELS = common.ROOT.parent.parent / "shared" / "models"

EMBED_SAMPLE = """
import json, sys, time, resource
from gemdoc.embed import STEP
from gemdoc.encoder import Embedder
from gemdoc.models import ModelSpec
texts = sorted(json.load(open(sys.argv[2])), key=len)  # as `gemdoc embed` orders and steps through them
embedder = Embedder(ModelSpec("sentence-transformers/all-MiniLM-L6-v2", __import__("pathlib").Path(sys.argv[1])))
if sys.argv[3] == "each batch over all cores":
    import onnxruntime
    from concurrent.futures import ThreadPoolExecutor
    encoder = embedder.model
    encoder.session = onnxruntime.InferenceSession(encoder.session._model_path, providers=["CPUExecutionProvider"])
    encoder._pool = ThreadPoolExecutor(1)
start = time.monotonic()
for i in range(0, len(texts), STEP):
    embedder.embed_documents(texts[i:i + STEP])
seconds = time.monotonic() - start
print(json.dumps({"chunks": len(texts), "seconds": seconds, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def sample_texts(count: int) -> list[str]:
    from gemdoc import paths, store, vectors

    conn = store.connect(paths.store_path())
    rows = conn.execute(
        "SELECT title, signature, body FROM chunks WHERE id % 17 = 0 ORDER BY id LIMIT ?", [count]
    ).fetchall()  # every 17th chunk: a spread over all gems, the same sample every run
    return [vectors.chunk_text(*r) for r in rows]


def throughput(count: int) -> dict:
    texts = common.WORK / "embed-sample.json"
    texts.write_text(json.dumps(sample_texts(count)))
    result = {}
    for model in sorted(MODELS.iterdir()):
        runs = {}
        for way in ("parallel", "each batch over all cores"):
            done = subprocess.run([sys.executable, "-c", EMBED_SAMPLE, str(model), str(texts), way], capture_output=True, text=True, check=True)
            runs[way] = json.loads(done.stdout.strip().splitlines()[-1])
        data = runs["parallel"]
        result[model.name] = {
            "chunks": data["chunks"],
            "chunks_per_s": round(data["chunks"] / data["seconds"], 1),
            "all_cores_per_batch_chunks_per_s": round(data["chunks"] / runs["each batch over all cores"]["seconds"], 1),
            "peak_rss_mib": round(data["rss"] / 1024, 1),
        }
    return result


def ranking() -> dict:
    import numpy as np

    from gemdoc.vectors import Matrix

    rng = np.random.default_rng(7)
    out = {}
    for n in (20_000, 100_000):
        matrix = Matrix.__new__(Matrix)
        vectors = rng.standard_normal((n, 384)).astype(np.float32)
        matrix.matrix = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        matrix.ids = np.arange(n, dtype=np.int64)
        samples = []
        for _ in range(100):
            query = matrix.matrix[rng.integers(n)]
            start = time.perf_counter()
            matrix.rank(query, 150)
            samples.append((time.perf_counter() - start) * 1000)
        out[str(n)] = {"median_ms": round(statistics.median(samples), 2), "p95_ms": round(sorted(samples)[94], 2)}
    return out


def whole_process(runs: int) -> dict:
    known, _ = ruler.questions.load()
    command = [shutil.which("gemdoc") or sys.executable, *([] if shutil.which("gemdoc") else ["-m", "gemdoc"])]
    out = {}
    for label, env in (("hybrid", os.environ), ("keyword fallback", os.environ | {"GEMDOC_MODEL_DIR": "/nonexistent"})):
        samples = []
        for question in [q["q"] for q in known][:runs]:
            start = time.perf_counter()
            subprocess.run([*command, "query", "--project", str(common.CORPUS), question], capture_output=True, env=env, check=label == "hybrid")
            samples.append((time.perf_counter() - start) * 1000)
        out[label] = {"n": runs, "median_ms": round(statistics.median(samples)), "p95_ms": round(sorted(samples)[int(0.95 * (runs - 1))])}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--model-dir", type=Path, default=MODELS / "all-MiniLM-L6-v2-onnx-int8")
    args = parser.parse_args()
    ruler.build("corpus", args.model_dir)
    result = {"throughput": throughput(args.sample), "ranking": ranking(), "query_whole_process": whole_process(args.runs)}
    result["rss_self_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    common.save("vectors", result)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

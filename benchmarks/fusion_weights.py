"""How much the keyword arm counts in hybrid `gemdoc query`, measured with each model build.

    python benchmarks/fusion_weights.py [--weights 1,1.5,2,2.5,3,4,5,8]

For every model in ../shared/models (the fp32 build fastembed downloads by default and the
int8 build the ruler embeds with), the benchmark bundle is embedded in its own store and
hybrid `query` is graded on the ruler's known-answer questions with the keyword arm's
reciprocal-rank weight set to each value (the vector arm counts 1; a question that names
code keeps its own weight, hybrid.CODE_KEYWORD_WEIGHT). Results: benchmarks/results/fusion.json.
"""

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import ruler  # noqa: E402

from gemdoc import ask, embed, hybrid, indexer, models, vectors  # noqa: E402
from gemdoc.embedder import Embedder  # noqa: E402

MODELS = common.ROOT.parent.parent / "shared" / "models"
RULER_MODEL = "all-MiniLM-L6-v2-onnx-int8"  # the ruler's store already holds this model's vectors


def prepare(model: Path) -> ask.Bundle:
    """The benchmark bundle, indexed and embedded with ``model``, in a store of its own."""
    common.use_home("ruler-corpus" if model.name == RULER_MODEL else f"fusion-{model.name}")
    os.environ["GEMDOC_MODEL_DIR"] = str(model)
    common.ensure_debian_packages()
    common.ensure_locked(common.CORPUS)
    indexer.index_project(common.CORPUS, scope="all")
    embed.embed_project(common.CORPUS.resolve())
    return ask.open_bundle(common.CORPUS.resolve())


def sweep(bundle: ask.Bundle, weights: list[float]) -> dict:
    known, absent = ruler.load_questions("corpus")
    embedder = Embedder(models.configured())
    matrix = vectors.Matrix(bundle.conn, bundle.scope.gems)
    shipped = hybrid.KEYWORD_WEIGHT
    out = {}
    try:
        for weight in weights:
            hybrid.KEYWORD_WEIGHT = weight
            graded = ruler.grade(bundle.conn, bundle.scope.gems, known, absent,
                                 lambda text: ask.semantic(bundle, text, ruler.OPTIONS, embedder, matrix, vector_only=False))  # fmt: skip
            out[str(weight)] = {"overall": graded["overall"], "by_kind": graded["by_kind"]}
    finally:
        hybrid.KEYWORD_WEIGHT = shipped
    keyword = ruler.grade(bundle.conn, bundle.scope.gems, known, absent, lambda text: ask.keyword(bundle, text, ruler.OPTIONS))
    return {"weights": out, "keyword": {"overall": keyword["overall"], "by_kind": keyword["by_kind"]},
            "model": vectors.stored_identity(bundle.conn)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", default="1,1.5,2,2.5,3,4,5,8")
    args = parser.parse_args()
    weights = [float(w) for w in args.weights.split(",")]
    result = {"shipped": hybrid.KEYWORD_WEIGHT, "models": {m.name: sweep(prepare(m), weights) for m in sorted(MODELS.iterdir())}}
    common.save("fusion", result)
    print(json.dumps({m: {w: r["overall"]["hit@1"] for w, r in v["weights"].items()} for m, v in result["models"].items()}, indent=2))


if __name__ == "__main__":
    main()

"""Whether hybrid `gemdoc query` keeps the keyword arm's first place, measured with each model build.

    python benchmarks/fusion_rules.py

For every model in ../shared/models (the fp32 build fastembed downloads by default and the
int8 build the ruler embeds with), the benchmark bundle is embedded in a store of its own and
graded on the ruler's known-answer questions three ways: keyword `search` alone, hybrid `query`
with plain reciprocal rank fusion, and hybrid `query` as shipped (the keyword arm's first place
kept first, hybrid.KEYWORD_FIRST). Results: benchmarks/results/fusion.json.
"""

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import ruler  # noqa: E402

from gemdoc import ask, embed, hybrid, indexer, models, vectors  # noqa: E402
from gemdoc.encoder import Embedder  # noqa: E402

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


def grade(bundle: ask.Bundle) -> dict:
    known, absent = ruler.questions.load("dev")  # fitted on dev only
    embedder = Embedder(models.configured())
    matrix = vectors.Matrix(bundle.conn, bundle.scope.gems)
    versions = [gem for gem, (_, state) in bundle.scope.entries.items() if state == "complete"]  # (name, version)

    def score(ranker) -> dict:
        graded = ruler.grade(bundle.conn, versions, known, absent, ruler.verbatim(ranker))
        return {"overall": graded["overall"], "by_kind": graded["by_kind"]}

    out = {"model": vectors.stored_identity(bundle.conn), "keyword": score(lambda text: ask.keyword(bundle, text, ruler.OPTIONS))}
    shipped = hybrid.KEYWORD_FIRST
    try:
        for rule, keep_first in (("plain fusion", False), ("keyword first kept", True)):
            hybrid.KEYWORD_FIRST = keep_first
            out[rule] = score(lambda text: ask.semantic(bundle, text, ruler.OPTIONS, embedder, matrix, vector_only=False))
    finally:
        hybrid.KEYWORD_FIRST = shipped
    return out


def main() -> None:
    result = {"shipped": "keyword first kept" if hybrid.KEYWORD_FIRST else "plain fusion",
              "models": {m.name: grade(prepare(m)) for m in sorted(MODELS.iterdir())}}  # fmt: skip
    common.save("fusion", result)
    print(json.dumps({m: {k: v[k]["overall"] for k in ("keyword", "plain fusion", "keyword first kept")}
                      for m, v in result["models"].items()}, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()

"""The ceiling benchmark's learned re-ranker learns what separates answers (benchmarks/ranking_ceiling.py)."""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import ranking_ceiling  # noqa: E402


def _pools(count: int = 12, size: int = 6):
    """Questions whose answer is last in the given order (feature 0); only feature 1 tells it apart."""
    rng = np.random.default_rng(0)
    pools, labels = [], []
    for _ in range(count):
        x = np.column_stack([np.arange(size, 0, -1), rng.normal(size=size)])
        x[-1, 1] = x[:, 1].max() + 1.0
        pools.append((list(range(size)), x))
        labels.append(np.arange(size) == size - 1)
    return pools, labels


def test_the_reranker_puts_the_separable_answer_first_on_questions_it_was_not_fitted_on():
    pools, labels = _pools()
    model = ranking_ceiling.Reranker(pools, labels, list(range(8)))
    for hits, x in pools[8:]:
        assert model.order(hits, x)[0] == len(hits) - 1

"""Fit the refusal bars (gemdoc/evidence.py): what each pair of bars costs in hit@1 and MRR
on the ruler's known-answer questions, next to the silence it buys on the absent ones.

    python benchmarks/refusal_bars.py      # after benchmarks/ruler.py built the store

Keyword arm, benchmark bundle. Each question is ranked once without the gate; its
coverage and concentration decide, for every pair of bars, whether it would be refused.
Results: benchmarks/results/refusal.json (the pair gemdoc ships is marked).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import ruler  # noqa: E402

from gemdoc import evidence, paths, project, store  # noqa: E402
from gemdoc import search as searcher  # noqa: E402

COVERAGE_BARS = (0.0, 0.5, 0.75, 0.85, 1.0)
CONCENTRATION_BARS = (0.0, 0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7)


def refused(found: evidence.Evidence, min_coverage: float, min_concentration: float) -> bool:
    """The gate's decision under other bars (the reason codes other than the bars do not move)."""
    if found.exact:
        return False
    if found.reason in ("no_query_term_in_index", "only_ubiquitous_terms_matched"):
        return True
    return found.coverage < min_coverage or found.concentration < min_concentration


def main() -> None:
    common.use_home("ruler-corpus")
    conn = store.connect(paths.store_path())
    scope = project.scope(conn, common.CORPUS.resolve()).gems
    known, absent = ruler.questions.load("dev")  # fitted on dev only
    graded = [(ruler.rank_of(q, f.hits), f.evidence) for q in known for f in [searcher.run(conn, q["q"], scope, 10, refuse=False)]]
    unanswerable = [searcher.run(conn, a["q"], scope, 10, refuse=False).evidence for a in absent]
    rows = []
    for cov in COVERAGE_BARS:
        for conc in CONCENTRATION_BARS:
            ranks = [None if refused(e, cov, conc) else rank for rank, e in graded]
            m = ruler.metrics(ranks)
            silence = sum(refused(e, cov, conc) for e in unanswerable) / len(unanswerable)
            shipped = (cov, conc) == (evidence.MIN_COVERAGE, evidence.MIN_CONCENTRATION)
            rows.append({"min_coverage": cov, "min_concentration": conc, "hit@1": m["hit@1"], "mrr": m["mrr"],
                         "hit@10": m["hit@10"], "silence": round(silence, 3), "shipped": shipped})  # fmt: skip
    baseline = next(r for r in rows if r["min_coverage"] == 0.0 and r["min_concentration"] == 0.0)
    for r in rows:
        flag = "  <- shipped" if r["shipped"] else ""
        print(f"coverage >= {r['min_coverage']:<4} concentration >= {r['min_concentration']:<4} "
              f"hit@1 {r['hit@1']:.3f} ({r['hit@1'] - baseline['hit@1']:+.3f}) MRR {r['mrr']:.3f} "
              f"silence {r['silence']:.3f}{flag}")  # fmt: skip
    result = {"fingerprint": common.fingerprint(conn, scope), "ungated": baseline, "rows": rows,
              "questions": {"known": len(known), "absent": len(absent)}}  # fmt: skip
    print(f"wrote {common.save('refusal', result)}")


if __name__ == "__main__":
    main()

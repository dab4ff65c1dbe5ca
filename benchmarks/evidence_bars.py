"""Choose the evidence gate's bars (gemdoc/evidence.py BARS) by cross-validation on the ruler's dev
questions, then say what they do on its test questions.

    python benchmarks/evidence_bars.py [--reuse-reads]   # after `ruler.py --model-dir ...` embedded the store

Every question is read once, verbatim, the way `query` reads it: each part's lexical evidence, the APIs it
names, and the nearest chunk's cosine. Then every set of bars on a grid decides every question again
(no re-ranking needed). A set of bars is scored on answerable questions refused (at most MAX_REFUSED) and
silence on absent ones: the best is the one with the most silence among those refusing at most
MAX_REFUSED of the answerable questions, or the one refusing fewest when none does. The cross-validated
figures fit on FOLDS-1 folds of dev and measure the fold left out; the shipped bars fit on all of dev;
test is only measured. Results go to benchmarks/results/evidence.json.
"""

import contextlib
import dataclasses
import hashlib
import itertools
import pickle
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import agent_forms  # noqa: E402
import common  # noqa: E402
import questions  # noqa: E402
import ruler  # noqa: E402

from gemdoc import ask, evidence, hybrid, models, terms, vectors  # noqa: E402
from gemdoc import search as searcher  # noqa: E402
from gemdoc.encoder import Embedder  # noqa: E402

MAX_REFUSED = 0.02
PREVIOUS = evidence.Bars(0.85, 0.6, 1.01, 9.0, 8.9)  # the bars before issue #14: fitted on the old questions, unweighted
FOLDS = 5
GRID = {
    "min_coverage": (0.6, 0.7, 0.8, 0.85, 0.9, 0.95),
    "min_concentration": (0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6),
    "min_cosine": (0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 1.01),
    "zipf": ((5.0, 3.0), (4.5, 3.0), (4.01, 4.0), (3.51, 3.5), (3.01, 3.0)),
}
# Every missing word weighing fully: measured beside the grid, never shipped, because issue #14 asks that an
# ordinary English word the docs lack ("tomorrow", "payments") not weigh like an absent technical subject.
UNWEIGHTED = (9.0, 8.9)
FLOORS = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6)
GUESSED_NEAR = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 1.01)  # 1.01: no cosine spares a wrong guess


def read(bundle: ask.Bundle, embedder, matrix, question: dict) -> dict:
    """What the gate sees of one question asked verbatim through `query`."""
    text = question["q"]
    reply = hybrid.query(bundle.conn, text, bundle.scope.gems, ruler.LIMIT, embedder, matrix)
    parts = hybrid.parse(text) or [(None, text)]
    names = named_each_way(bundle, text)
    named = names["named"]
    return names | {
        "id": question["id"],
        "split": question["split"],
        "answerable": "answers" in question,
        "rank": ruler.rank_of(question, reply.hits) if "answers" in question else None,
        "search_rank": ruler.rank_of(question, searcher.search(bundle.conn, text, bundle.scope.gems, ruler.LIMIT))
        if "answers" in question else None,
        "evidence": reply.evidence,
        "defined": ask.defined_apis(bundle, text, named),
        "products": ask.products_of(parts),
        "cosine": ask.nearest_cosine(parts, embedder, matrix),
        "one_sentence": len(parts) == 1 and parts[0][0] is None and len(terms.sentences_of(text)) == 1,
    }


def read_form(bundle: ask.Bundle, embedder, matrix, question: dict) -> dict:
    """What the gate sees of one question's agent form (its ``form``: agent_forms.asked), asked as written
    but with --no-refusal, so that its rank is there whatever the gate decides."""
    form = question["form"]
    text = agent_forms.text_of(form["args"])
    parts = hybrid.parse(text) or [(None, text)]
    reply = agent_forms.run(form | {"args": form["args"] | {"no_refusal": True}}, common.CORPUS)
    lexical = [(kind, searcher.run(bundle.conn, body, bundle.scope.gems, 1).evidence) for kind, body in parts]
    keyword_only = form["tool"] == "search"
    joined = " ".join(body for _, body in parts)
    names = named_each_way(bundle, joined)
    named = names["named"]
    return names | {
        "id": question["id"],
        "split": question["split"],
        "answerable": "answers" in question,
        "rank": ruler.rank_of(question, reply.hits) if "answers" in question else None,
        "parts": lexical,
        "defined": ask.defined_apis(bundle, joined, named),
        "guessed": ([], []) if keyword_only else ask.guessed_names(bundle, parts),
        "guessed_without_version_constants": ([], []) if keyword_only else guessed_without_version_constants(bundle,
                                                                                                            parts),
        "code": ask.code_of(parts),
        "code_without_names_as_words": code_without_names_as_words(parts),
        "products": ask.products_of(parts),
        "cosine": None if keyword_only else ask.nearest_cosine(parts, embedder, matrix),
        "rephrasing": None if keyword_only else ask.nearest_cosine([p for p in parts if p[0] == "vec"], embedder,
                                                                     matrix),
    }


def code_without_names_as_words(parts: list) -> list[set[str]]:
    """ask.code_of with terms.NAMES_ARE_WORDS off: a CamelCase word alone (``gRPC``) counted as code."""
    shipped, terms.NAMES_ARE_WORDS = terms.NAMES_ARE_WORDS, False
    try:
        return ask.code_of(parts)
    finally:
        terms.NAMES_ARE_WORDS = shipped


RULES = {"absent_rule": "ABSENT_SUBJECT_RULE", "insisted_rule": "INSISTED_SUBJECT_RULE",
         "specific_rule": "SPECIFIC_API_RULE", "asked_rule": "ASKED_SUBJECT_RULE", "floor_at": "REPHRASING_FLOOR",
         "guessed_rule": "GUESSED_NAMES_RULE", "guessed_near": "GUESSED_NAMES_NEAR",
         "question_floor": "QUESTION_FLOOR", "own_rule": "OWN_NAMES_RULE", "lex_aside": "LEX_GUESSES_ASIDE",
         "coined_rule": "COINED_SUBJECT_RULE", "asked_names_rule": "ASKED_NAMES_RULE",
         "proper_rule": "PROPER_NAMES_RULE"}


READS_FORMAT = 3  # --reuse-reads' cache: a new number whenever what a read holds changes (3: products by kind)
NAME_RULES = {"other_kind": "OTHER_KIND_NAMED", "options": "OPTIONS_NAMED"}  # ask's, read into each question


def named_each_way(bundle: ask.Bundle, text: str) -> dict:
    """The APIs ``text`` names (ask.named_apis), and those it names with each of NAME_RULES off
    (``named_without_other_kind``...): the rules act on the read, so it keeps every variant."""
    found = {"named": ask.named_apis(bundle, text)}
    for key, flag in NAME_RULES.items():
        shipped = getattr(ask, flag)
        setattr(ask, flag, False)
        try:
            found[f"named_without_{key}"] = ask.named_apis(bundle, text)
        finally:
            setattr(ask, flag, shipped)
    return found


def guessed_without_version_constants(bundle: ask.Bundle, parts: list) -> tuple[list[str], list[str]]:
    """ask.guessed_names with ask.VERSION_CONSTANTS off: ``Minitest::VERSION`` counted as a wrong guess."""
    shipped, ask.VERSION_CONSTANTS = ask.VERSION_CONSTANTS, False
    try:
        return ask.guessed_names(bundle, parts)
    finally:
        ask.VERSION_CONSTANTS = shipped


@contextlib.contextmanager
def switched(**rules: bool | float | None):
    """The gate with some of its rules (RULES' keywords) switched, or its rephrasing floor or the cosine
    that spares wrong lex: guesses moved (``floor_at``, ``guessed_near``); ``insisted_rule`` None: as
    ``absent_rule``."""
    shipped = {name: getattr(evidence, name) for name in RULES.values()}
    if rules.get("insisted_rule") is None and "absent_rule" in rules:
        rules["insisted_rule"] = rules["absent_rule"]
    try:
        for key, value in rules.items():
            if value is not None:
                setattr(evidence, RULES[key], value)
        yield
    finally:
        for name, value in shipped.items():
            setattr(evidence, name, value)


def refuses_form(read_: dict, floor: bool = True, without: str | None = None, names_as_words: bool = True,
                 **rules: bool | None) -> bool:
    """The shipped gate on one agent form, some rules switched (``switched``), with or without
    the floor on the ``vec:`` part's cosine, ``without`` one of NAME_RULES, and with or without
    terms.NAMES_ARE_WORDS."""
    rephrasing = read_["rephrasing"] if floor else None
    code = read_["code" if names_as_words else "code_without_names_as_words"]
    named = read_[f"named_without_{without}"] if without in NAME_RULES else read_["named"]
    guessed, asked_missing = read_[f"guessed_without_{without}" if without == "version_constants" else "guessed"]
    if without not in (None, "version_constants", *NAME_RULES):
        raise ValueError(f"no such rule: {without}")
    with switched(**rules):
        parts = [(kind, dataclasses.replace(ev)) for kind, ev in read_["parts"]]
        found = {"code": code, "rephrasing": rephrasing, "guessed": guessed, "asked_missing": asked_missing,
                 "defined": read_["defined"], "products": read_["products"]}
        judged = evidence.judge(parts, named, None, **found)
        if judged.refused and read_["cosine"] is not None:
            parts = [(kind, dataclasses.replace(ev)) for kind, ev in read_["parts"]]
            judged = evidence.judge(parts, named, read_["cosine"], **found)
        return judged.refused


def all_bars(zipfs: tuple = GRID["zipf"]) -> list[evidence.Bars]:
    axes = (GRID["min_coverage"], GRID["min_concentration"], GRID["min_cosine"], zipfs)
    return [
        evidence.Bars(cov, conc, cos, common_zipf, rare_zipf)
        for cov, conc, cos, (common_zipf, rare_zipf) in itertools.product(*axes)
    ]


def decisions_on(reads: list[dict], grid: list[evidence.Bars]) -> dict[evidence.Bars, list[bool]]:
    """Whether each set of bars refuses each question (vectors on)."""
    return {bars: [refuses(r, bars, True) for r in reads] for bars in grid}


def refuses(read_: dict, bars: evidence.Bars, vectors_on: bool, without: str | None = None) -> bool:
    """The gate on one question asked verbatim: with vectors, its cosine both as evidence and, for a
    question of one sentence, against QUESTION_FLOOR; ``without`` one of NAME_RULES."""
    cosine = read_["cosine"] if vectors_on else None
    question = cosine if read_["one_sentence"] else None
    part = [(None, dataclasses.replace(read_["evidence"]))]
    named = read_[f"named_without_{without}" if without else "named"]
    return evidence.judge(part, named, cosine, bars, question=question, defined=read_["defined"],
                          products=read_["products"]).refused


def verbatim(read_: dict) -> bool:
    """The shipped gate, vectors on, on one question asked verbatim."""
    return refuses(read_, evidence.BARS, True)


def figures(reads: list[dict], refused: list[bool], rank: str = "rank") -> dict:
    known = [r for r, x in zip(reads, refused) if r["answerable"]]
    known_refused = [x for r, x in zip(reads, refused) if r["answerable"]]
    absent_refused = [x for r, x in zip(reads, refused) if not r["answerable"]]
    ranks = [None if x else r[rank] for r, x in zip(known, known_refused)]
    return ruler.metrics(ranks, known_refused) | {"silence": round(sum(absent_refused) / (len(absent_refused) or 1), 3)}


def best(decisions: dict, reads: list[dict], chosen: list[int]) -> evidence.Bars:
    """The bars with the most silence refusing at most MAX_REFUSED of the answerable questions in ``chosen``."""
    def score(bars):
        refused = [decisions[bars][i] for i in chosen]
        known = [x for i, x in zip(chosen, refused) if reads[i]["answerable"]]
        absent = [x for i, x in zip(chosen, refused) if not reads[i]["answerable"]]
        share, silence = sum(known) / len(known), sum(absent) / len(absent)
        return (share <= MAX_REFUSED, silence if share <= MAX_REFUSED else -share, -share)

    return max(decisions, key=score)


def form_figures(form_reads: list[dict], **rules: bool | None) -> dict:
    """The agent forms judged with the shipped gate, some rules switched (refuses_form's keywords)."""
    refused = [refuses_form(r, **rules) for r in form_reads]
    return {s: figures([r for r in form_reads if r["split"] == s], [x for r, x in zip(form_reads, refused)
                                                                      if r["split"] == s])
            for s in questions.SPLITS}  # fmt: skip


def sweep(reads: list[dict], rule: str, values: tuple[float, ...], refused=refuses_form) -> dict[str, dict]:
    """Each value of one of the gate's cosines (``floor_at``, ``guessed_near``, ``question_floor``): the
    share of dev's answerable questions (``reads``: agent forms, or verbatim with ``refused=verbatim``)
    refused and silence on its absent ones."""
    dev = [r for r in reads if r["split"] == "dev"]
    table = {}
    for value in values:
        with switched(**{rule: value}):
            got = figures(dev, [refused(r) for r in dev])
        table[f"{value:.2f}"] = {"refused": got["refused"], "silence": got["silence"]}
    return table


def fold_of(question_id: str) -> int:
    return int(hashlib.sha256(f"fold:{question_id}".encode()).hexdigest(), 16) % FOLDS


def cross_validate(decisions: dict, reads: list[dict], dev: list[int]) -> dict:
    held_out = {}
    for fold in range(FOLDS):
        fit = [i for i in dev if fold_of(reads[i]["id"]) != fold]
        bars = best(decisions, reads, fit)
        for i in dev:
            if fold_of(reads[i]["id"]) == fold:
                held_out[i] = decisions[bars][i]
    return figures([reads[i] for i in dev], [held_out[i] for i in dev])


def main() -> None:
    ruler.prepare(None, reuse=True)
    bundle = ask.open_bundle(common.CORPUS.resolve())
    embedder, matrix = Embedder(models.configured()), vectors.Matrix(bundle.conn, bundle.scope.gems)
    known, absent = questions.load()
    cached = common.WORK / f"evidence-reads-{READS_FORMAT}.pickle"
    if "--reuse-reads" in sys.argv and cached.exists():
        reads, form_reads = pickle.loads(cached.read_bytes())
    else:
        reads = [read(bundle, embedder, matrix, q) for q in known + absent]
        form_reads = [read_form(bundle, embedder, matrix, q) for q in agent_forms.asked(known + absent,
                                                                                          agent_forms.load())]
        cached.write_bytes(pickle.dumps((reads, form_reads)))
    decisions = decisions_on(reads, all_bars())
    split = {s: [i for i, r in enumerate(reads) if r["split"] == s] for s in questions.SPLITS}
    chosen = best(decisions, reads, split["dev"])
    chosen_unweighted = best(decisions_on(reads, all_bars((UNWEIGHTED,))), reads, split["dev"])
    with switched(asked_rule=False):
        chosen_unasked = best(decisions_on(reads, all_bars()), reads, split["dev"])

    def measured(bars: evidence.Bars, vectors_on: bool, without: str | None = None, **rules: bool | None) -> dict:
        with switched(**rules):
            refused = [refuses(r, bars, vectors_on, without) for r in reads]
        rank = "rank" if vectors_on else "search_rank"
        return {s: figures([reads[i] for i in idx], [refused[i] for i in idx], rank) for s, idx in split.items()}

    result = {
        "grid": {k: [list(v) if isinstance(v, tuple) else v for v in vs] for k, vs in GRID.items()},
        "max_refused": MAX_REFUSED,
        "folds": FOLDS,
        "model": vectors.stored_identity(bundle.conn),
        "questions": {s: [sum(reads[i]["answerable"] for i in idx), sum(not reads[i]["answerable"] for i in idx)]
                      for s, idx in split.items()},
        "chosen": dataclasses.asdict(chosen),
        "chosen_unweighted": dataclasses.asdict(chosen_unweighted),
        "chosen_without_asked_rule": dataclasses.asdict(chosen_unasked),
        "cross_validated_dev": cross_validate(decisions, reads, split["dev"]),
        "shipped": dataclasses.asdict(evidence.BARS),
        "rephrasing_floor": evidence.REPHRASING_FLOOR,
        "rephrasing_floors": sweep(form_reads, "floor_at", FLOORS),
        "guessed_names_near": evidence.GUESSED_NAMES_NEAR,
        "guessed_names_nears": sweep(form_reads, "guessed_near", GUESSED_NEAR),
        "question_floor": evidence.QUESTION_FLOOR,
        "question_floors": sweep(reads, "question_floor", FLOORS, verbatim),
        "query": {"ungated": {s: figures([reads[i] for i in idx], [False] * len(idx)) for s, idx in split.items()},
                  "previous": measured(PREVIOUS, True, asked_rule=False, question_floor=-1.0),
                  "shipped": measured(evidence.BARS, True), "chosen": measured(chosen, True),
                  "without the asked-subject rule, bars chosen without it": measured(chosen_unasked, True,
                                                                                     asked_rule=False),
                  "chosen with every missing word weighing fully": measured(chosen_unweighted, True),
                  "without the question floor": measured(evidence.BARS, True, question_floor=-1.0),
                  "without the own-names rule": measured(evidence.BARS, True, own_rule=False),
                  "without other-kind names": measured(evidence.BARS, True, "other_kind"),
                  "without option names": measured(evidence.BARS, True, "options")},
        "search": {"previous": measured(PREVIOUS, False, asked_rule=False, question_floor=-1.0),
                   "shipped": measured(evidence.BARS, False),
                   "chosen": measured(chosen, False),
                   "without the own-names rule": measured(evidence.BARS, False, own_rule=False),
                   "without other-kind names": measured(evidence.BARS, False, "other_kind"),
                   "without option names": measured(evidence.BARS, False, "options"),
                   "without the asked-subject rule, bars chosen without it": measured(chosen_unasked, False,
                                                                                      asked_rule=False)},
        "agent form": {name: form_figures(form_reads, **rules) for name, rules in
                       (("shipped", {}), ("without the rephrasing floor", {"floor": False}),
                        ("floor without the specific-API rule", {"specific_rule": False}),
                        ("without the insisted-subject rule", {"insisted_rule": False}),
                        ("without either absent-term rule", {"absent_rule": False}),
                        ("without the asked-subject rule", {"asked_rule": False}),
                        ("without the coined-subject rule", {"coined_rule": False}),
                        ("without the proper-name rule", {"proper_rule": False}),
                        ("without the guessed-names rule", {"guessed_rule": False}),
                        ("without the asked-names rule", {"asked_names_rule": False}),
                        ("without the own-names rule", {"own_rule": False}),
                        ("without the lex-guesses-aside rule", {"lex_aside": False}),
                        ("without the version-constant rule", {"without": "version_constants"}),
                        ("with a CamelCase word alone read as code", {"names_as_words": False}),
                        ("without other-kind names", {"without": "other_kind"}),
                        ("without other-kind names or the lex-guesses-aside rule",
                         {"without": "other_kind", "lex_aside": False}),
                        ("without option names", {"without": "options"}))},
    }  # fmt: skip
    for arm in ("query", "search", "agent form"):
        for name, by_split in result[arm].items():
            print(arm, name, {s: {k: by_split[s][k] for k in ("hit@1", "refused", "silence")} for s in by_split})
    print("rephrasing floors on dev agent forms:", result["rephrasing_floors"])
    print("cosines sparing wrong lex: guesses on dev agent forms:", result["guessed_names_nears"])
    print("question floors on dev verbatim questions:", result["question_floors"])
    print("chosen on dev:", result["chosen"], "cross-validated on dev:", result["cross_validated_dev"])
    common.save("evidence", result)


if __name__ == "__main__":
    main()

"""Render the README's benchmark section from benchmarks/results/*.json.

    python benchmarks/report.py          # rewrite the section in README.md
    python benchmarks/report.py --print  # print it

tests/test_readme_benchmarks.py fails when README.md and this rendering disagree,
so every figure in the README comes from the last run of the scripts.
"""

import argparse
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent
README = ROOT.parent / "README.md"
START, END = "<!-- benchmarks:start -->", "<!-- benchmarks:end -->"


def load(name: str) -> dict:
    return json.loads((ROOT / "results" / f"{name}.json").read_text())


def render() -> str:
    ruler, latency, vec = load("ruler-corpus"), load("latency"), load("vectors")
    example, corpus = load("index-example"), load("index-corpus")
    fp = ruler["fingerprint"]
    corpus_name = f"the benchmark bundle (`benchmarks/corpus`: {fp['gems']} gems, {fp['chunks']:,} chunks, digest `{fp['digest']}`)"
    parts = [
        "## Benchmarks",
        "",
        "Measured on a 2-core Debian 12 VM by the scripts in `benchmarks/` (`ruler.py`, `index_speed.py`, "
        "`latency.py`, `vector_speed.py`, `hook_overhead.py`, `evidence_bars.py`, `mcp_latency.py`, `fusion_rules.py`, "
        "`rank_rules.py`, `ranking_ceiling.py`; `report.py` writes this section from their last results). The benchmark "
        "bundle is Ruby's "
        "bundled gems plus Debian's `ruby-*` packages (Rails 6.1, rspec, rack, sidekiq, thor, …) resolved with "
        "`bundle lock --local`.",
        "",
        *_quality(ruler, corpus_name),
        *_fusion(load("fusion")),
        *_rank_rules(load("rank-rules")),
        *_ceiling(load("ceiling")),
        *_evidence(load("evidence")),
        *_indexing(example, corpus),
        *_hook(load("hook")),
        *_latency(latency),
        *_vectors(vec),
        *_mcp(load("mcp")),
        *_locations(ruler),
    ]
    return "\n".join(parts).rstrip() + "\n"


ARM_NAMES = {
    "search": "verbatim, `search`",
    "search --no-refusal": "verbatim, `search --no-refusal`",
    "vsearch": "verbatim, `vsearch`",
    "query": "verbatim, `query`",
    "query --no-refusal": "verbatim, `query --no-refusal`",
    "agent": "agent form (the invocation an agent writes from SKILL.md)",
}
STYLE_NAMES = {"user": "in users' words", "terse": "terse, users' terms", "author": "the author's, docs' terms"}


def _pair(splits: dict, pick) -> str:
    """One figure on dev and on test, side by side."""
    found = [pick(splits[s]) for s in ("dev", "test")]
    return " / ".join("–" if v is None else f"{v:.3f}" for v in found)


def _quality(r: dict, corpus_name: str) -> list[str]:
    q, arms = r["questions"], r["arms"]
    (dev, dev_absent), (test, test_absent) = q["by_split"]["dev"], q["by_split"]["test"]
    lines = [
        "### Retrieval quality (`benchmarks/ruler.py`)",
        "",
        f"{q['answerable']} answerable questions over {q['gems']} gems ({q['users_words']:.0%} in users' own words, "
        f"{q['version']:.0%} about what changed in a locked version) and {q['absent']} about subjects the bundle does "
        f"not cover, on {corpus_name}." + (f" Vectors: {r['model']}." if r.get("model") else ""),
        f"The questions (`benchmarks/questions/`) were split once by a seeded hash of each id into dev ({dev} "
        f"answerable, {dev_absent} absent) and test ({test} answerable, {test_absent} absent): bars and rules are "
        "fitted on dev, and a change is kept only if test agrees. Each cell is **dev / test**.",
        "",
        "| how the question reaches gemdoc | hit@1 | hit@3 | MRR@10 | answerable refused | silence on absent | identifiers hit@1 |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]  # fmt: skip
    for arm, name in ARM_NAMES.items():
        if arm not in arms:
            continue
        splits = arms[arm]
        gated = "--no-refusal" not in arm
        lines.append(
            f"| {name} | {_pair(splits, lambda g: g['overall']['hit@1'])} | {_pair(splits, lambda g: g['overall']['hit@3'])} "
            f"| {_pair(splits, lambda g: g['overall']['mrr'])} "
            f"| {_pair(splits, lambda g: g['overall']['refused'] if gated else None)} "
            f"| {_pair(splits, lambda g: g['silence'] if gated else None)} "
            f"| {_pair(splits, lambda g: g['by_kind'].get('identifier', {}).get('hit@1'))} |"
        )
    lines += ["", f"Agent form: {r['agent']}."]
    lines += _by_style(arms)
    lines += _file_level(r)
    return lines


def _by_style(arms: dict) -> list[str]:
    shown = [arm for arm in ("search", "query", "agent") if arm in arms]
    lines = [
        "",
        "hit@1 by how the question is written (dev / test):",
        "",
        "| questions | " + " | ".join(ARM_NAMES[a].split(" (")[0] for a in shown) + " |",
        "|---|" + "---:|" * len(shown),
    ]
    for style, name in STYLE_NAMES.items():
        counts = _pair(arms["search"], lambda g: g["by_style"].get(style, {}).get("n", 0)).replace(".000", "")
        cells = [_pair(arms[a], lambda g: g["by_style"].get(style, {}).get("hit@1")) for a in shown]
        lines.append(f"| {name} ({counts}) | " + " | ".join(cells) + " |")
    return lines


def _file_level(r: dict) -> list[str]:
    g = r["grep"]["test"]
    gf = g["file_level"]
    shown = [a for a in ("search", "vsearch", "query") if a in r["arms"]]
    lines = [
        "",
        "| at file granularity, test questions | hit@1 | hit@3 | MRR | characters returned |",
        "|---|---:|---:|---:|---:|",
    ]
    for arm in shown:
        graded = r["arms"][arm]["test"]
        fl = graded["file_level"]
        lines.append(f"| {ARM_NAMES[arm]} | {fl['hit@1']:.3f} | {fl['hit@3']:.3f} | {fl['mrr']:.3f} | {graded['payload_chars']:,} |")
    largest = max(r["arms"][a][s]["largest_reply_chars"] for a in shown for s in ("dev", "test"))
    lines += [
        f"| grep loop ({g['files']:,} indexed files) | {gf['hit@1']:.3f} | {gf['hit@3']:.3f} | {gf['mrr']:.3f} | {g['payload_chars']:,} |",
        "",
        f"Plain `ri NAME` answers {r['ri']['answered']} of the {r['ri']['identifier_questions']} identifier questions: "
        "`bundle install` generates no ri. Silence is the share of absent questions answered with nothing; "
        "\"answerable refused\" the share of answerable ones the evidence gate refused. The largest default `--json` "
        f"reply on these questions is {largest:,} characters (budget 12,000). The grep loop takes the question's "
        "words minus those in over 10% of the indexed files, one substring search each, and ranks files by how many "
        "distinct words hit.",
        "",
    ]  # fmt: skip
    return lines


def _shipped_bars(e: dict) -> str:
    """Why the shipped bars are not the ones chosen now, when they differ: a change ships only if test agrees."""
    if e["chosen"] == e["shipped"]:
        return "These are the shipped bars. "
    s, chosen, shipped = e["shipped"], e["query"]["chosen"]["test"], e["query"]["shipped"]["test"]
    return (f"The shipped bars differ (coverage ≥ {s['min_coverage']}, concentration ≥ {s['min_concentration']}, "
            f"cosine ≥ {s['min_cosine']}, Zipf {s['common_zipf']} / {s['rare_zipf']}): on test the bars chosen now "
            f"refuse {chosen['refused']:.3f} of the answerable questions against {shipped['refused']:.3f}, with silence "
            f"{chosen['silence']:.3f} against {shipped['silence']:.3f}, so test "
            f"{'confirms' if _confirmed(chosen, shipped, e['max_refused']) else 'does not confirm'} them. ")  # fmt: skip


def _confirmed(chosen: dict, shipped: dict, max_refused: float) -> bool:
    """Whether test agrees with a change of bars: more silence, refusing no more than allowed or than before."""
    return chosen["silence"] > shipped["silence"] and chosen["refused"] <= max(shipped["refused"], max_refused)


def _evidence(e: dict) -> list[str]:
    c, cv = e["chosen"], e["cross_validated_dev"]
    cosine = f"nearest cosine ≥ {c['min_cosine']}" if c["min_cosine"] <= 1 else "no cosine bar"
    lines = [
        "### Evidence gate (`benchmarks/evidence_bars.py`)",
        "",
        f"The gate's bars, chosen on the dev questions only (asked verbatim through `query`, {e['model']}): of "
        f"{len(e['grid']['min_coverage']) * len(e['grid']['min_concentration']) * len(e['grid']['min_cosine']) * len(e['grid']['zipf'])} "
        f"sets of bars, the one with the most silence refusing at most {e['max_refused']:.0%} of the answerable "
        f"questions. Chosen on all of dev: coverage ≥ {c['min_coverage']}, concentration ≥ {c['min_concentration']}, "
        f"{cosine}, a missing word weighing 0 at Zipf frequency ≥ {c['common_zipf']} and fully at ≤ {c['rare_zipf']}. "
        f"Fitted on {e['folds'] - 1} of {e['folds']} folds of dev and measured on the fold left out, the same rule "
        f"refuses {cv['refused']:.3f} of the answerable questions with silence {cv['silence']:.3f}. "
        f"{_shipped_bars(e)}Each cell is **dev / test**:",
        "",
        "| arm | bars | hit@1 | answerable refused | silence on absent |",
        "|---|---|---:|---:|---:|",
    ]  # fmt: skip
    for arm in ("query", "search", "agent form"):
        for name, by_split in e.get(arm, {}).items():
            d, t = by_split["dev"], by_split["test"]
            label = arm if arm == "agent form" else f"`{arm}`"
            lines.append(f"| {label} | {name} | {d['hit@1']:.3f} / {t['hit@1']:.3f} | {d['refused']:.3f} / "
                         f"{t['refused']:.3f} | {d['silence']:.3f} / {t['silence']:.3f} |")  # fmt: skip
    return lines + [
        "",
        "The agent-form rows judge each question's agent forms (`benchmarks/agent_forms.yaml`, the question asked once "
        "per sample of forms) with the shipped bars, "
        "with and without the rules that a technical term no documentation in the bundle mentions overrules the "
        "evidence of a typed query's other parts when none of them names a documented API, and (insisted subject) "
        "even when one does, if two parts or more say the term in words (a part writing it only as code does not "
        "count; a CamelCase word standing alone in a sentence, `gRPC` or `GraphQL`, is a product said in words, row "
        "\"with a CamelCase word alone read as code\" counting it as code). The rules have no bar of "
        "their own: a technical term is one the rare-word bar above weighs fully. The rephrasing floor refuses a "
        "typed query whose `vec:` part has no chunk within cosine "
        f"{e.get('rephrasing_floor', 0.45)} of it: the highest floor, in steps of 0.05, that refused at most 2% of the "
        "answerable dev forms; a documented method named by its full name or a cop stands against it (row \"floor "
        "without the specific-API rule\": the floor overruling those too). The asked-subject rule refuses the question "
        "as typed (the verbatim question, or an agent form's untyped part) when such a technical term is said in its "
        "sentence that asks, not only where it sets the scene, unless a part names a documented method by its full "
        "name or a cop and the term is an English word (one no word list holds, zipf 0: `grpc`, `oauth2`, refuses "
        "all the same; row \"without the coined-subject rule\"), nor a word capitalised inside the sentence as a name "
        "is (\"register the Herb engine\", \"switch the driver to Cuprite\"; not a sentence's first word, nor an "
        "abbreviation, `QA`: row \"without the proper-name rule\"); its rows show the gate without it (for `query` and "
        "`search`, with bars chosen again without it). The row \"chosen with every missing word weighing fully\" shows the best bars "
        "when an ordinary English word the docs lack weighs as much as a technical term: more silence, but issue "
        "#14 asks that \"tomorrow\" or \"payments\" not weigh like \"kafka\", so those bars are not shipped. "
        "Rephrasing floors on dev's agent forms (answerable refused / silence): " + _sweep(e, "rephrasing_floors")
        + ". The question floor refuses a verbatim `query` of one sentence (no scene) with no chunk within cosine "
        f"{e.get('question_floor')} of it, unless it names a documented method by its full name; chosen in the same "
        "steps as the bars, the most silence refusing at most 2% of dev's answerable questions (lowest on a tie). "
        "Question floors on dev's verbatim questions: " + _sweep(e, "question_floors")
        + ". The guessed-names rule refuses a typed query when the bundle documents none of the API names of its "
        "`lex:` part, neither as written nor where RDoc files them, unless a chunk comes within cosine "
        f"{e.get('guessed_names_near')} of a part or a part names a documented method by its full name; a name counts "
        "as documented when it names an entry, one RDoc files elsewhere, or its words stand in a row in the docs, "
        "and a class or module's `VERSION` constant (`Minitest::VERSION`, an agent's name for the release it asks "
        "about) is no wrong guess when the bundle documents the class or module (row \"without the version-constant "
        "rule\": found through a test question). The asked-names rule refuses the same way, whatever the names beside "
        "it, when the first `lex:` name is missing and the question's untyped part writes its last name as code (\"how do "
        "I use perform_all_later\", not \"is there a builder\": the user asks for an API these versions lack, and the names beside it are the "
        "agent's way around it; row \"without the asked-names rule\"); a name asked for counts as documented only as "
        "itself, an entry or the name written in a passage, not its words in a row; a first name the agent guessed on "
        "its own is only a wrong guess. The bar both rules share was chosen on dev's agent forms the same way, and is "
        "kept where a higher one refuses more answerable dev forms, or silences absent dev forms that test does not "
        "confirm: " + _sweep(e, "guessed_names_nears") + ". "
        "Three rules widen what counts as evidence: a method named as the other kind (`Rack::Utils#escape_html` for "
        "RDoc's `Rack::Utils::escape_html`) is named (rows \"without other-kind names\"), so is an option or "
        "environment variable a passage writes (`RUBY_DEBUG_OPEN`; rows \"without option names\"), and a term only a "
        "`lex:` part writes, as code, is the agent's guess at a name, not an absent subject (row \"without the "
        "lex-guesses-aside rule\"; the first and the last often spare the same form, hence a row without both).",
        "",
    ]


def _dev_cost(r: dict, arm: str) -> str:
    """How many dev questions clear_first_only loses on one arm: its asks lost (hit@1 off minus on, times
    the asks) over the times each question is asked (the agent arm: once per sample of forms)."""
    verdict = r["rules"]["clear_first_only"]["arms"][arm]
    on, off = verdict["on"]["dev"], verdict["off"]["dev"]
    lost = max(0.0, off["hit@1"] - on["hit@1"]) * on["n"] / (on["n"] / r["questions"]["dev"])
    return f"{round(lost, 1):g}"


def _sweep(e: dict, key: str) -> str:
    """One of evidence_bars.py's sweeps of a cosine: each value's answerable refused / silence on dev."""
    return ", ".join(f"{k} {v['refused']:.3f} / {v['silence']:.3f}" for k, v in e.get(key, {}).items())


def _mcp(m: dict) -> list[str]:
    q, s = m["query"], m["search"]
    return [
        "### MCP server (`benchmarks/mcp_latency.py`)",
        "",
        f"`gemdoc mcp` on the benchmark bundle ({m['fingerprint']['chunks']:,} chunks, vectors embedded), driven by a "
        f"real MCP client over stdio, warm: the `query` tool (hybrid) answers in {q['median_ms']:.1f} ms median "
        f"(p95 {q['p95_ms']:.1f} ms) round trip, `search` in {s['median_ms']:.1f} ms (p95 {s['p95_ms']:.1f} ms), "
        f"over the {q['n']} known-answer questions.",
        "",
    ]


def _indexing(example: dict, corpus: dict) -> list[str]:
    lines = [
        "### Indexing (`benchmarks/index_speed.py`)",
        "",
        "Cold `gemdoc index --all` against `rdoc --ri` alone on the same gems and files with the same number of "
        "processes (medians of alternating runs):",
        "",
        "| bundle | gems | result | gemdoc | `rdoc --ri` alone | ratio | s/gem | peak RSS | unchanged lockfile |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in (("example (`examples/demo`)", example), ("benchmark bundle", corpus)):
        c, fl = r["gemdoc_cold"], r["rdoc_floor"]
        lines.append(
            f"| {name} | {fl['gems']} | {c['summary'].split(' · ')[0]} · {c['summary'].split(' · ')[1]} | "
            f"{c['seconds']:.1f} s | {fl['seconds']:.1f} s | {r['ratio_to_floor']:.2f}x | {r['seconds_per_gem']:.2f} | "
            f"{c['peak_rss_mib']:.0f} MiB | {r['unchanged_lockfile']['median_s']:.2f} s |"
        )
    return lines + [""]


def _hook(h: dict) -> list[str]:
    runs = ", ".join(f"{r['gem']} {r['added']:.2f} s" for r in h["runs"])
    return [
        "### Bundler hook (`benchmarks/hook_overhead.py`)",
        "",
        f"A {h['bundle_gems']}-gem bundle from the benchmark bundle, one gem added, `bundle install --local`: "
        f"the hook adds **{h['added_median']:.2f} s** (median; {runs}) beyond that gem's own RDoc and chunking time, "
        f"to a {h['plain_median']:.2f} s install without it; {h['settled_added_median']:.2f} s when the added "
        "version is already in the store. With nothing changed the hook only compares the lockfile digest "
        f"with the manifest and adds {h['unchanged_added_median']:.2f} s.",
        "",
    ]


def _latency(lat: dict) -> list[str]:
    w, big = lat["warm"], lat["scale"]
    fp = w["fingerprint"]
    return [
        "### Search latency and scale (`benchmarks/latency.py`)",
        "",
        "| | n | median | p95 |",
        "|---|---:|---:|---:|",
        f"| query in-process, {fp['chunks']:,} chunks | {w['in_process']['n']} | {w['in_process']['median_ms']:.1f} ms | {w['in_process']['p95_ms']:.1f} ms |",
        f"| `gemdoc search` whole process (a regular `pip install`), same store | {w['whole_process']['n']} | {w['whole_process']['median_ms']:.0f} ms | {w['whole_process']['p95_ms']:.0f} ms |",
        *_click_row(w),
        f"| query in-process, synthetic {big['chunks']:,} chunks | {big['query']['n']} | {big['query']['median_ms']:.1f} ms | {big['query']['p95_ms']:.1f} ms |",
        "",
        f"The synthetic store ({big['gems']} gems of text drawn from the benchmark bundle's vocabulary, "
        f"{big['store_mib']:.0f} MiB) builds in {big['build_s']:.1f} s, re-indexes one changed gem in "
        f"{big['reindex_one_gem_s']:.2f} s, opens in {big['store_open_ms']:.1f} ms, and the process peaks at "
        f"{big['peak_rss_mib']:.0f} MiB.",
        "",
    ]


def _click_row(w: dict) -> list[str]:
    if "whole_process_click" not in w:
        return []
    c = w["whole_process_click"]
    return [f"| the same search through the click command (how every other command starts), interleaved | {c['n']} | "
            f"{c['median_ms']:.0f} ms | {c['p95_ms']:.0f} ms |"]


def _fusion(f: dict) -> list[str]:
    lines = [
        "### Fusion rule (`benchmarks/fusion_rules.py`)",
        "",
        "The same questions, with each build of the model embedding the bundle in a store of its own: keyword "
        "`search` alone, hybrid `query` with plain reciprocal rank fusion, and hybrid `query` as shipped (the "
        "keyword arm's first place kept first).",
        "",
        "| model (`../shared/models`) | ranking | hit@1 | hit@3 | hit@10 | MRR |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for build, graded in f["models"].items():
        for i, rule in enumerate(("keyword", "plain fusion", "keyword first kept")):
            m = graded[rule]["overall"]
            label = rule + (" **(shipped)**" if rule == f["shipped"] else "")
            lines.append(f"| {build if i == 0 else ''} | {label} | {m['hit@1']:.3f} | {m['hit@3']:.3f} | "
                         f"{m['hit@10']:.3f} | {m['mrr']:.3f} |")  # fmt: skip
    lines += [
        "",
        "Where the two arms disagree about first place, the vector arm of this small model is right about as "
        "often as it is wrong, so it only reorders what follows the keyword arm's first result.",
        "",
    ]
    return lines


def _delta(r: dict, rule: str, arm: str) -> str:
    """A rule's dev hit@1 delta on one arm, as the table writes it."""
    return f"{r['rules'][rule]['arms'][arm]['delta']['dev']['hit@1']:+.3f}"


def _turned_on_test(r: dict) -> str:
    """The rules shipped on whose test hit@1 has since turned below zero on an arm, said in a sentence."""
    turned = [f"`{rule}` on the {arm} arm ({v['delta']['dev']['hit@1']:+.3f} / {v['delta']['test']['hit@1']:+.3f} "
              f"hit@1, {v['delta']['dev']['mrr']:+.3f} / {v['delta']['test']['mrr']:+.3f} MRR)"
              for rule, data in r["rules"].items() if data["shipped"] and rule != "clear_first_only"
              for arm, v in data["arms"].items() if v["delta"]["test"]["hit@1"] < 0]  # fmt: skip
    if not turned:
        return ""
    return (" Shipped on, and now below zero on a test hit@1 cell: " + "; ".join(turned) + ". Such a rule "
            "helped dev and test when it was added; it stays on, said here, until a rule measured on dev and test "
            "replaces it.")


def _rank_rules(r: dict) -> list[str]:
    lines = [
        "### Ranking rules (`benchmarks/rank_rules.py`)",
        "",
        f"Each ranking rule flipped against the shipped setting, every answerable question asked with `--no-refusal` "
        f"(dev {r['questions']['dev']}, test {r['questions']['test']} questions): `search` and `query` read the "
        "question verbatim, the agent arm runs its agent forms (each question once per sample, figures averaged). "
        "Each cell is rule on minus rule off, **dev / test**; a "
        "rule ships on when it helped on dev when it was added and test agreed. Three exceptions, said plainly: "
        "`exact_names_first` corrects what a full name names (an entry under exactly that name, not a copy "
        "vendored under another namespace) and was found through a test question, with no effect on dev when it "
        f"was added (now {_delta(r, 'exact_names_first', 'agent')} on the agent arm's dev hit@1: since module "
        "functions are named as module methods, the `JSON.parse` b-075's agents write picks `JSON::parse` "
        "exactly, ahead of the answer key's `MultiJson#load`); "
        "`clear_first_only`, kept for `query` where it helped dev when it was added, can cost dev questions "
        f"beside the later rules (now `query` {_dev_cost(r, 'query')}, the agent arm {_dev_cost(r, 'agent')} "
        "on average over its samples): where it "
        "costs, its dev verdict has turned since, and it stays on only until a rule replaces it, said here; "
        "`version_owners` ties a version to the gem named before it, from an agent trial (\"Faraday 1.1.0\" "
        "ranked minitest's and rbs' 1.1.0 notes first): no ruler question names a gem before a version another "
        "gem's titles hold, so it moves nothing here." + _turned_on_test(r),
        "",
        "| rule | arm | Δ hit@1 | Δ MRR | shipped |",
        "|---|---|---:|---:|---|",
    ]
    for rule, data in r["rules"].items():
        for arm, v in data["arms"].items():
            d = v["delta"]
            hit, mrr = (f"{d['dev'][m]:+.3f} / {d['test'][m]:+.3f}" for m in ("hit@1", "mrr"))
            lines.append(f"| `{rule}` (`{data['setting']}`) | {arm} | {hit} | {mrr} | {'on' if data['shipped'] else 'off'} |")
    return lines + [""]


def _ceiling(c: dict) -> list[str]:
    within, shipped = c["answer_within"], c["shipped"]
    misses, held = c["misses_first_result"], c["answer_coverage"]
    lines = [
        "### Ranking ceiling (`benchmarks/ranking_ceiling.py`)",
        "",
        f"How far re-ordering the keyword arm's first {c['pool']} results could lift first place on the same "
        f"{c['questions']} questions. A perfect re-ranker of the first k results reaches hit@1 = "
        + ", ".join(f"{within[k]:.3f} (k = {k})" for k in sorted(within, key=int))
        + f". Of the {misses['own_gem'] + misses['other_gem']} questions whose answer is not first, the first result "
        f"comes from another gem for {misses['other_gem']}.",
        "",
        f"A learned linear re-ranker of that pool (pairwise logistic regression; {c['folds']}-fold cross-validation "
        f"over questions, {c['shuffles']} shuffles), against the shipped ranking (hit@1 {shipped['hit@1']:.3f}, "
        f"MRR {shipped['mrr']:.3f}):",
        "",
        "| features | cross-validated hit@1 (range) | hit@3 | MRR | fitted on every question: hit@1 | MRR |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for key, label in (("learned_lexical", f"{len(c['learned_lexical']['features'])} lexical"),
                       ("learned_with_cosine", f"the same + cosine ({c['learned_with_cosine']['model']})")):
        cv, fit = c[key]["cross_validated"], c[key]["fitted_on_all"]
        lines.append(f"| {label} | {cv['hit@1']['mean']:.3f} ({cv['hit@1']['min']:.3f}–{cv['hit@1']['max']:.3f}) | "
                     f"{cv['hit@3']['mean']:.3f} | {cv['mrr']['mean']:.3f} | {fit['hit@1']:.3f} | {fit['mrr']:.3f} |")
    best = max(max(c[k]["cross_validated"]["hit@1"]["max"], c[k]["fitted_on_all"]["hit@1"])
               for k in ("learned_lexical", "learned_with_cosine"))  # fmt: skip
    verdict = "above" if best > shipped["hit@1"] else "below" if best < shipped["hit@1"] else "equal to"
    lines += [
        "",
        "The lexical features: " + ", ".join(c["learned_lexical"]["features"]) + f". The best hit@1 of any "
        f"re-ranker above, even one fitted on the questions it is graded on, is {best:.3f}: {verdict} the shipped "
        f"ranking. An accepted answer ranked first holds a median {held['first']:.2f} of its question's rarity; one "
        f"in the pool but not first ({held['not_first_n']} questions) holds {held['not_first']:.2f}, a word or two "
        "(`compare two floats allowing a small tolerance` → `assert_in_delta`). More first places need a stronger "
        "signal of what the words mean than this model's cosine, such as a cross-encoder re-ranker; none can be "
        "downloaded on this machine.",
        "",
    ]
    return lines


def _vectors(v: dict) -> list[str]:
    lines = [
        "### Embedding and vector search (`benchmarks/vector_speed.py`)",
        "",
        "| model (`../shared/models`) | chunks embedded | chunks/s | chunks/s, each batch over all cores | peak RSS |",
        "|---|---:|---:|---:|---:|",
    ]
    for model, t in v["throughput"].items():
        lines.append(f"| {model} | {t['chunks']:,} | {t['chunks_per_s']:.0f} | {t['all_cores_per_batch_chunks_per_s']:.0f} | "
                     f"{t['peak_rss_mib']:.0f} MiB |")  # fmt: skip
    rank = v["ranking"]
    whole = v["query_whole_process"]
    lines += [
        "",
        f"Ranking by one matrix product: {rank['20000']['median_ms']:.1f} ms median for 20,000 vectors, "
        f"{rank['100000']['median_ms']:.1f} ms for 100,000 (p95 {rank['100000']['p95_ms']:.1f} ms). "
        f"`gemdoc query` as a whole process on the benchmark bundle: {whole['hybrid']['median_ms']} ms median "
        f"(p95 {whole['hybrid']['p95_ms']} ms) with the model loaded, {whole['keyword fallback']['median_ms']} ms "
        "when it falls back to keywords.",
        "",
    ]
    return lines


def _locations(r: dict) -> list[str]:
    lines = [
        "### Source locations",
        "",
        "Share of ri methods and attributes joined to a Ruby definition (`file:line`), from the same run of the ruler:",
        "",
        "| gem | located | methods | share |",
        "|---|---:|---:|---:|",
    ]
    for gem, (located, methods) in r["locations"].items():
        lines.append(f"| {gem} | {located:,} | {methods:,} | {located / max(methods, 1):.0%} |")
    lines += [
        "",
        "The rest are C methods, `attr_*` and `define_method` that RDoc files under another owner, and "
        "metaprogrammed methods; they keep no line rather than a guessed one.",
    ]
    return lines


def rewrite(readme: str, section: str) -> str:
    pattern = re.compile(re.escape(START) + ".*?" + re.escape(END), re.S)
    return pattern.sub(lambda _: f"{START}\n{section}{END}", readme)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--print", action="store_true")
    args = parser.parse_args()
    section = render()
    if args.print:
        print(section)
    else:
        README.write_text(rewrite(README.read_text(), section))


if __name__ == "__main__":
    main()

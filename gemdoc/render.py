"""How replies look: text for people, JSON and file lists for agents.

The JSON contract (documented in README.md) only ever grows by new fields. Every reply
fits its character budget (``max_chars``): results that do not fit are left out and
counted in ``omitted_for_budget``; a first result too long on its own is cut, marked
``text_truncated``.
"""

import json
import re

from gemdoc import uri
from gemdoc.ask import Options, Reply, cut
from gemdoc.search import Hit
from gemdoc.show import restricted

SNIPPET_CHARS = 240
NO_PROSE = "(no prose: `gemdoc show URI --source` reads its definition)"  # an API entry without a comment


def result_uri(hit: Hit) -> str:
    return uri.make(hit.gem, hit.version, hit.file, hit.line, hit.title)


def hit_json(hit: Hit, arms: dict[str, int], explain: dict | None = None) -> dict:
    item = {
        "gem": hit.gem,
        "version": hit.version,
        "source_type": hit.source_type,
        "kind": hit.kind,
        "title": hit.title,
        "heading": hit.heading,
        "path": hit.file,
        "line": hit.line,
        "uri": result_uri(hit),
        "signature": hit.signature,
        "visibility": hit.visibility or None,
        "score": round(hit.score, 4),
        "matched": hit.matched,
        "arms": arms,
        "text": hit.body,
    }
    if explain is not None:
        item["explain"] = explain
    return item


def reply_data(reply: Reply, options: Options) -> dict:
    evidence = reply.evidence
    data = {
        "query": reply.query,
        "mode": reply.mode,
        "gems_in_scope": len(reply.bundle.scope.gems),
        "stale": reply.bundle.scope.stale,
        "refused": reply.refused,
        "diagnosis": evidence.diagnosis() if evidence and (reply.refused or options.explain) else None,
        "notes": reply.notes,
        "results": [],
        "omitted_for_budget": 0,
    }
    items = [hit_json(h, reply.arms.get(h.id, {}), reply.explain.get(h.id) if options.explain else None)
             for h in reply.hits]  # fmt: skip
    _fit(data, items, options.max_chars)
    return data


def results_json(reply: Reply, options: Options) -> str:
    return _dumps(reply_data(reply, options))


def _dumps(data: dict) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2)


def _fit(data: dict, items: list[dict], budget: int) -> None:
    """Append results while the whole reply stays within ``budget`` characters."""
    for index, item in enumerate(items):
        data["results"].append(item)
        if len(_dumps(data)) <= budget:
            continue
        if index == 0:  # the first result is cut to fit rather than left out, as in text mode
            item["text_truncated"] = True
            over = len(_dumps(data)) - budget
            item["text"] = cut(item["text"], max(0, len(item["text"]) - over - 1)) + "…"
            continue
        data["results"].pop()
        data["omitted_for_budget"] = len(items) - index
        return


def results_files(reply: Reply) -> str:
    lines = []
    for hit in reply.hits:
        where = f"{hit.file}:{hit.line}" if hit.file and hit.line else hit.file or f"- {hit.title}"
        lines.append(f"{hit.gem}@{hit.version} {where}")
    return "\n".join(dict.fromkeys(lines))


def results_text(reply: Reply, options: Options) -> str:
    if reply.refused:
        return "\n".join(reply.notes + [refusal_text(reply)])
    if not reply.hits:
        return "\n".join(reply.notes + [f"no results in {len(reply.bundle.scope.gems)} gems of this bundle"])
    blocks = [_hit_block(n, h, reply.arms.get(h.id), reply.explain.get(h.id)) for n, h in enumerate(reply.hits, 1)]
    out, used = [], 0
    for block in blocks:
        if out and used + len(block) + 1 > options.max_chars:
            out.append(f"({len(blocks) - len(out)} more results omitted for the --max-chars budget)")
            break
        out.append(block)
        used += len(block) + 1
    return "\n".join(reply.notes + out)


def refusal_text(reply: Reply) -> str:
    d = reply.evidence.diagnosis()
    return "\n".join([
        f"no answer in this bundle ({len(reply.bundle.scope.gems)} gems): {d['reason']}",
        f"  distinctive terms: {', '.join(d['distinctive']) or '(none)'} · matched: {', '.join(d['matched']) or '(none)'}"
        + (f" · everywhere: {', '.join(d['ubiquitous'])}" if d["ubiquitous"] else "")
        + (f" · never mentioned: {', '.join(d['absent'])}" if d["absent"] else "")
        + (f" · lex: names not in these versions: {', '.join(d['guessed'])}" if d["guessed"] else ""),
        f"  coverage {d['coverage']:.3f} (bar {d['min_coverage']}) · concentration {d['concentration']:.3f} "
        f"(bar {d['min_concentration']})"
        + (f" · nearest cosine {d['cosine']:.3f} (bar {_cosine_bar(d)})" if d["cosine"] is not None else "")
        + (f" · vec: nearest cosine {d['rephrasing']:.3f} (floor {d['min_rephrasing']})"
           if d["rephrasing"] is not None else "")
        + (f" · question: nearest cosine {d['question']:.3f} (floor {d['min_question']})"
           if d["question"] is not None else ""),
        *[f"  part {p['part']}, its words alone: {p['reason'] or 'enough'} · coverage {p['coverage']:.3f} · "
          f"concentration {p['concentration']:.3f}" for p in d["parts"]],
        f"  nearest candidates rejected: {'; '.join(d['nearest']) or '(none)'}",
        f"  {d['hint']}",
    ])  # fmt: skip


def _cosine_bar(d: dict) -> float:
    """The cosine that would have spared this refusal: wrong lex: guesses need a nearer chunk."""
    return d["min_guessed_near"] if d["reason"] == "named_apis_not_in_bundle" else d["min_cosine"]


def _hit_block(number: int, hit: Hit, arms: dict | None, explain: dict | None) -> str:
    found_by = "  (" + ", ".join(f"{arm} #{rank}" for arm, rank in arms.items()) + ")" if arms else ""
    section = hit.heading[len(hit.title):] if hit.heading.startswith(f"{hit.title} > ") else ""  # of a long comment
    title = f"{hit.title}{restricted(hit.visibility)}{section}"
    lines = [f"{number:>2}. [{hit.gem} {hit.version} · {hit.source_type}] {title}{found_by}"]
    detail = f"    {location(hit)}  {result_uri(hit)}"
    if hit.signature and hit.source_type == "ri" and hit.kind in ("method", "attribute"):
        detail += f"\n    {hit.signature.splitlines()[0]}"
    lines.append(detail)
    snippet = snippet_of(hit.body, hit.matched)
    if snippet:
        lines.append(f"    {snippet}")
    elif hit.source_type == "ri" and hit.line:
        lines.append(f"    {NO_PROSE}")
    if explain:
        fields = ", ".join(f"{k} {v}" for k, v in explain["fields"].items()) or "none"
        lines.append(f"    explain: score {hit.score:.4f} · matched {', '.join(explain['matched']) or '-'} · "
                     f"fields {fields} · coverage {explain['coverage']} (x{explain['coverage_factor']}) · "
                     f"gem x{explain['gem_factor']}")  # fmt: skip
    return "\n".join(lines)


def location(hit: Hit) -> str:
    if not hit.file:
        return "(no source location)"
    return f"{hit.file}:{hit.line}" if hit.line else hit.file


def snippet_of(body: str, matched: list[str]) -> str:
    flat = re.sub(r"\s+", " ", body).strip()
    if len(flat) <= SNIPPET_CHARS:
        return flat
    lower = flat.lower()
    positions = [lower.find(t) for t in matched if lower.find(t) >= 0]
    start = max(0, min(positions) - 60) if positions else 0
    space = flat.find(" ", start) if start else -1
    start = space + 1 if 0 <= space < start + 30 else start  # begin at a word, as the cut ends at one
    piece = cut(flat[start:], SNIPPET_CHARS)
    return ("…" if start else "") + piece + ("…" if start + len(piece) < len(flat) else "")

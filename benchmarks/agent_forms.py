"""The ruler's agent arm: each question as the one invocation a coding agent writes for it.

    python benchmarks/agent_forms.py prompt ID [ID ...]   # the exact prompt a fresh helper gets
    python benchmarks/agent_forms.py assemble REPLY ID [ID ...]   # its reply (forms by label) as forms by id
    python benchmarks/agent_forms.py deal DIR N [SAMPLE]   # every question, shuffled, dealt into N prompts in DIR
    python benchmarks/agent_forms.py collect DIR [DIR ...]   # the replies (reply-K.yaml), a sample per DIR, as
                                                              # benchmarks/agent_forms.yaml

benchmarks/agent_forms.yaml holds the forms, in samples each written by its own fresh helpers:

    skill_sha256: <sha256 of gemdoc/SKILL.md when the forms were written>
    samples:
    - <question id>: {tool: query|search|vsearch, args: {query: "...", n: 10, no_refusal: false}}
    - <question id>: ...

The agent arm asks every question once per sample (asked): one sample's figures move by a question
or two with the helper that wrote it, more than many a rule's effect.

``args`` are what the agent passes the tool: ``query`` (the CLI's words, typed parts ``lex:``, ``vec:``,
``hyde:`` included), ``n`` and ``no_refusal``; ``lex``, ``vec`` and ``hyde`` given as separate fields
become typed parts of the query. A helper writes a form from SKILL.md, the bundle's gem list and the
question alone (``prompt`` prints exactly that), never seeing the answer. load() refuses forms written
from another SKILL.md, so they are regenerated whenever SKILL.md changes what it advises.
"""

import functools
import hashlib
import random
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import questions  # noqa: E402

from gemdoc import ask, lockfile, models, vectors  # noqa: E402

FORMS = common.ROOT / "agent_forms.yaml"
SKILL = common.ROOT.parent / "gemdoc" / "SKILL.md"
TOOLS = ("query", "search", "vsearch")
TYPED_FIELDS = ("lex", "vec", "hyde")
SEED = 7  # deal's shuffle of the first sample; sample K uses SEED + K - 1
ARGS = ("query", "n", "no_refusal", *TYPED_FIELDS)


class StaleForms(Exception):
    """The forms were written from another SKILL.md (or are malformed): regenerate them."""


def skill_sha256(skill: Path = SKILL) -> str:
    return hashlib.sha256(skill.read_bytes()).hexdigest()


def load(path: Path = FORMS, skill: Path = SKILL) -> list[dict[str, dict]]:
    """The samples of forms, each by question id; [] when no forms were written yet."""
    if not path.exists():
        return []
    data = yaml.safe_load(path.read_text()) or {}
    if data.get("skill_sha256") != skill_sha256(skill):
        raise StaleForms(
            f"{path.name} was written from another {skill.name} (sha256 {str(data.get('skill_sha256'))[:12]}, "
            f"now {skill_sha256(skill)[:12]}): regenerate the forms with `python benchmarks/agent_forms.py prompt`"
        )
    samples = data.get("samples") or []
    for forms in samples:
        for qid, form in forms.items():
            _check(qid, form)
    return samples


def asked(questions_: list[dict], samples: list[dict[str, dict]]) -> list[dict]:
    """Each question once per sample that has a form for it, carrying that ``form``; the copy's id
    names its sample (``a-001@2``), so that its rank is kept apart from the other samples'."""
    return [q | {"id": f"{q['id']}@{k}", "form": forms[q["id"]]}
            for k, forms in enumerate(samples, start=1) for q in questions_ if q["id"] in forms]  # fmt: skip


def _check(qid: str, form: dict) -> None:
    if not isinstance(form, dict) or form.get("tool") not in TOOLS or not isinstance(form.get("args"), dict):
        raise StaleForms(f"form {qid}: needs tool (one of {', '.join(TOOLS)}) and args")
    unknown = set(form["args"]) - set(ARGS)
    if unknown:
        raise StaleForms(f"form {qid}: unknown args {', '.join(sorted(unknown))} (known: {', '.join(ARGS)})")
    if not text_of(form["args"]).strip():
        raise StaleForms(f"form {qid}: no query")


def text_of(args: dict) -> str:
    """The query as the tool receives it: separate typed fields become typed parts."""
    typed = [f"{kind}: {args[kind]}" for kind in TYPED_FIELDS if args.get(kind)]
    return "\n".join([str(args.get("query") or ""), *typed]).strip()


@functools.lru_cache(maxsize=4)
def _session(project_dir: Path) -> tuple:
    """The bundle, embedder and matrix, opened once per process (as the MCP server keeps them)."""
    bundle = ask.open_bundle(project_dir.resolve())
    if not vectors.any_embedded(bundle.conn, bundle.scope.gems):
        return bundle, None, None
    from gemdoc.encoder import Embedder

    return bundle, Embedder(models.configured(bundle.root)), vectors.Matrix(bundle.conn, bundle.scope.gems)


def run(form: dict, project_dir: Path = common.CORPUS) -> ask.Reply:
    """Execute one form in-process as `gemdoc <tool>` would, on the store GEMDOC_HOME points at."""
    args = form["args"]
    options = ask.Options(limit=int(args.get("n", 10)), refuse=not args.get("no_refusal", False))
    bundle, embedder, matrix = _session(Path(project_dir))
    text = text_of(args)
    if form["tool"] == "search":
        return ask.keyword(bundle, text, options)
    return ask.semantic(bundle, text, options, embedder, matrix, vector_only=form["tool"] == "vsearch")


def gem_list(project_dir: Path = common.CORPUS) -> list[str]:
    lock = lockfile.load(project_dir / "Gemfile.lock")
    return [f"{g.name} {g.version}" for g in lock.select(include_transitive=True)]


def labels(ids: list[str]) -> dict[str, str]:
    """The opaque label each question gets in a prompt (``q1``, ``q2``, ... in the order given): an id
    such as ``absent-a-003`` would tell the helper that the bundle does not answer it."""
    return {f"q{n}": qid for n, qid in enumerate(ids, start=1)}


def assemble(ids: list[str], reply: dict) -> dict[str, dict]:
    """A helper's reply to ``prompt(ids)`` (its forms by label) as forms by question id."""
    by_label = labels(ids)
    unknown = set(reply.get("forms") or {}) - set(by_label)
    if unknown or len(reply.get("forms") or {}) != len(ids):
        raise StaleForms(f"the reply does not answer exactly the {len(ids)} labels asked (unknown: {sorted(unknown)})")
    return {by_label[label]: form for label, form in reply["forms"].items()}


def prompt(ids: list[str]) -> str:
    """What a fresh helper is given to write forms: SKILL.md, the gem list, the questions under opaque
    labels; never answers."""
    known, absent = questions.load()
    by_id = {q["id"]: q for q in known + absent}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise SystemExit(f"no such question id: {', '.join(missing)}")
    asked = "\n".join(f"- {label}: {' '.join(by_id[i]['q'].split())}" for label, i in labels(ids).items())
    return "\n".join([
        "You are a coding agent working in a Ruby project. The project's documentation tool, gemdoc, ships the "
        "skill below. For each question, write the ONE gemdoc invocation you would make first to answer it. "
        "Do not answer the questions and do not run anything.",
        "", "=== SKILL.md ===", SKILL.read_text().rstrip(), "=== end of SKILL.md ===", "",
        "The project's Gemfile.lock locks these gems:", ", ".join(gem_list()), "",
        "The questions (label: question):", asked, "",
        "Reply with YAML only, exactly in this format, one entry per question label:",
        "forms:",
        "  <question label>:",
        f"    tool: <one of {', '.join(TOOLS)}>",
        "    args: {query: \"<the query text, typed parts lex:/vec:/hyde: included if you use them>\", n: 10}",
    ])  # fmt: skip


def deal(folder: Path, helpers: int, sample: int = 1) -> None:
    """Every question's id, shuffled with a fixed seed per ``sample`` (so that each sample groups the
    questions differently) and dealt round-robin into ``helpers`` groups: for each, ``prompt-K.txt``
    (what helper K is given) and ``ids-K.txt`` (the ids, for ``assemble``)."""
    known, absent = questions.load()
    ids = [q["id"] for q in known + absent]
    random.Random(SEED + sample - 1).shuffle(ids)
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(helpers):
        group = ids[k::helpers]
        (folder / f"prompt-{k + 1}.txt").write_text(prompt(group) + "\n")
        (folder / f"ids-{k + 1}.txt").write_text(" ".join(group) + "\n")


HEADER = """\
# Agent forms (issue #14 item 1): for each ruler question, per sample, the one invocation a fresh helper wrote from
# `python benchmarks/agent_forms.py prompt IDS` alone (SKILL.md, the bundle's gem list, the questions under
# opaque labels; never the answers). {samples} samples of {count} questions, each in {prompts} prompts
# (`agent_forms.py deal DIR {prompts} K`: ids shuffled with random.Random(7 + K - 1) and dealt round-robin), one
# fresh helper per prompt, each writing reply-K.yaml; `agent_forms.py collect DIR1 DIR2 ...` maps each reply's
# labels back to ids and wrote this file. Regenerate whenever gemdoc/SKILL.md changes: load() refuses forms of
# another SKILL.md.
"""


def collect(folders: list[Path], target: Path = FORMS, skill: Path = SKILL) -> int:
    """Every dealt prompt's reply in each of ``folders`` (``reply-K.yaml`` beside ``ids-K.txt``), a
    sample per folder, as the forms file, stamped with ``skill``'s hash. Returns the number of forms
    written."""
    if len(set(map(Path.resolve, folders))) != len(folders):
        raise StaleForms("a folder given twice would count one sample twice")
    samples = [_sample(folder) for folder in folders]
    if any(set(forms) != set(samples[0]) for forms in samples):
        raise StaleForms("the samples do not hold the same questions: deal every sample from the same questions")
    body = yaml.safe_dump({"skill_sha256": skill_sha256(skill), "samples": samples}, sort_keys=False,
                          allow_unicode=True, width=1000)  # fmt: skip
    dealt = len(list(folders[0].glob("ids-*.txt")))
    target.write_text(HEADER.format(count=len(samples[0]), prompts=dealt, samples=len(samples)) + body)
    return sum(map(len, samples))


def _sample(folder: Path) -> dict[str, dict]:
    """One sample's forms by id from ``folder``; StaleForms naming every prompt whose reply is missing
    or malformed, so that only those prompts go to fresh helpers again."""
    dealt = sorted(folder.glob("ids-*.txt"), key=lambda p: int(p.stem.split("-")[1]))
    if not dealt:
        raise StaleForms(f"no prompts dealt in {folder}: run `agent_forms.py deal {folder} N` first")
    forms, wrong = {}, []
    for ids_file in dealt:
        reply = folder / f"reply-{ids_file.stem.split('-')[1]}.yaml"
        if not reply.exists():
            wrong.append(f"{reply.name}: missing")
            continue
        try:
            got = assemble(ids_file.read_text().split(), yaml.safe_load(reply.read_text()) or {})
            for qid, form in got.items():
                _check(qid, form)
        except (OSError, yaml.YAMLError, StaleForms, AttributeError) as error:
            wrong.append(f"{reply.name}: {str(error).splitlines()[0]}")
            continue
        forms |= got
    if wrong:
        raise StaleForms(f"{folder}: {len(wrong)} of {len(dealt)} replies missing or malformed (give their "
                         "prompt-K.txt to fresh helpers again): " + "; ".join(wrong))
    return forms


def main() -> None:
    if len(sys.argv) >= 3 and sys.argv[1] == "prompt":
        print(prompt(sys.argv[2:]))
    elif len(sys.argv) in (4, 5) and sys.argv[1] == "deal":
        deal(Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) == 5 else 1)
    elif len(sys.argv) >= 3 and sys.argv[1] == "collect":
        try:
            print(f"{collect([Path(arg) for arg in sys.argv[2:]])} forms written to {FORMS}")
        except StaleForms as error:
            raise SystemExit(str(error)) from None
    elif len(sys.argv) >= 4 and sys.argv[1] == "assemble":
        forms = assemble(sys.argv[3:], yaml.safe_load(Path(sys.argv[2]).read_text()))
        print(yaml.safe_dump({"forms": forms}, sort_keys=False, allow_unicode=True, width=1000), end="")
    else:
        raise SystemExit("usage: python benchmarks/agent_forms.py prompt ID [ID ...] | assemble REPLY ID [ID ...]"
                         " | deal DIR N [SAMPLE] | collect DIR [DIR ...]")


if __name__ == "__main__":
    main()

"""The ruler's questions are sound: well-formed, numerous, split once into dev and test by a rule that
never moves a question, and every accepted answer exists in the benchmark bundle (which the slow test
builds, or reuses, under benchmarks/.work). The agent arm's forms are refused when SKILL.md changed."""

import hashlib
import shutil
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import agent_forms  # noqa: E402
import common  # noqa: E402
import questions  # noqa: E402
import ruler  # noqa: E402

from gemdoc import paths, project, store  # noqa: E402

KNOWN, ABSENT = questions.load()
FIXTURE = ROOT / "tests" / "fixtures" / "agent_forms"


def test_question_set_shape():
    shares = questions.shares(KNOWN, ABSENT)
    assert shares["answerable"] >= 250 and shares["absent"] >= 80
    assert shares["users_words"] >= 0.5 and shares["version"] >= 0.05
    assert len({q["gem"] for q in KNOWN}) >= 30
    assert {q["kind"] for q in KNOWN} == set(questions.KINDS)
    assert {q["style"] for q in KNOWN + ABSENT} <= set(ruler.STYLES)
    assert all(q["answers"] and q["q"].strip() for q in KNOWN)
    assert all(q["q"].strip() and "answers" not in q for q in ABSENT)
    ids = [q["id"] for q in KNOWN + ABSENT]
    assert len(set(ids)) == len(ids)
    assert len({q["q"] for q in KNOWN + ABSENT}) == len(ids)


def test_users_words_name_their_source():
    assert all(q.get("source") for q in KNOWN + ABSENT if q["style"] == "user")


def test_split_is_a_rule_of_the_id_about_sixty_forty_in_each_stratum():
    for group in (KNOWN, ABSENT):
        dev = sum(q["split"] == "dev" for q in group) / len(group)
        assert 0.53 <= dev <= 0.67
    digest = hashlib.sha256(f"{questions.SPLIT_SEED}:core-001".encode()).digest()
    assert questions.split_of("core-001") == ("dev" if int.from_bytes(digest, "big") < 0.6 * 2**256 else "test")
    assert [q["id"] for q in questions.load("dev")[0]] == [q["id"] for q in KNOWN if q["split"] == "dev"]


def test_adding_questions_moves_none(tmp_path, monkeypatch):
    for path in questions.DIR.glob("*.yaml"):
        shutil.copy(path, tmp_path / path.name)
    (tmp_path / "zz.yaml").write_text(
        "- {id: zz-001, gem: rake, kind: howto, style: terse, q: a new question, answers: [Rake::Task]}\n"
    )
    monkeypatch.setattr(questions, "DIR", tmp_path)
    grown, _ = questions.load()
    before = {q["id"]: q["split"] for q in KNOWN}
    assert {q["id"]: q["split"] for q in grown if q["id"] in before} == before and len(grown) == len(KNOWN) + 1


def test_howto_questions_do_not_name_their_answer():
    for q in KNOWN:
        if q["kind"] != "howto":
            continue
        for answer in q["answers"]:
            if not answer.startswith("doc:"):
                method = answer.replace("::", "#").split("#")[-1].lower()
                assert method not in q["q"].lower().split(), f"{q['id']} names {answer}"


def test_agent_forms_load_when_written_from_this_skill_and_ask_each_question_once_per_sample():
    first, second = agent_forms.load(FIXTURE / "forms.yaml", FIXTURE / "SKILL.md")
    assert first["core-001"]["tool"] == "search"
    assert agent_forms.text_of(first["a-001"]["args"]) == "policy scope\nlex: Pundit::policy_scope\nvec: narrow records"
    by_id = {q["id"]: q for q in KNOWN}
    asked = agent_forms.asked([by_id["a-001"], by_id["core-001"]], [first, second])
    assert [(q["id"], q["form"]["tool"]) for q in asked] == [("a-001@1", "query"), ("core-001@1", "search"),
                                                             ("a-001@2", "search")]  # core-001 has no second form
    assert all(q["answers"] == by_id[q["id"].split("@")[0]]["answers"] for q in asked)


def test_agent_forms_from_another_skill_are_refused(tmp_path):
    skill = tmp_path / "SKILL.md"
    skill.write_text((FIXTURE / "SKILL.md").read_text() + "\nA new piece of advice.\n")
    with pytest.raises(agent_forms.StaleForms, match="regenerate"):
        agent_forms.load(FIXTURE / "forms.yaml", skill)


def test_agent_forms_with_unknown_args_are_refused(tmp_path):
    text = (FIXTURE / "forms.yaml").read_text().replace("n: 5", "gemname: rake")
    (tmp_path / "forms.yaml").write_text(text)
    with pytest.raises(agent_forms.StaleForms, match="unknown args gemname"):
        agent_forms.load(tmp_path / "forms.yaml", FIXTURE / "SKILL.md")


def test_no_forms_file_means_no_forms(tmp_path):
    assert agent_forms.load(tmp_path / "absent.yaml", FIXTURE / "SKILL.md") == []


def test_the_prompt_holds_skill_gems_and_questions_never_answers():
    text = agent_forms.prompt(["a-001", "absent-core-001"])
    skill = (ROOT / "gemdoc" / "SKILL.md").read_text()
    assert skill.strip() in text and "rake 13.0.6" in text
    by_id = {q["id"]: q for q in KNOWN + ABSENT}
    assert " ".join(by_id["a-001"]["q"].split()) in text and by_id["absent-core-001"]["q"] in text
    assert not any(answer in text for answer in by_id["a-001"]["answers"])
    assert "forms:" in text and "tool:" in text
    assert "a-001" not in text and "absent" not in text.split("=== end of SKILL.md ===")[1]  # ids are opaque labels
    forms = {"q1": {"tool": "search", "args": {"query": "x"}}, "q2": {"tool": "query", "args": {"query": "y"}}}
    reply = {"forms": forms}
    assert agent_forms.assemble(["a-001", "absent-core-001"], reply)["absent-core-001"]["args"]["query"] == "y"


def test_collect_writes_every_dealt_reply_as_forms_and_names_the_missing_ones(tmp_path):
    agent_forms.deal(tmp_path / "other", 3, sample=2)
    agent_forms.deal(tmp_path, 3)
    assert (tmp_path / "ids-1.txt").read_text() != (tmp_path / "other" / "ids-1.txt").read_text()  # grouped anew
    for k in (1, 2, 3):
        labels = agent_forms.labels((tmp_path / f"ids-{k}.txt").read_text().split())
        reply = {"forms": {label: {"tool": "query", "args": {"query": f"{k} {label}", "n": 10}} for label in labels}}
        if k != 2:
            (tmp_path / f"reply-{k}.yaml").write_text(yaml.safe_dump(reply))
    (tmp_path / "reply-3.yaml").write_text("forms:\n  q1: {tool: grep, args: {query: x}}\n")
    target = tmp_path / "forms.yaml"
    with pytest.raises(agent_forms.StaleForms, match=r"2 of 3 replies .*reply-2.yaml.*reply-3.yaml"):
        agent_forms.collect([tmp_path], target, FIXTURE / "SKILL.md")
    assert not target.exists()
    for k in (2, 3):
        labels = agent_forms.labels((tmp_path / f"ids-{k}.txt").read_text().split())
        forms = {label: {"tool": "search", "args": {"query": qid}} for label, qid in labels.items()}
        (tmp_path / f"reply-{k}.yaml").write_text(yaml.safe_dump({"forms": forms}))
    with pytest.raises(agent_forms.StaleForms, match="twice"):
        agent_forms.collect([tmp_path, tmp_path / "." ], target, FIXTURE / "SKILL.md")
    (tmp_path / "other" / "ids-1.txt").write_text("a-001\n")
    (tmp_path / "other" / "reply-1.yaml").write_text("forms:\n  q1: {tool: search, args: {query: x}}\n")
    for k in (2, 3):
        (tmp_path / "other" / f"ids-{k}.txt").unlink()
    with pytest.raises(agent_forms.StaleForms, match="same questions"):
        agent_forms.collect([tmp_path, tmp_path / "other"], target, FIXTURE / "SKILL.md")
    assert agent_forms.collect([tmp_path], target, FIXTURE / "SKILL.md") == len(KNOWN + ABSENT)
    (forms,) = agent_forms.load(target, FIXTURE / "SKILL.md")
    assert set(forms) == {q["id"] for q in KNOWN + ABSENT}
    second = (tmp_path / "ids-2.txt").read_text().split()[0]
    assert forms[second] == {"tool": "search", "args": {"query": second}}  # labels mapped back to their ids


def test_regressions_compare_dev_and_test_and_refusals_count_upward():
    graded = {"overall": {"hit@1": 0.5, "mrr": 0.6, "refused": 0.1}, "silence": 0.9}
    result = {"arms": {"query": {"dev": graded, "test": graded}}}
    margin = {"hit@1": 0.02, "mrr": 0.02, "refused": 0.02, "silence": 0.05}
    same = {"hit@1": 0.5, "mrr": 0.6, "refused": 0.1, "silence": 0.9}
    assert ruler.regressions(result, {"margin": margin, "dev": {"query": same}, "test": {"query": same}}) == []
    stricter = same | {"refused": 0.05}
    failed = ruler.regressions(result, {"margin": margin, "dev": {"query": same}, "test": {"query": stricter}})
    assert len(failed) == 1 and failed[0].startswith("test query refused")


@pytest.mark.slow
def test_every_accepted_answer_exists_in_the_corpus(monkeypatch):
    monkeypatch.setenv("GEMDOC_HOME", str(common.WORK / "ruler-corpus"))
    project_dir = ruler.prepare(None, reuse=True)
    conn = store.connect(paths.store_path())
    versions = dict(project.scope(conn, project_dir.resolve()).entries.keys())
    missing = [
        (q["id"], answer)
        for q in KNOWN
        for answer in q["answers"]
        if not ruler.answer_exists(conn, q["gem"], versions.get(q["gem"], "?"), answer)
    ]
    assert missing == []

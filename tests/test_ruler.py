"""The ruler's questions are sound: well-formed, spread over enough gems, and every accepted
answer exists in the benchmark bundle (which this test builds, or reuses, under benchmarks/.work)."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import common  # noqa: E402
import ruler  # noqa: E402

from gemdoc import paths, project, store  # noqa: E402

KNOWN, ABSENT = ruler.load_questions("corpus")


def test_question_set_shape():
    assert len(KNOWN) >= 80 and len(ABSENT) >= 30
    assert len({q["gem"] for q in KNOWN}) >= 12
    assert {q["kind"] for q in KNOWN} == set(ruler.KINDS)
    assert all(q["answers"] and q["q"].strip() for q in KNOWN)
    assert len({q["q"] for q in KNOWN}) == len(KNOWN) and len(set(ABSENT)) == len(ABSENT)


def test_howto_questions_do_not_name_their_answer():
    for q in KNOWN:
        if q["kind"] != "howto":
            continue
        for answer in q["answers"]:
            if not answer.startswith("doc:"):
                method = answer.replace("::", "#").split("#")[-1].lower()
                assert method not in q["q"].lower().split(), f"{q['q']!r} names {answer}"


@pytest.mark.slow
def test_every_accepted_answer_exists_in_the_corpus(monkeypatch):
    monkeypatch.setenv("GEMDOC_HOME", str(common.WORK / "ruler-corpus"))
    project_dir = ruler.build("corpus")
    conn = store.connect(paths.store_path())
    versions = dict(project.scope(conn, project_dir.resolve()).entries.keys())
    missing = [
        (q["gem"], answer)
        for q in KNOWN
        for answer in q["answers"]
        if not ruler.answer_exists(conn, q["gem"], versions.get(q["gem"], "?"), answer)
    ]
    assert missing == []

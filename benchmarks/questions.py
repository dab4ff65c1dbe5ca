"""The ruler's questions, one loader for ruler.py, the other benchmarks and tests/test_ruler.py.

Every file in benchmarks/questions/ is a YAML list of questions with a stable ``id``. Files named
``absent-*.yaml`` hold questions the bundle does not answer (id, style, q, source); the others hold
answerable ones (id, gem, kind, style, q, answers, source).

The split into dev (60 %) and test (40 %) was made once and is a rule, not a list: a question is in
dev when the SHA-256 of ``SPLIT_SEED + ":" + id`` read as a fraction of 2**256 is below DEV_SHARE.
Each question's side depends on its id alone, so adding questions never moves existing ones, and
answerable and absent questions (different id prefixes, separate files) are split separately,
each about 60/40. Fit every bar, weight and rule on dev; keep a change only if test agrees.
"""

import hashlib
from pathlib import Path

import yaml

DIR = Path(__file__).resolve().parent / "questions"
SPLIT_SEED = "gemdoc-ruler-2026-12"
DEV_SHARE = 0.6
SPLITS = ("dev", "test")
KINDS = ("howto", "api", "identifier", "version")


def split_of(question_id: str) -> str:
    """``dev`` or ``test``, fixed for ever by the id."""
    digest = hashlib.sha256(f"{SPLIT_SEED}:{question_id}".encode()).digest()
    return "dev" if int.from_bytes(digest, "big") / 2**256 < DEV_SHARE else "test"


def _read(path: Path) -> list[dict]:
    items = yaml.safe_load(path.read_text()) or []
    for item in items:
        item["set"] = path.stem
        item["split"] = split_of(item["id"])
    return items


def load(split: str | None = None) -> tuple[list[dict], list[dict]]:
    """(answerable, absent) questions, in file then list order; only one split when given."""
    known: list[dict] = []
    absent: list[dict] = []
    for path in sorted(DIR.glob("*.yaml")):
        (absent if path.name.startswith("absent-") else known).extend(_read(path))
    if split is not None:
        known = [q for q in known if q["split"] == split]
        absent = [q for q in absent if q["split"] == split]
    return known, absent


def shares(known: list[dict], absent: list[dict]) -> dict:
    """The counts issue #14 asks of the ruler: how many, how many in users' words, how many about versions."""
    n = len(known) or 1
    return {
        "answerable": len(known),
        "absent": len(absent),
        "users_words": round(sum(q["style"] == "user" for q in known) / n, 3),
        "version": round(sum(q["kind"] == "version" for q in known) / n, 3),
        "by_split": {s: [sum(q["split"] == s for q in known), sum(q["split"] == s for q in absent)] for s in SPLITS},
    }

"""What each gem is for, and which gems a question's words describe.

A question in users' words names a gem by its role more often than by its name: "the authorization
library", "our HTTP client", "the pagination gem". Each store entry keeps a profile, written with its
chunks: the gem's name, its gemspec's summary and description (what the gem says it is for) and the
opening of its README. A question's terms are matched against the profiles of the bundle's gems
(FTS5 bm25, so a word most profiles say, "ruby", weighs little; like the chunks' rarity, taken over
every profile in the store), and each gem's chunks count 1 + ROLE_WEIGHT x its profile's score over
the best profile's. It is a prior over gems, not a filter: the chunks still have to match the question.

Measured by benchmarks/rank_rules.py (rule ``role_prior``): the weight was chosen on dev (0.5 and 1.0
tied on hit@1, 0.5 had the better MRR) and kept because test agreed.
"""

import re
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from gemdoc import terms as q
from gemdoc.chunk import Chunk
from gemdoc.store import PROFILES as TABLE
from gemdoc.store import has_table

ROLE_WEIGHT = 0.5  # 0.0: off
README_OPENING = 600  # characters of the first README chunk that go into a profile


def profile(name: str, about: str, chunks: Iterable[Chunk]) -> str:
    """A gem's profile: its name in words, what its gemspec says it is for, its README's opening."""
    from gemdoc import prose  # indexing only: its import would cost every `gemdoc search`

    readmes = [c for c in chunks if c.source_type == "readme"]  # every top-level prose file, in name order
    readme = next((c.body for c in readmes if prose.README.match(Path(c.file or "").name)), "")
    return "\n".join(part for part in (re.sub(r"[-_]", " ", name), about, readme[:README_OPENING]) if part)


def fit(conn: sqlite3.Connection, words: list[str], entries: dict[int, str]) -> dict[str, float]:
    """The factor each gem of the bundle (``entries``: entry id -> gem name) gets for a question of
    ``words``: 1 + ROLE_WEIGHT x its profile's bm25 over the best of the bundle; a gem whose profile
    holds none of the words is left out (factor 1)."""
    if not ROLE_WEIGHT or not words or not entries or not has_table(conn, TABLE):
        return {}
    ids = list(entries)
    rows = conn.execute(f"SELECT rowid, -bm25({TABLE}) FROM {TABLE} WHERE {TABLE} MATCH ? "
                        f"AND rowid IN ({','.join('?' * len(ids))})", [q.any_of(words), *ids])  # fmt: skip
    scores = {entries[entry]: score for entry, score in rows if score > 0}
    best = max(scores.values(), default=0.0)
    return {gem: 1.0 + ROLE_WEIGHT * score / best for gem, score in scores.items()} if best else {}

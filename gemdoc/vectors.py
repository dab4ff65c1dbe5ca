"""Chunk vectors: packed float32, keyed by the chunk's content digest, ranked by one matrix product.

Keyed by digest, a vector survives a re-index that leaves its chunk unchanged and is
shared by every entry holding the same chunk. The store's meta records the
identity of the model that made them (name, dimension, pooling, prefixes, weights);
vectors of another identity are never mixed in. numpy is imported only by Matrix.
"""

import sqlite3

from gemdoc.errors import GemdocError

IDENTITY_KEY = "embedding_model"
DIMENSION_KEY = "embedding_dimension"


class VectorMismatch(GemdocError):
    """The stored vectors were made by another model (or another configuration of one)."""


def has_table(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'vectors'").fetchone() is not None


def stored_identity(conn: sqlite3.Connection) -> str:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", [IDENTITY_KEY]).fetchone()
    return row[0] if row and row[0] else ""


def check_identity(conn: sqlite3.Connection, identity: str) -> None:
    stored = stored_identity(conn)
    if stored and stored != identity:
        raise VectorMismatch(
            f"the store's vectors were made by {stored}, but the configured model is {identity}: "
            "run `gemdoc embed --force` to re-embed with it"
        )


def chunk_text(title: str, signature: str, body: str) -> str:
    """What a chunk's vector is computed from."""
    head = f"{title}\n{signature}" if signature and signature not in title else title
    return f"{head}\n{body}".strip()


def pending(conn: sqlite3.Connection, gems: list[int]) -> list[tuple[str, str]]:
    """(digest, text) of the bundle's chunks (``gems``: store entry ids) that have no vector yet, one per digest."""
    vectors = has_table(conn)
    found: dict[str, str] = {}
    for entry in gems:
        sql = "SELECT c.digest, c.title, c.signature, c.body FROM chunks c"
        if vectors:
            sql += " LEFT JOIN vectors v ON v.digest = c.digest WHERE v.digest IS NULL AND"
        else:
            sql += " WHERE"
        sql += " c.entry = ?"
        for digest, title, signature, body in conn.execute(sql, [entry]):
            found.setdefault(digest, chunk_text(title, signature, body))
    return list(found.items())


def any_embedded(conn: sqlite3.Connection, gems: list[int]) -> bool:
    """Whether the bundle has vectors at all: the cheap question `query` asks on every call."""
    if not has_table(conn):
        return False
    sql = "SELECT 1 FROM chunks c JOIN vectors v ON v.digest = c.digest WHERE c.entry = ? LIMIT 1"
    return any(conn.execute(sql, [entry]).fetchone() for entry in gems)


def embedded(conn: sqlite3.Connection, gems: list[int]) -> int:
    """How many of the bundle's chunks have a vector."""
    if not has_table(conn):
        return 0
    sql = "SELECT count(*) FROM chunks c JOIN vectors v ON v.digest = c.digest WHERE c.entry = ?"
    return sum(conn.execute(sql, [entry]).fetchone()[0] for entry in gems)


class Matrix:
    """The bundle's vectors in one float32 matrix, rows aligned with chunk ids. ``complete``: every chunk
    of the bundle has its row (a gem the Bundler hook indexed since the last `gemdoc embed` has none)."""

    def __init__(self, conn: sqlite3.Connection, gems: list[int]):
        import numpy as np

        ids: list[int] = []
        blobs: list[bytes] = []
        marks = ",".join("?" * len(gems))
        chunks = conn.execute(f"SELECT coalesce(sum(chunks), 0) FROM gems WHERE id IN ({marks})", gems).fetchone()[0]
        if has_table(conn):
            for entry in gems:
                rows = conn.execute(
                    "SELECT c.id, v.vector FROM chunks c JOIN vectors v ON v.digest = c.digest WHERE c.entry = ?",
                    [entry],
                )
                for chunk_id, blob in rows:
                    ids.append(chunk_id)
                    blobs.append(blob)
        self.ids = np.asarray(ids, dtype=np.int64)
        self.complete = len(ids) == chunks
        dimension = len(blobs[0]) // 4 if blobs else 0
        self.matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dimension)

    def __len__(self) -> int:
        return len(self.ids)

    def rank(self, query, k: int) -> list[tuple[int, float]]:
        """The k nearest chunks by cosine (vectors are normalised: a dot product)."""
        import numpy as np

        if not len(self) or query.shape[0] != self.matrix.shape[1]:
            return []
        scores = self.matrix @ query
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(self.ids[i]), float(scores[i])) for i in top]


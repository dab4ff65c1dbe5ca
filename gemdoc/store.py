"""The global store: one SQLite database shared by every project, keyed by gem name+version.

Writers go through sqlite-utils, one transaction per gem, under a file lock.
Readers (search, status) use the standard library's sqlite3 directly: importing
sqlite-utils costs ~190 ms and pulls in numpy, which an agent's per-question
CLI call cannot afford.
"""

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from gemdoc import __version__
from gemdoc.chunk import Chunk
from gemdoc.errors import StoreError

SCHEMA_VERSION = 2
FTS_COLUMNS = ("title", "names", "signature", "body")
TOKENIZER = "porter"  # porter stemming over unicode61; search.Stemmer must use the same
CHUNK_COLUMNS = (
    "gem", "version", "source_type", "kind", "title", "names", "heading", "name",
    "signature", "body", "file", "line", "end_line", "digest",
)  # fmt: skip


@dataclass
class GemRecord:
    name: str
    version: str
    root: str
    layout: str
    source_digest: str
    state: str  # complete | failed | skipped
    ri_tier: str | None = None
    parser: str | None = None
    chunks: int = 0
    methods: int = 0
    located: int = 0
    seconds: float = 0.0
    error: str | None = None


def connect(path: Path) -> sqlite3.Connection:
    """A read connection to an existing store whose schema this gemdoc understands."""
    if not path.exists():
        raise StoreError(f"no index at {path}: run `gemdoc index` in your project first")
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    check_schema(conn, path)
    return conn


def read_meta(conn: sqlite3.Connection) -> dict[str, str]:
    try:
        return {row[0]: row[1] for row in conn.execute("SELECT key, value FROM meta")}
    except sqlite3.DatabaseError:
        return {}


def check_schema(conn: sqlite3.Connection, path: Path) -> None:
    found = read_meta(conn).get("schema_version")
    if found != str(SCHEMA_VERSION):
        raise StoreError(
            f"the store at {path} has schema {found or 'unknown'}, this gemdoc needs {SCHEMA_VERSION}: "
            "run `gemdoc reindex` to rebuild it"
        )


def unreadable_reason(path: Path) -> str | None:
    """Why the store at ``path`` cannot be used as it is, or None when it can (or does not exist)."""
    if not path.exists():
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            check_schema(conn, path)
        finally:
            conn.close()
    except StoreError as exc:
        return str(exc).split(":")[0].replace(f"the store at {path} has ", "")
    except sqlite3.DatabaseError as exc:
        return f"unreadable: {exc}"
    return None


def peek(path: Path, sql: str, args: list) -> list[tuple] | None:
    """Rows of a read-only query, or None when there is no store or it cannot answer (another
    schema, a missing column, corruption): for the indexer's "is there anything to do?" checks."""
    if not path.exists():
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return conn.execute(sql, args).fetchall()
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return None


def discard(path: Path) -> None:
    """Remove a store and its WAL files; only ever called under the writer lock."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


class Writer:
    """The only code that changes the store. Hold the writer lock while using it."""

    def __init__(self, path: Path):
        import sqlite_utils  # deferred: writers only (see the module docstring)

        path.parent.mkdir(parents=True, exist_ok=True)
        fresh = not path.exists()
        self.path = path
        self.db = sqlite_utils.Database(path)
        self.db.execute("PRAGMA busy_timeout = 10000")
        if fresh:
            self._create()
        else:
            check_schema(self.db.conn, path)
        self._stamp()

    def _create(self) -> None:
        self.db.enable_wal()
        with self.db.atomic():
            self.db["meta"].create({"key": str, "value": str}, pk="key")
            self.db["gems"].create(
                {
                    "name": str, "version": str, "root": str, "layout": str, "source_digest": str,
                    "state": str, "ri_tier": str, "parser": str, "chunks": int, "methods": int,
                    "located": int, "seconds": float, "error": str, "indexed_at": float,
                    "first_id": int, "last_id": int,
                },
                pk=("name", "version"),
            )  # fmt: skip
            columns = {c: str for c in CHUNK_COLUMNS} | {"id": int, "line": int, "end_line": int}
            self.db["chunks"].create(columns, pk="id")
            self.db["chunks"].create_index(["gem", "version"])
            self.db["chunks"].create_index(["name"])
            self.db["chunks"].enable_fts(FTS_COLUMNS, tokenize=TOKENIZER, create_triggers=True)
            self.db.execute("CREATE VIRTUAL TABLE chunks_vocab USING fts5vocab(chunks_fts, row)")
            self.db["projects"].create(
                {"path": str, "lockfile_sha256": str, "scope": str, "gems": str, "complete": int, "indexed_at": float},
                pk="path",
            )
            self.db["meta"].insert_all(
                [
                    {"key": "schema_version", "value": str(SCHEMA_VERSION)},
                    {"key": "embedding_model", "value": ""},
                    {"key": "embedding_dimension", "value": ""},
                ]
            )

    def _stamp(self) -> None:
        with self.db.atomic():
            self.db["meta"].upsert({"key": "gemdoc_version", "value": __version__}, pk="key")

    def is_current(self, name: str, version: str, digest: str) -> bool:
        row = self.db.execute(
            "SELECT state, source_digest FROM gems WHERE name = ? AND version = ?", [name, version]
        ).fetchone()
        return bool(row) and row[0] == "complete" and row[1] == digest

    def replace_gem(self, record: GemRecord, chunks: list[Chunk]) -> str:
        """Swap in a gem's chunks in one transaction; returns ``indexed`` or ``updated``."""
        rows = [_chunk_row(record, c) for c in chunks]
        with self.db.atomic():
            prior = self.db.execute(
                "SELECT state FROM gems WHERE name = ? AND version = ?", [record.name, record.version]
            ).fetchone()
            self.db.execute("DELETE FROM chunks WHERE gem = ? AND version = ?", [record.name, record.version])
            if rows:
                self.db["chunks"].insert_all(rows, batch_size=500)
            span = self._span(record)
            self.db["gems"].upsert(record.__dict__ | span | {"indexed_at": time.time()}, pk=("name", "version"))
        return "updated" if prior and prior[0] == "complete" else "indexed"

    def _span(self, record: GemRecord) -> dict:
        """The rowid range and count of a gem's chunks: contiguous, because one locked writer inserts
        them in one transaction. Search relies on it, so it is checked rather than assumed."""
        first, last, count = self.db.execute(
            "SELECT min(id), max(id), count(*) FROM chunks WHERE gem = ? AND version = ?",
            [record.name, record.version],
        ).fetchone()
        if count and last - first + 1 != count:
            raise StoreError(f"chunks of {record.name} {record.version} are not contiguous: run `gemdoc reindex`")
        return {"first_id": first, "last_id": last, "chunks": count}

    def mark(self, record: GemRecord) -> None:
        """Record a failed or skipped gem without touching chunks a previous run stored."""
        with self.db.atomic():
            row = record.__dict__ | {"indexed_at": time.time()}
            existing = self.db.execute(
                "SELECT state FROM gems WHERE name = ? AND version = ?", [record.name, record.version]
            ).fetchone()
            if existing and existing[0] == "complete":
                return
            self.db["gems"].upsert(row, pk=("name", "version"))

    def previous_failure(self, name: str, version: str, digest: str) -> str | None:
        """Why this exact source failed before, if it did: a deterministic crash is not re-run."""
        row = self.db.execute(
            "SELECT state, source_digest, error FROM gems WHERE name = ? AND version = ?", [name, version]
        ).fetchone()
        return row[2] if row and row[0] == "failed" and row[1] == digest else None

    def record_project(
        self, path: str, lockfile_sha256: str, scope: str, gems: list[tuple[str, str]], complete: bool,
        extractor: str = "",
    ) -> None:
        """What a project may search. ``complete`` (every gem settled) and ``extractor`` (the
        extraction version its gems were read with) are what let the next `gemdoc index` with
        the same lockfile be a no-op."""
        with self.db.atomic():
            self.db["projects"].upsert(
                {
                    "path": path, "lockfile_sha256": lockfile_sha256, "scope": scope,
                    "gems": json.dumps(gems), "complete": int(complete), "indexed_at": time.time(),
                    "extractor": extractor,
                },
                pk="path", alter=True,
            )  # fmt: skip

    def reset_vectors(self, identity: str, dimension: int, keep: bool = False) -> None:
        """Record the model that makes this store's vectors; unless ``keep``, drop every vector."""
        with self.db.atomic():
            self.db.execute("CREATE TABLE IF NOT EXISTS vectors (digest TEXT PRIMARY KEY, vector BLOB NOT NULL)")
            if not keep:
                self.db.execute("DELETE FROM vectors")
            self.db["meta"].upsert({"key": "embedding_model", "value": identity}, pk="key")
            self.db["meta"].upsert({"key": "embedding_dimension", "value": str(dimension)}, pk="key")

    def write_vectors(self, rows: list[tuple[str, bytes]]) -> None:
        """One batch of (content digest, packed float32 vector), in one transaction."""
        with self.db.atomic():
            self.db.conn.executemany("INSERT OR REPLACE INTO vectors (digest, vector) VALUES (?, ?)", rows)

    def close(self) -> None:
        self.db.close()


def _chunk_row(record: GemRecord, chunk: Chunk) -> dict:
    return {
        "gem": record.name, "version": record.version, "source_type": chunk.source_type, "kind": chunk.kind,
        "title": chunk.title, "names": chunk.names(record.name), "heading": chunk.heading, "name": chunk.name, "signature": chunk.signature,
        "body": chunk.body, "file": chunk.file, "line": chunk.line, "end_line": chunk.end_line,
        "digest": chunk.digest,
    }  # fmt: skip

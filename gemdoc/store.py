"""The global store: one SQLite database shared by every project.

A gem *entry* is one reading of one copy of a gem, keyed by its identity (see
``identity``): name, version, platform, where its files came from and their content
digest. Projects never overwrite each other's entries; each project records the entry
ids it reads, and every read is filtered by them.

Writers go through sqlite-utils, one transaction per gem, under a file lock.
Readers (search, status) use the standard library's sqlite3 directly: importing
sqlite-utils costs ~190 ms and pulls in numpy, which an agent's per-question
CLI call cannot afford.
"""

import json
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from gemdoc import __version__, damage
from gemdoc.chunk import Chunk, passages
from gemdoc.errors import StoreError

SCHEMA_VERSION = 3
REGISTRY = "rubygems"  # the origin of a gem installed from a gem source outside the project
FTS_COLUMNS = ("title", "names", "signature", "body")
TOKENIZER = "porter"  # porter stemming over unicode61; search.Stemmer must use the same
PROFILES = "profiles"  # FTS5 over each entry's profile (roles.profile), rowid = the entry's id
UNDOCUMENTED = "undocumented"  # methods an entry's source defines and no chunk documents (ri.to_chunks)
PASSAGES = "passages"  # rowid runs (first, last) of chunks cut from one passage (chunk.passages)
VISIBILITY = "visibility"  # the chunks of protected or private API entries (chunk.visibility), by rowid
CHUNK_COLUMNS = (
    "entry", "gem", "version", "source_type", "kind", "title", "names", "heading", "name",
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
    platform: str = "ruby"
    origin: str = REGISTRY  # rubygems | vendored | path | git
    ri_tier: str | None = None
    parser: str | None = None
    chunks: int = 0
    methods: int = 0
    located: int = 0
    seconds: float = 0.0
    error: str | None = None

    @property
    def identity(self) -> str:
        """What makes two readings the same entry. A registry gem is shared by every project
        whose copy has the same content; a project's own copy (vendored, path:, git:) is also
        keyed by its directory, so it is never shared under another copy's identity."""
        home = "" if self.origin == REGISTRY else f" {self.root}"
        return f"{self.origin} {self.name} {self.version} {self.platform} {self.source_digest}{home}"


def connect(path: Path) -> sqlite3.Connection:
    """A read connection to an existing store whose schema this gemdoc understands, inside one read
    transaction: every read of a reply (the project's entries, their rowid ranges and passages, the
    chunks) sees one state of the store, though a writer commits meanwhile (WAL). Close it to end
    the snapshot."""
    if not path.exists():
        raise StoreError(f"no index at {path}: run `gemdoc index` in your project first")
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    conn.execute("BEGIN")
    check_schema(conn, path)
    return conn


def read_meta(conn: sqlite3.Connection) -> dict[str, str]:
    try:
        return {row[0]: row[1] for row in conn.execute("SELECT key, value FROM meta")}
    except sqlite3.DatabaseError:
        return {}


def has_table(conn: sqlite3.Connection, name: str) -> bool:
    """Whether the store has table ``name``: a store written by an older gemdoc may lack a later one
    until its projects re-index (indexer.EXTRACTOR_VERSION)."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", [name]).fetchone() is not None


def visibility_of(conn: sqlite3.Connection, ids: list[int]) -> dict[int, str]:
    """The chunks among ``ids`` that document a protected or private API entry, with which. A store
    written before the table existed says nothing until its projects re-index. A row counts only for the
    entry that wrote it: chunk ids are reused, and a gemdoc older than the table deletes chunks, not rows."""
    if not ids or not has_table(conn, VISIBILITY):
        return {}
    sql = (f"SELECT v.id, v.visibility FROM {VISIBILITY} v JOIN chunks c ON c.id = v.id AND c.entry = v.entry "
           f"WHERE v.id IN ({','.join('?' * len(ids))})")  # fmt: skip
    return {i: v for i, v in conn.execute(sql, ids)}


def check_schema(conn: sqlite3.Connection, path: Path) -> None:
    """Raise StoreError naming what is wrong: a damaged or unreadable file (see damage.py), or
    another schema (an empty file or one without gemdoc's tables is "unknown")."""
    try:
        found = dict(conn.execute("SELECT key, value FROM meta").fetchall()).get("schema_version")
    except sqlite3.DatabaseError as exc:
        found = None
        problem = damage.explain(path, exc)
        if problem:
            raise problem from exc
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
        self.db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {PROFILES} USING fts5(text, tokenize='{TOKENIZER}')")
        self.db.execute(f"CREATE TABLE IF NOT EXISTS {UNDOCUMENTED} (entry INTEGER, owner TEXT, name TEXT, "
                        "singleton INTEGER, file TEXT, line INTEGER)")  # fmt: skip
        self.db.execute(f"CREATE INDEX IF NOT EXISTS {UNDOCUMENTED}_name ON {UNDOCUMENTED} (name)")
        self.db.execute(f"CREATE TABLE IF NOT EXISTS {PASSAGES} (entry INTEGER, first INTEGER, last INTEGER)")
        self.db.execute(f"CREATE INDEX IF NOT EXISTS {PASSAGES}_entry ON {PASSAGES} (entry)")
        self.db.execute(f"CREATE TABLE IF NOT EXISTS {VISIBILITY} (id INTEGER PRIMARY KEY, entry INTEGER, "
                        "visibility TEXT)")  # fmt: skip
        self.db.execute(f"CREATE INDEX IF NOT EXISTS {VISIBILITY}_entry ON {VISIBILITY} (entry)")

    def _create(self) -> None:
        self.db.enable_wal()
        with self.db.atomic():
            self.db["meta"].create({"key": str, "value": str}, pk="key")
            # AUTOINCREMENT: an entry id is never reused, so a project's recorded id names one reading forever
            self.db.execute(
                "CREATE TABLE gems (id INTEGER PRIMARY KEY AUTOINCREMENT, identity TEXT NOT NULL UNIQUE, "
                "name TEXT, version TEXT, platform TEXT, origin TEXT, root TEXT, layout TEXT, source_digest TEXT, "
                "state TEXT, ri_tier TEXT, parser TEXT, chunks INTEGER, methods INTEGER, located INTEGER, "
                "seconds FLOAT, error TEXT, indexed_at FLOAT, first_id INTEGER, last_id INTEGER)"
            )
            columns = {c: str for c in CHUNK_COLUMNS} | {"id": int, "entry": int, "line": int, "end_line": int}
            self.db["chunks"].create(columns, pk="id")
            self.db["chunks"].create_index(["entry"])
            self.db["chunks"].create_index(["name"])
            self.db["chunks"].enable_fts(FTS_COLUMNS, tokenize=TOKENIZER, create_triggers=True)
            self.db.execute("CREATE VIRTUAL TABLE chunks_vocab USING fts5vocab(chunks_fts, row)")
            self.db["projects"].create(
                {"path": str, "lockfile_sha256": str, "scope": str, "wanted": str, "entries": str, "complete": int,
                 "extractor": str, "indexed_at": float},
                pk="path",
            )  # fmt: skip
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

    def lookup(self, record: GemRecord) -> tuple[int, str, str | None] | None:
        """(id, state, error) of the entry with this record's identity, if the store has it."""
        return self.db.execute("SELECT id, state, error FROM gems WHERE identity = ?", [record.identity]).fetchone()

    def replace_gem(self, record: GemRecord, chunks: list[Chunk], profile: str = "",
                    undocumented: Iterable[dict] = ()) -> tuple[str, int]:
        """Store a gem's chunks, profile (what it is for, roles.profile) and undocumented methods under
        its identity in one transaction; returns (``indexed`` or ``updated``, entry id). ``updated``:
        this gem version from the same place was read before."""
        with self.db.atomic():
            prior = self.db.execute(
                "SELECT 1 FROM gems WHERE name = ? AND version = ? AND platform = ? AND origin = ? "
                "AND (origin = ? OR root = ?) AND state = 'complete'",
                [record.name, record.version, record.platform, record.origin, REGISTRY, record.root],
            ).fetchone()
            entry = self._upsert(record)
            self.db.execute("DELETE FROM chunks WHERE entry = ?", [entry])
            rows = [_chunk_row(entry, record, c) for c in chunks]
            if rows:
                self.db["chunks"].insert_all(rows, batch_size=500)
            self.db.execute(f"DELETE FROM {PROFILES} WHERE rowid = ?", [entry])
            if profile:
                self.db.execute(f"INSERT INTO {PROFILES} (rowid, text) VALUES (?, ?)", [entry, profile])
            self.db.execute(f"DELETE FROM {UNDOCUMENTED} WHERE entry = ?", [entry])
            self.db.conn.executemany(
                f"INSERT INTO {UNDOCUMENTED} (entry, owner, name, singleton, file, line) VALUES (?, ?, ?, ?, ?, ?)",
                [(entry, d["owner"], d["name"], int(bool(d["singleton"])), d["file"], d["line"]) for d in undocumented],
            )
            span = self._span(entry, record)
            self.db["gems"].update(entry, span)
            self.db.execute(f"DELETE FROM {PASSAGES} WHERE entry = ?", [entry])
            self.db.conn.executemany(
                f"INSERT INTO {PASSAGES} (entry, first, last) VALUES (?, ?, ?)",
                [(entry, span["first_id"] + a, span["first_id"] + b) for a, b in passages(chunks)],
            )
            self.db.execute(f"DELETE FROM {VISIBILITY} WHERE entry = ?", [entry])
            self.db.conn.executemany(  # OR REPLACE: a row an older gemdoc's gc left under a reused chunk id
                f"INSERT OR REPLACE INTO {VISIBILITY} (id, entry, visibility) VALUES (?, ?, ?)",
                [(span["first_id"] + i, entry, c.visibility) for i, c in enumerate(chunks) if c.visibility],
            )
        return ("updated" if prior else "indexed"), entry

    def _upsert(self, record: GemRecord) -> int:
        """The id of the entry with this identity, its row rewritten from ``record``."""
        row = record.__dict__ | {"identity": record.identity, "indexed_at": time.time()}
        found = self.db.execute("SELECT id FROM gems WHERE identity = ?", [record.identity]).fetchone()
        if found:
            self.db["gems"].update(found[0], row)
            return found[0]
        return self.db["gems"].insert(row).last_pk

    def _span(self, entry: int, record: GemRecord) -> dict:
        """The rowid range and count of an entry's chunks: contiguous, because one locked writer inserts
        them in one transaction. Search relies on it, so it is checked rather than assumed."""
        first, last, count = self.db.execute(
            "SELECT min(id), max(id), count(*) FROM chunks WHERE entry = ?", [entry]
        ).fetchone()
        if count and last - first + 1 != count:
            raise StoreError(f"chunks of {record.name} {record.version} are not contiguous: run `gemdoc reindex`")
        return {"first_id": first, "last_id": last, "chunks": count}

    def mark(self, record: GemRecord) -> int:
        """Record a failed or skipped gem without touching chunks a previous run stored; returns its entry id."""
        with self.db.atomic():
            existing = self.lookup(record)
            if existing and existing[1] == "complete":
                return existing[0]
            return self._upsert(record)

    def record_project(
        self, path: str, lockfile_sha256: str, scope: str, wanted: list[tuple[str, str]], entries: list[int],
        complete: bool, extractor: str = "",
    ) -> None:
        """What a project may read: the entries its gems resolved to (``wanted``: every gem version
        in its scope). ``complete`` (every gem settled) and ``extractor`` (the extraction version its
        gems were read with) are what let the next `gemdoc index` with the same lockfile be a no-op."""
        with self.db.atomic():
            self.db["projects"].upsert(
                {
                    "path": path, "lockfile_sha256": lockfile_sha256, "scope": scope, "wanted": json.dumps(wanted),
                    "entries": json.dumps(sorted(set(entries))), "complete": int(complete),
                    "indexed_at": time.time(), "extractor": extractor,
                },
                pk="path",
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


def _chunk_row(entry: int, record: GemRecord, chunk: Chunk) -> dict:
    return {
        "entry": entry, "gem": record.name, "version": record.version, "source_type": chunk.source_type, "kind": chunk.kind,
        "title": chunk.title, "names": chunk.names(record.name), "heading": chunk.heading, "name": chunk.name, "signature": chunk.signature,
        "body": chunk.body, "file": chunk.file, "line": chunk.line, "end_line": chunk.end_line,
        "digest": chunk.digest,
    }  # fmt: skip

"""`gemdoc gc`: remove the store entries and ri cache entries that no known project uses.

A project is known while its directory holds a lockfile; one whose directory or lockfile
is gone no longer counts, and its record goes too. What the remaining projects recorded
(their entry ids, even of a lockfile changed since) is kept, with the ri cache entries and
the vectors those entries' chunks use. Everything else goes, under the writer lock.
"""

import json
import os
import shutil
import sqlite3
import stat
from dataclasses import dataclass, field
from pathlib import Path

from gemdoc import lockfile, paths, store
from gemdoc.errors import GemdocError


@dataclass
class Collected:
    dry_run: bool
    projects: list[str] = field(default_factory=list)  # project records dropped
    entries: list[str] = field(default_factory=list)  # "name version (origin)" of entries dropped
    cache: list[str] = field(default_factory=list)  # ri cache entries dropped
    store_bytes: int = 0  # freed (or, on a dry run, that would be freed) in the store
    cache_bytes: int = 0


def disk_bytes(path: Path) -> int:
    """Bytes a file or a directory tree takes (0 when absent); symlinks are not followed, and what
    cannot be read (another user's directory, a file a concurrent `gc` removed) counts 0. By
    os.scandir, whose entries know their type: `status` walks the whole ri cache on every call."""
    try:
        top = path.lstat()
    except OSError:
        return 0
    if not stat.S_ISDIR(top.st_mode):
        return top.st_size
    total, pending = 0, [str(path)]
    while pending:
        try:
            with os.scandir(pending.pop()) as found:
                entries = list(found)
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                pending.append(entry.path)
            else:
                total += _size(entry)
    return total


def _size(entry: os.DirEntry) -> int:
    try:
        return entry.stat(follow_symlinks=False).st_size
    except OSError:
        return 0


def store_bytes() -> int:
    """The store with its write-ahead log."""
    base = paths.store_path()
    return sum(disk_bytes(Path(f"{base}{suffix}")) for suffix in ("", "-wal", "-shm"))


def collect(dry_run: bool = False) -> Collected:
    from gemdoc.indexer import writer_lock  # the indexer owns the lock every writer takes

    report = Collected(dry_run)
    with writer_lock():
        kept_cache: set[str] = set()
        if paths.store_path().exists():
            kept_cache = _collect_store(report)
        _collect_cache(report, kept_cache)
    return report


def _known(project: str) -> bool:
    try:
        lockfile.find(Path(project))
    except GemdocError:
        return False
    return True


def _collect_store(report: Collected) -> set[str]:
    """Drop what no known project uses; returns the names of the ri cache entries still used."""
    before = store_bytes()
    writer = store.Writer(paths.store_path())
    conn = writer.db.conn
    try:
        conn.isolation_level = None  # explicit transaction: a dry run rolls it back
        conn.execute("BEGIN IMMEDIATE")
        kept = _drop(conn, report)
        pages = conn.execute("PRAGMA freelist_count").fetchone()[0] * conn.execute("PRAGMA page_size").fetchone()[0]
        conn.execute("ROLLBACK" if report.dry_run else "COMMIT")
        if report.dry_run or not report.entries:
            report.store_bytes = pages if report.entries else 0
        else:
            conn.execute("VACUUM")  # deleted pages only go back to the file system this way
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            report.store_bytes = max(0, before - store_bytes())
    finally:
        writer.close()
    return kept


def _drop(conn: sqlite3.Connection, report: Collected) -> set[str]:
    projects = conn.execute("SELECT path, entries FROM projects").fetchall()
    used: set[int] = set()
    for path, entries in projects:
        if _known(path):
            used.update(json.loads(entries))
        else:
            report.projects.append(path)
            conn.execute("DELETE FROM projects WHERE path = ?", [path])
            conn.execute("DELETE FROM meta WHERE key = ?", ["absent:" + path])  # indexer.ABSENT_KEY
    rows = conn.execute("SELECT id, name, version, origin, source_digest FROM gems").fetchall()
    unused = [r for r in rows if r[0] not in used]
    for entry, name, version, origin, _ in unused:
        report.entries.append(f"{name} {version} ({origin})")
        conn.execute("DELETE FROM chunks WHERE entry = ?", [entry])
        conn.execute("DELETE FROM gems WHERE id = ?", [entry])
    conn.execute(f"DELETE FROM {store.PROFILES} WHERE rowid NOT IN (SELECT id FROM gems)")  # an older gc's too
    conn.execute(f"DELETE FROM {store.UNDOCUMENTED} WHERE entry NOT IN (SELECT id FROM gems)")
    conn.execute(f"DELETE FROM {store.PASSAGES} WHERE entry NOT IN (SELECT id FROM gems)")
    conn.execute(f"DELETE FROM {store.VISIBILITY} WHERE entry NOT IN (SELECT id FROM gems)")
    if unused:
        conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('optimize')")  # rewrites the index without them
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'vectors'").fetchone():
            conn.execute("DELETE FROM vectors WHERE digest NOT IN (SELECT digest FROM chunks)")
    return {f"{name}-{version}-{digest[:12]}" for entry, name, version, _, digest in rows if entry in used}


def _collect_cache(report: Collected, kept: set[str]) -> None:
    cache = paths.ri_cache_dir()
    if not cache.is_dir():
        return
    for entry in sorted(cache.iterdir()):
        if entry.name in kept or entry.name == ".tmp":
            continue
        report.cache.append(entry.name)
        report.cache_bytes += disk_bytes(entry)
        if not report.dry_run:
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()


def human(size: int) -> str:
    """1536 -> '1.5 KB'."""
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"

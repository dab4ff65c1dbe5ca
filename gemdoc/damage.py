"""A store that cannot be used as it is: what is wrong with it, in one line with the remedy, and
its repair (`gemdoc reindex` moves a damaged store aside, keeping it, and rebuilds).

Diagnosis runs only after SQLite has failed, or under the writer lock in `reindex`: reading
the file's header while another process checkpoints its WAL could see a size not yet written.
"""

import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from gemdoc import paths
from gemdoc.errors import StoreError

HEADER = b"SQLite format 3\x00"
DAMAGED = ("malformed", "not a database", "corrupt", "disk i/o error")  # SQLite's words for a broken file
REMEDY = "run `gemdoc reindex`, which moves it aside (kept) and rebuilds this project's index"


@dataclass(frozen=True)
class Damage:
    kind: str  # truncated | malformed
    detail: str


def access(path: Path) -> StoreError | None:
    """Why no writer could work on the store at ``path`` (its directory, the store or the writer
    lock not writable), or None."""
    folder, lock = path.parent, paths.lock_path()
    if folder.exists() and not os.access(folder, os.W_OK):
        return StoreError(
            f"the store directory {folder} is read-only: make it writable (chmod u+w {folder}) "
            "or set GEMDOC_HOME to a writable directory"
        )
    if path.exists() and not os.access(path, os.W_OK):
        return StoreError(f"the store {path} is read-only: make it writable (chmod u+w {path})")
    if lock.exists() and not os.access(lock, os.W_OK):
        return StoreError(
            f"the writer lock {lock} is not writable: delete it (no gemdoc may be running) or chmod u+w it"
        )
    return None


def check_writable(path: Path) -> None:
    """Raise the one-line reason a writer cannot take the lock or change the store, if there is one."""
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(
            f"cannot create the store directory {folder} ({exc.strerror}): set GEMDOC_HOME to a writable directory"
        ) from exc
    problem = access(path)
    if problem:
        raise problem


def from_header(path: Path) -> Damage | None:
    """Damage visible without SQLite: not a SQLite file, or shorter than its header says."""
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            header = handle.read(100)
    except OSError:
        return None
    if size == 0:
        return None  # SQLite treats an empty file as an empty database
    if len(header) < 100 or not header.startswith(HEADER):
        return Damage("malformed", f"not a SQLite database ({size} bytes)")
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    header_valid = header[24:28] == header[92:96]  # the page count is trusted only then (SQLite's rule)
    expected = page_size * pages
    if header_valid and pages and size < expected:
        return Damage("truncated", f"{size} of its {expected} bytes")
    return None


def from_error(path: Path, exc: sqlite3.DatabaseError) -> Damage | None:
    """What an SQLite error on the store says about the file, or None when it is no damage."""
    found = from_header(path)
    if found:
        return found
    if any(word in str(exc).lower() for word in DAMAGED):
        return Damage("malformed", " ".join(str(exc).split())[:200])
    return None


def explain(path: Path, exc: sqlite3.DatabaseError) -> StoreError | None:
    """The one-line error for an SQLite failure on the store, or None when the store looks fine
    (the failure is then a bug, and its traceback is the useful report)."""
    problem = access(path)
    if problem:
        return problem
    found = from_error(path, exc)
    if found is None:
        return None
    return StoreError(f"the store at {path} is {found.kind} ({found.detail}): {REMEDY}")


def integrity(path: Path) -> Damage | None:
    """The header check, then SQLite's ``PRAGMA quick_check``."""
    if not path.exists():
        return None
    found = from_header(path)
    if found:
        return found
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            verdict = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        return from_error(path, exc)
    return None if verdict == "ok" else Damage("malformed", "quick_check: " + " ".join(verdict.split())[:200])


def repair(path: Path, dry_run: bool = False) -> str | None:
    """Move a damaged store (and its WAL files) aside under a new name; the line saying so, or None
    when the store is sound. Call under the writer lock."""
    found = integrity(path)
    if found is None:
        return None
    aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%dT%H%M%S')}")
    if not dry_run:
        for suffix in ("-wal", "-shm", ""):
            source = Path(f"{path}{suffix}")
            if source.exists():
                os.replace(source, f"{aside}{suffix}")
    done = "would move it aside to {} and rebuild" if dry_run else "moved it aside to {} and rebuilt"
    return (
        f"the store is {found.kind} ({found.detail}): {done.format(aside)} this project's index; "
        "run `gemdoc index` in your other projects"
    )

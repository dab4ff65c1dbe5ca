"""A Ruby project as gemdoc sees it: its directory, its lockfile, the gems in its scope."""

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from gemdoc import lockfile
from gemdoc.errors import GemdocError


@dataclass
class Scope:
    gems: list[int]  # the complete store entries this project reads: one per gem, its own copy
    wanted: list[tuple[str, str]]  # every gem version in the project's scope
    stale: bool  # the lockfile changed since the last `gemdoc index`
    missing: list[str]  # locked gems in scope with no entry of this project's in the store
    entries: dict[tuple[str, str], tuple[int, str]] = field(default_factory=dict)  # (name, version) -> (id, state)


def root(start: Path) -> Path:
    """The nearest directory at or above ``start`` holding a Gemfile.lock."""
    start = start.resolve()
    for candidate in (start, *start.parents):
        if (candidate / "Gemfile.lock").is_file() or (candidate / "gems.locked").is_file():
            return candidate
    raise GemdocError(f"no Gemfile.lock in {start} or above: run gemdoc inside a Ruby project (or pass --project DIR)")


def scope(conn: sqlite3.Connection, project: Path) -> Scope:
    """The exact gem versions a search in this project may answer from, as the store entries
    this project's last `gemdoc index` resolved them to. Entries another project wrote for the
    same versions (another copy, another source) are never in it."""
    lock = lockfile.load(lockfile.find(project))
    row = conn.execute(
        "SELECT lockfile_sha256, scope, wanted, entries FROM projects WHERE path = ?", [str(project)]
    ).fetchone()
    if row is None:
        raise GemdocError(f"{project} is not indexed yet: run `gemdoc index` there first")
    if row[0] == lock.sha256:
        wanted = [tuple(g) for g in json.loads(row[2])]
    else:
        wanted = [(g.name, g.version) for g in lock.select(include_transitive=row[1] == "all")]
    ids = json.loads(row[3])
    marks = ",".join("?" * len(ids))
    rows = conn.execute(f"SELECT id, name, version, state FROM gems WHERE id IN ({marks})", ids).fetchall()
    in_scope = set(wanted)
    entries = {(n, v): (i, s) for i, n, v, s in rows if (n, v) in in_scope}
    return Scope(
        gems=[i for i, s in entries.values() if s == "complete"],
        wanted=wanted,
        stale=row[0] != lock.sha256,
        missing=[f"{n} {v}" for n, v in wanted if (n, v) not in entries],
        entries=entries,
    )

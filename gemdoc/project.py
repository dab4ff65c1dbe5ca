"""A Ruby project as gemdoc sees it: its directory, its lockfile, the gems in its scope."""

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from gemdoc import lockfile
from gemdoc.errors import GemdocError


@dataclass
class Scope:
    gems: list[tuple[str, str]]  # (name, version) pairs present in the store
    wanted: list[tuple[str, str]]  # every gem version in the project's scope
    stale: bool  # the lockfile changed since the last `gemdoc index`
    missing: list[str]  # locked gems in scope that the store knows nothing of


def root(start: Path) -> Path:
    """The nearest directory at or above ``start`` holding a Gemfile.lock."""
    start = start.resolve()
    for candidate in (start, *start.parents):
        if (candidate / "Gemfile.lock").is_file() or (candidate / "gems.locked").is_file():
            return candidate
    raise GemdocError(f"no Gemfile.lock in {start} or above: run gemdoc inside a Ruby project (or pass --project DIR)")


def scope(conn: sqlite3.Connection, project: Path) -> Scope:
    """The exact gem versions a search in this project may answer from."""
    lock = lockfile.load(lockfile.find(project))
    row = conn.execute("SELECT lockfile_sha256, scope, gems FROM projects WHERE path = ?", [str(project)]).fetchone()
    if row is None:
        raise GemdocError(f"{project} is not indexed yet: run `gemdoc index` there first")
    if row[0] == lock.sha256:
        wanted = [tuple(g) for g in json.loads(row[2])]
    else:
        wanted = [(g.name, g.version) for g in lock.select(include_transitive=row[1] == "all")]
    states = _states(conn)
    return Scope(
        gems=[g for g in wanted if states.get(g) == "complete"],
        wanted=wanted,
        stale=row[0] != lock.sha256,
        missing=[f"{n} {v}" for n, v in wanted if (n, v) not in states],
    )


def _states(conn: sqlite3.Connection) -> dict[tuple[str, str], str]:
    """Every stored gem version's state: complete, skipped or failed."""
    return {(n, v): s for n, v, s in conn.execute("SELECT name, version, state FROM gems")}

"""A Ruby project as gemdoc sees it: its directory, its lockfile, the gems in its scope."""

import json
import re
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
    locked: dict[str, str] = field(default_factory=dict)  # every gem of the lockfile, in scope or not: name -> version
    name: str = "meta"  # the scope: direct, meta or all


def outside(scope: Scope, text: str) -> list[str]:
    """A note for each gem of the bundle outside the scope that the question names by an API
    (``PowerAssert.start``: power_assert) or by its name with ``_`` or ``-`` (``power_assert``)."""
    in_scope = {name for name, _ in scope.wanted}
    named = dict.fromkeys(n for token in re.findall(r"[A-Za-z][\w:-]*", text) for n in _gem_names(token))
    return [
        f"{name} {scope.locked[name]} is in this bundle but not in the indexed scope ({scope.name} dependencies): "
        f"`gemdoc index --all` adds it"
        for name in named if name in scope.locked and name not in in_scope
    ]  # fmt: skip


def _gem_names(token: str) -> list[str]:
    """The gem names an API's constants or a word could stand for: ActiveRecord::Base ->
    active_record, activerecord, active-record; RSpec::Mocks -> rspec, rspec-mocks, rspec_mocks."""
    if token.lower() == token:
        return [token] if "_" in token or "-" in token else []
    parts = [re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", part).lower() for part in token.split("::")[:2] if part]
    if not parts:
        return []
    names = [parts[0], parts[0].replace("_", ""), parts[0].replace("_", "-")]
    return names + [f"{names[1]}{joint}{parts[1]}" for joint in "-_"] if len(parts) > 1 else names


def root(start: Path) -> Path:
    """The nearest directory at or above ``start`` holding a Gemfile.lock."""
    start = start.resolve()
    for candidate in (start, *start.parents):
        if (candidate / "Gemfile.lock").is_file() or (candidate / "gems.locked").is_file():
            return candidate
    raise GemdocError(f"no Gemfile.lock in {start} or above: run gemdoc inside a Ruby project (or pass --project DIR)")


def select_gems(project: Path, lock: lockfile.Lockfile, scope_name: str, trusted: bool) -> list[lockfile.LockedGem]:
    """The locked gems a scope indexes: ``direct`` dependencies; ``meta``, those plus everything a
    meta-gem among them stands for (``rails``: ActiveRecord, ActionPack, ActiveSupport, Rack, …);
    ``all``, the whole bundle."""
    if scope_name == "all":
        return lock.select(include_transitive=True)
    direct = lock.select(include_transitive=False)
    if scope_name == "direct":
        return direct
    names = {g.name for g in direct} | lock.closure(meta_gems(project, lock, direct, trusted))
    return [g for g in lock.select(include_transitive=True) if g.name in names]


def meta_gems(project: Path, lock: lockfile.Lockfile, gems: list[lockfile.LockedGem], trusted: bool) -> set[str]:
    """The gems among ``gems`` that are only a list of other gems, like ``rails``: installed, with
    dependencies in the lockfile, and no Ruby or C code of their own (one Ruby process asks)."""
    from gemdoc import locations, ri

    candidates = [g for g in gems if lock.deps.get(g.name)]
    if not candidates:
        return set()
    found = locations.locate(project, candidates, {g.name: lock.variants(g.name) for g in candidates}, trusted)
    metas = set()
    for loc in found:
        try:
            has_code = loc.found and bool(ri.sources(loc))
        except ri.SkipGem:
            has_code = False
        if loc.found and not has_code:
            metas.add(loc.gem.name)
    return metas


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
    else:  # a changed lockfile, not indexed yet: its gems of the recorded scope, without asking Ruby
        recorded = {name for name, _ in json.loads(row[2])}
        direct = {g.name for g in lock.select(include_transitive=False)}
        every = lock.select(include_transitive=True)
        wanted = [(g.name, g.version) for g in every if row[1] == "all" or g.name in direct or
                  (row[1] == "meta" and g.name in recorded)]  # fmt: skip
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
        locked={g.name: g.version for g in lock.gems},
        name=row[1],
    )

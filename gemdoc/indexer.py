"""``gemdoc index``: lockfile -> gem locations -> ri, symbols, prose -> chunks -> store.

Each gem is prepared in a worker (RDoc runs in its own Ruby process) and written
in one transaction; the project (its lockfile digest and searchable gems) is
recorded when the run ends, so an interrupted run leaves a consistent store and
the next run finishes the rest.
"""

import contextlib
import dataclasses
import hashlib
import json
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from filelock import FileLock, Timeout

from gemdoc import damage, lockfile, locations, manifest, paths, prose, ri, roles, splitter, store, trust
from gemdoc.project import select_gems
from gemdoc.chunk import Chunk
from gemdoc.errors import GemdocError, ShimError
from gemdoc.store import GemRecord, Writer

EXTRACTOR_VERSION = "29"  # bump when extraction changes (chunking, symbols), so stored gems are re-read
LOCK_TIMEOUT = 600.0


@dataclass
class GemOutcome:
    name: str
    version: str
    outcome: str  # indexed | updated | unchanged | skipped | failed
    reason: str | None = None
    chunks: int = 0
    seconds: float = 0.0
    entry: int | None = None  # the store entry this gem resolved to, when it has one
    absent: bool = False  # not installed: nothing to read until `bundle install`

    def describe(self) -> str:
        return f"{self.outcome} ({self.reason})" if self.reason else self.outcome


@dataclass
class IndexReport:
    project: Path
    lockfile_sha256: str
    scope: str
    unchanged_lockfile: bool = False
    dry_run: bool = False
    outcomes: list[GemOutcome] = field(default_factory=list)
    seconds: float = 0.0
    discarded: str | None = None  # why reindex threw the old store away
    repaired: str | None = None  # where reindex moved a damaged store
    malformed: list[str] = field(default_factory=list)  # lockfile entries skipped, one line each
    absent: int = 0  # on an unchanged lockfile: locked gems still not installed
    refused: int = 0  # ...and path: entries that name no gem (locations.GemLocation.refused)

    def count(self, outcome: str) -> int:
        return sum(1 for o in self.outcomes if o.outcome == outcome)

    @property
    def complete(self) -> bool:
        """Every gem settled: stored, known to have nothing to document, failed on this exact source, or not
        installed (recorded apart, see _absent). A failure with no entry, such as the ri cache removed
        mid-run, settles nothing, so the next `index` redoes it."""
        return not any(o.outcome == "failed" and o.entry is None for o in self.outcomes)


@dataclass
class Prepared:
    """A gem turned into chunks, ready to be written."""

    digest: str
    chunks: list[Chunk] = field(default_factory=list)
    docs: ri.ApiDocs | None = None
    note: str | None = None
    seconds: float = 0.0
    profile: str = ""  # what the gem is for (roles.profile)


Progress = Callable[[GemOutcome, int, int], None]


def index_project(
    project: Path,
    scope: str | None = None,
    all_languages: bool | None = None,
    jobs: int | None = None,
    dry_run: bool = False,
    force: bool = False,
    progress: Progress | None = None,
    rebuild: bool = False,
    versions_only: bool = False,
) -> IndexReport:
    """Index a project's gems. ``versions_only`` (the Bundler hook) trusts that an installed
    gem version already in the store is unchanged, and re-reads only new versions; path: and
    git: gems are always compared by content."""
    project = project.resolve()
    lock = lockfile.load(lockfile.find(project))
    saved = manifest.load(project)
    scope = scope or saved.scope
    langs = saved.all_languages if all_languages is None else all_languages
    report = IndexReport(project, lock.sha256, scope, dry_run=dry_run, malformed=lock.malformed)
    start = time.monotonic()
    if not force and lockfile_unchanged(project, lock, saved, scope, langs):
        report.unchanged_lockfile = True
        gems = absent_gems(project)
        report.refused = sum("refused" in g for g in gems)
        report.absent = len(gems) - report.refused
        return report
    gems = select_gems(project, lock, scope, trust.verdict(project).trusted)
    settled = _registry_entries(project, gems) if versions_only and not force else {}
    todo = [g for g in gems if g.name not in settled]
    variants = {g.name: lock.variants(g.name) for g in todo}
    found = locations.locate_bundle(project, todo, variants, trust.verdict(project).trusted) if todo else None
    located = found.gems if found else []
    with contextlib.nullcontext() if dry_run else writer_lock():
        if rebuild:
            report.repaired = damage.repair(paths.store_path(), dry_run)
            report.discarded = None if report.repaired else store.unreadable_reason(paths.store_path())
            if report.discarded and not dry_run:
                store.discard(paths.store_path())
        for gem in (g for g in gems if g.name in settled):
            _emit(report, GemOutcome(gem.name, gem.version, "unchanged", entry=settled[gem.name]), len(gems), progress)
        _run(report, project, located, langs, jobs or os.cpu_count() or 1, force, progress)
        if not dry_run:
            wanted = [(g.name, g.version) for g in gems]
            entries = [o.entry for o in report.outcomes if o.entry is not None]
            absent = _absent(project, located, found.roots if found else [])
            _record(project, lock, saved, scope, langs, wanted, entries, absent, report.complete)
    report.seconds = time.monotonic() - start
    return report


def lockfile_unchanged(project: Path, lock, saved: manifest.Manifest, scope: str, langs: bool) -> bool:
    """The manifest and the store must both say this exact lockfile was indexed in this scope,
    by this version of the extraction, and every entry the project recorded must still be in
    the store (an entry is never rewritten under its id, so present means the project's own).

    The store is asked too, because a `.gemdoc.yml` checked in by someone else
    says nothing about what *this* machine's store holds.
    """
    if saved.lockfile_sha256 != lock.sha256 or saved.scope != scope or saved.all_languages != langs:
        return False
    rows = store.peek(  # None also for a store of an older schema
        paths.store_path(),
        "SELECT p.lockfile_sha256, p.scope, p.complete, p.extractor, "
        "json_array_length(p.entries) = "
        "(SELECT count(*) FROM gems WHERE id IN (SELECT value FROM json_each(p.entries))) "
        "FROM projects p WHERE p.path = ?",
        [str(project)],
    )
    recorded = bool(rows) and rows[0] == (lock.sha256, scope, 1, EXTRACTOR_VERSION, 1)
    return recorded and not changed_copies(project, langs) and not installed_since(project)


ABSENT_KEY = "absent:"  # + project path: a meta row of the gems its last index found not installed


def _absent(project: Path, located: list[locations.GemLocation], roots: list[str]) -> dict | None:
    """The gems not installed, with the fingerprint of where they would be installed (or None)."""
    missing = [loc for loc in located if not loc.found]
    if not missing:
        return None
    paths_ = [loc.gem.remote for loc in missing if loc.gem.source == "path" and loc.gem.remote and not loc.refused]
    return {
        "gems": [{"gem": loc.gem.name, "version": loc.gem.version, "reason": loc.why()}
                 | ({"refused": True} if loc.refused else {}) for loc in missing],
        "roots": roots, "paths": paths_, "fingerprint": locations.install_fingerprint(project, roots, paths_),
    }  # fmt: skip


def absent_record(project: Path) -> dict | None:
    """What the last index of this project recorded as not installed."""
    rows = store.peek(paths.store_path(), "SELECT value FROM meta WHERE key = ?", [ABSENT_KEY + str(project)])
    return json.loads(rows[0][0]) if rows else None


def absent_gems(project: Path) -> list[dict]:
    record = absent_record(project)
    return record["gems"] if record else []


def installed_since(project: Path) -> bool:
    """Has anything changed where the gems the last index missed would be installed?"""
    record = absent_record(project)
    if record is None:
        return False
    now = locations.install_fingerprint(project, record["roots"], record["paths"])
    return now != record["fingerprint"]


def changed_copies(project: Path, langs: bool) -> list[str]:
    """The project's own copies (vendored, path:, git:) whose files no longer have the digest of the
    entry the project reads. Registry copies are trusted not to change once installed, as Bundler does."""
    rows = store.peek(
        paths.store_path(),
        "SELECT g.name, g.version, g.root, g.source_digest FROM projects p, json_each(p.entries) e "
        "JOIN gems g ON g.id = e.value WHERE p.path = ? AND g.origin != ? AND g.root != ''",
        [str(project), store.REGISTRY],
    )
    changed = []
    for name, version, root, digest in rows or []:
        loc = locations.GemLocation(lockfile.LockedGem(name, version), "found", root=Path(root))
        if source_digest(loc, langs) != digest:
            changed.append(f"{name} {version}")
    return changed


def writer_lock():
    """Held by every writer of the store (index, reindex, embed), so they never interleave."""
    damage.check_writable(paths.store_path())
    return _Locked(FileLock(str(paths.lock_path()), timeout=LOCK_TIMEOUT))


class _Locked:
    """The writer lock, plus SIGTERM turned into a clean interruption while it is held."""

    def __init__(self, lock: FileLock):
        self.lock = lock

    def __enter__(self):
        try:
            try:
                self.lock.acquire(timeout=0)
            except Timeout:
                print("gemdoc: waiting for another gemdoc writer to finish…", file=sys.stderr, flush=True)
                self.lock.acquire()
        except Timeout as exc:
            raise GemdocError(
                f"another gemdoc is writing the store (lock {self.lock.lock_file}); wait for it and retry"
            ) from exc
        self.previous = signal.signal(signal.SIGTERM, _interrupt)
        shutil.rmtree(paths.ri_cache_dir() / ".tmp", ignore_errors=True)
        return self

    def __exit__(self, *exc):
        signal.signal(signal.SIGTERM, self.previous)
        self.lock.release()
        return False


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def _run(report: IndexReport, project: Path, located, langs: bool, jobs: int, force: bool, progress) -> None:
    writer = None if report.dry_run else Writer(paths.store_path())
    total = len(located)
    try:
        pending = []
        for loc in located:
            digest = source_digest(loc, langs) if loc.found and not report.dry_run else ""
            record = _record_of(loc, project, digest)
            outcome = _precheck(loc, record, writer, force)
            if outcome:
                _emit(report, outcome, total, progress)
            else:
                pending.append((loc, record))
        _process(report, pending, langs, jobs, writer, total, progress)
    finally:
        if writer:
            writer.close()


def origin(loc: locations.GemLocation, project: Path) -> str:
    """Where a gem's files came from: its lockfile source, and for a gem source whether the copy
    read is the project's own (inside the project, e.g. a committed or configured vendor/bundle)."""
    if loc.gem.source in ("path", "git"):
        return loc.gem.source
    return "vendored" if loc.root.resolve().is_relative_to(project) else store.REGISTRY


def _record_of(loc: locations.GemLocation, project: Path, digest: str) -> GemRecord:
    """The store record of a located gem, before it is read (state ``complete`` is provisional)."""
    gem = loc.gem
    if not loc.found:
        return GemRecord(gem.name, gem.version, "", loc.layout, digest, "skipped")
    return GemRecord(gem.name, gem.version, str(loc.root), loc.layout, digest, "complete",
                     platform=gem.platform or "ruby", origin=origin(loc, project))  # fmt: skip


def _precheck(loc, record: GemRecord, writer: Writer | None, force: bool) -> GemOutcome | None:
    """The outcome of a gem that needs no work, or None. The digest is empty on a dry run."""
    gem = loc.gem
    if not loc.found:
        return GemOutcome(gem.name, gem.version, "skipped", loc.remedy(), absent=True)
    if not record.source_digest or force:
        return None
    stored = writer.lookup(record)
    if stored is None:
        return None
    entry, state, error = stored
    if state == "complete":
        return GemOutcome(gem.name, gem.version, "unchanged", entry=entry)
    if state == "failed":
        return GemOutcome(gem.name, gem.version, "failed", f"{error}; `gemdoc index --force` retries", entry=entry)
    return GemOutcome(gem.name, gem.version, "skipped", error, entry=entry)


def _process(report, pending, langs, jobs, writer, total, progress) -> None:
    if report.dry_run:
        for loc, _ in pending:
            _emit(report, _dry_outcome(loc), total, progress)
        return
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(prepare, loc, record.source_digest, langs): (loc, record) for loc, record in pending}
        try:
            for future in as_completed(futures):
                _emit(report, _store(writer, *futures[future], future), total, progress)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _dry_outcome(loc: locations.GemLocation) -> GemOutcome:
    return GemOutcome(loc.gem.name, loc.gem.version, "would index", None)


def _emit(report: IndexReport, outcome: GemOutcome, total: int, progress: Progress | None) -> None:
    report.outcomes.append(outcome)
    if progress:
        progress(outcome, len(report.outcomes), total)


def prepare(loc: locations.GemLocation, digest: str, all_languages: bool) -> Prepared:
    """Everything slow for one gem (RDoc, parsing, chunking); runs in a worker thread."""
    start = time.monotonic()
    prepared = Prepared(digest)
    try:
        prepared.docs = ri.extract(loc, prepared.digest)
        prepared.chunks.extend(prepared.docs.chunks)
    except ri.SkipGem as exc:
        prepared.note = f"ri skipped: {exc}"
    if loc.files is None:
        for doc in prose.discover(loc.root, all_languages):
            text = doc.path.read_text(encoding="utf-8", errors="replace")
            prepared.chunks.extend(splitter.chunk_document(text, doc.relative, doc.source_type))
    prepared.profile = roles.profile(loc.gem.name, loc.about, prepared.chunks)
    prepared.seconds = time.monotonic() - start
    return prepared


def _store(writer: Writer, loc: locations.GemLocation, record: GemRecord, future) -> GemOutcome:
    gem = loc.gem
    try:
        prepared: Prepared = future.result()
    except ShimError as exc:
        entry = writer.mark(dataclasses.replace(record, state="failed", error=str(exc)))
        return GemOutcome(gem.name, gem.version, "failed", str(exc), entry=entry)
    except ri.CacheVanished as exc:  # not the gem's fault: not marked, so the next run redoes it
        return GemOutcome(gem.name, gem.version, "failed", str(exc))
    docs = prepared.docs
    if not prepared.chunks:
        entry = writer.mark(dataclasses.replace(record, state="skipped", error="no documentation"))
        return GemOutcome(gem.name, gem.version, "skipped", "no documentation", entry=entry)
    record = dataclasses.replace(
        record, ri_tier=docs.tier if docs else None, parser=docs.parser if docs else None,
        chunks=len(prepared.chunks), methods=docs.methods if docs else 0,
        located=docs.located if docs else 0, seconds=round(prepared.seconds, 3),
    )  # fmt: skip
    outcome, entry = writer.replace_gem(record, prepared.chunks, prepared.profile, docs.hidden if docs else [])
    return GemOutcome(gem.name, gem.version, outcome, prepared.note, len(prepared.chunks), prepared.seconds, entry)


def _registry_entries(project: Path, gems: list[lockfile.LockedGem]) -> dict[str, int]:
    """name -> entry, for gems from a gem source whose exact version this project already read from
    a registry copy (outside the project): the hook trusts an installed registry gem not to change.
    Only this project's own entries count, read by this extractor; another project's copy of the same
    version may differ, and an older extractor's reading lacks what this one stores."""
    rows = store.peek(
        paths.store_path(),
        "SELECT g.name, g.version, g.platform, g.id FROM projects p, json_each(p.entries) e "
        "JOIN gems g ON g.id = e.value WHERE p.path = ? AND p.extractor = ? AND g.origin = ? AND g.state != 'failed'",
        [str(project), EXTRACTOR_VERSION, store.REGISTRY],
    )
    known = {(n, v, p): entry for n, v, p, entry in rows or []}
    return {
        g.name: known[(g.name, g.version, g.platform or "ruby")]
        for g in gems
        if g.source == "gem" and (g.name, g.version, g.platform or "ruby") in known
    }


def _record(
    project: Path, lock, saved: manifest.Manifest, scope: str, langs: bool, wanted, entries, absent: dict | None,
    complete: bool,
) -> None:
    """The project's entries, and the gems it lacks with where they would appear: every gem is
    settled (stored, nothing to document, failed on this source, or not installed), so the next
    `index` is a no-op until the lockfile or the installed gems change."""
    writer = Writer(paths.store_path())
    try:
        writer.record_project(str(project), lock.sha256, scope, wanted, entries, complete, EXTRACTOR_VERSION)
        with writer.db.conn:
            writer.db.execute("DELETE FROM meta WHERE key = ?", [ABSENT_KEY + str(project)])
            if absent:
                row = [ABSENT_KEY + str(project), json.dumps(absent)]
                writer.db.execute("INSERT INTO meta (key, value) VALUES (?, ?)", row)
    finally:
        writer.close()
    manifest.save(project, dataclasses.replace(saved, lockfile_sha256=lock.sha256, scope=scope, all_languages=langs))


def _gemspecs(root: Path) -> list[str]:
    """The gemspecs at the top of a gem's directory: regular files (no symlink) of at most
    prose.MAX_BYTES, so that an edited summary makes a path: gem changed, without asking Ruby."""
    return [p.name for p in sorted(root.glob("*.gemspec"))
            if not p.is_symlink() and p.is_file() and p.stat().st_size <= prose.MAX_BYTES]  # fmt: skip


def source_digest(loc: locations.GemLocation, all_languages: bool) -> str:
    """sha256 over every file gemdoc reads for this gem (API sources, prose, and its own gemspec, where
    its profile's summary comes from), and the settings that change what is read from them."""
    digest = hashlib.sha256(f"extractor {EXTRACTOR_VERSION} languages {all_languages}\n".encode())
    root = loc.root
    try:
        files = ri.sources(loc)
    except ri.SkipGem:
        files = []
    files = ri.readable(loc, files)  # what RDoc may read: the sources, and the prose a comment includes
    if loc.files is None:
        files += _gemspecs(root)
    for rel in sorted(files):
        try:
            data = (root / rel).read_bytes()
        except OSError:
            continue
        digest.update(f"{rel}\0{len(data)}\0".encode())
        digest.update(hashlib.sha256(data).digest())
    return digest.hexdigest()

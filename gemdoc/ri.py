"""API documentation from ri: obtain a gem's ri store, then turn it into chunks.

Tier 0 reads an ri store installed for the exact version (``doc_dir/ri``) when it
covers the sources (not an engine's app/, which RubyGems does not document).
Otherwise gemdoc's private cache is used, and when it has none, RDoc generates
one over the gem's lib/, ext/ and app/ (RDoc's default: public and protected methods,
and private ones marked ``# :doc:``; see ``_documented``) into a fresh temporary
directory that is renamed into the cache only after RDoc succeeded, together
with what the shim read from it (``extract.json``): reading the cache needs no
Ruby and gives exactly what a fresh run gives. A crash or a timeout leaves
nothing behind.
"""

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from gemdoc import files, paths, prose, shim, splitter, symbols, yard
from gemdoc.chunk import Chunk
from gemdoc.errors import GemdocError, ShimError
from gemdoc.locations import GemLocation

EXTRACT_TIMEOUT = 600.0
EXTRACT_FILE = "extract.json"
ATTEMPTS = 3  # of reading or generating a gem's cache entry while something removes the cache
RESTRICTED = ("protected", "private")  # the visibilities a result says (chunk.visibility); public goes unsaid
API_DIRS = ("lib", "ext", "app")  # app/: a Rails engine's models, controllers, jobs (ActiveStorage::Blob)
SOURCE_SUFFIXES = {".rb", ".c", ".h", ".cc", ".cpp", ".cxx"}
# A larger source is not documented: RDoc spends minutes and gigabytes on one (a gem is untrusted); the largest
# on the benchmark bundle is 1.4 MB (mail's generated address_lists_parser.rb).
MAX_SOURCE_BYTES = 8 * 1024 * 1024
# A comment longer than this is cut at its headings, as a guide is: ActiveRecord's
# Associations::ClassMethods (36 KB) or Minitest's (its README) as one chunk matched most everyday words
# of a question and ranked first on sheer coverage, and so did a long method's (DateHelper#date_select,
# 7 KB). Each section keeps the entry's title and citation.
LONG_COMMENT = 2 * splitter.TARGET


class SkipGem(GemdocError):
    """The gem has nothing RDoc can document."""


class CacheVanished(GemdocError):
    """The ri cache was removed (``rm -rf``, `gemdoc gc` elsewhere) while a gem's entry was being
    written or read: no fault of the gem, so it is retried and never remembered as its failure."""


@dataclass
class ApiDocs:
    entries: list[dict]
    symbols: list[dict]
    parser: str
    tier: str  # installed | cached | generated
    chunks: list[Chunk] = field(default_factory=list)
    located: int = 0
    methods: int = 0
    hidden: list[dict] = field(default_factory=list)  # definitions in the source no chunk documents


def sources(location: GemLocation) -> list[str]:
    """The files RDoc documents, relative to the gem root: Ruby and C under lib/, ext/ and app/ (or the
    gem's own files when they are scattered), none larger than MAX_SOURCE_BYTES. Listed here, never left
    to RDoc's directory walk, which follows symlink loops and parses the same file again on every lap."""
    if location.files is not None:
        found = [f for f in location.files if _small(location.root / f)]
    elif not any((location.root / d).is_dir() for d in API_DIRS):
        raise SkipGem("no lib/, ext/ or app/")
    else:
        found = [
            path.relative_to(location.root).as_posix()
            for top in API_DIRS
            for path in files.tree(location.root / top)
            if path.suffix in SOURCE_SUFFIXES and _small(path)
        ]
    if not found:  # never hand RDoc an empty list: it would document its whole working directory
        raise SkipGem("no Ruby or C source")
    return found


def _printable(file: str | None) -> str | None:
    """An entry's file as RDoc recorded it, unless its name could forge lines of output (files.plain): an
    installed ri store's names come from RubyGems' RDoc run over the gem, not from gemdoc's walk."""
    return file if file and files.plain(file) else None


def _small(path: Path) -> bool:
    """Whether ``path`` is a file of at most MAX_SOURCE_BYTES (one gone meanwhile is not)."""
    try:
        return path.stat().st_size <= MAX_SOURCE_BYTES
    except OSError:
        return False


def covers(src: list[str], documented: tuple[str, ...]) -> bool:
    """Whether an installed ri store documents these sources: RubyGems runs RDoc over the gemspec's
    source_paths (``documented``: its require paths and declared extensions' dirs, RDoc::RubygemsHook),
    so an engine's app/ or an undeclared ext/ is missing from it."""
    return all(any(path.startswith(f"{top}/") for top in documented) for path in src)


def cache_entry(location: GemLocation, digest: str) -> Path:
    gem = location.gem
    return paths.ri_cache_dir() / f"{gem.name}-{gem.version}-{digest[:12]}"


def extract(location: GemLocation, digest: str, timeout: float = EXTRACT_TIMEOUT) -> ApiDocs:
    """The gem's API docs: RDoc's entries, and the methods its comments declare to YARD (yard.py)."""
    src = sources(location)
    docs = _rdoc(location, src, digest, timeout)
    docs.chunks += yard.declared(location.root, src, docs.symbols, {c.title for c in docs.chunks})
    return docs


def _rdoc(location: GemLocation, src: list[str], digest: str, timeout: float) -> ApiDocs:
    if location.ri_dir and covers(src, location.ri_covers):
        return _docs(_run(location, src, {"ri_dir": str(location.ri_dir)}, timeout), "installed")
    cached = cache_entry(location, digest)
    for _ in range(ATTEMPTS):
        try:
            return _cached_or_generated(location, src, cached, timeout)
        except CacheVanished:
            continue
    raise CacheVanished(
        f"the ri cache {paths.ri_cache_dir()} was removed {ATTEMPTS} times while gemdoc wrote to it; "
        "run `gemdoc index` again"
    )


def _cached_or_generated(location: GemLocation, src: list[str], cached: Path, timeout: float) -> ApiDocs:
    """The cache entry's docs; a missing or damaged entry (removed, cut short) is generated again."""
    try:
        return _docs(json.loads((cached / EXTRACT_FILE).read_text()), "cached")
    except (OSError, ValueError, KeyError, TypeError):
        return _docs(_generate(location, src, cached, timeout), "generated")


def _generate(location: GemLocation, src: list[str], target: Path, timeout: float) -> dict:
    """RDoc into a scratch directory; the ri store and what was read from it are renamed into
    the cache together, so a cache entry is complete or absent, never half-written."""
    scratch_root = target.parent / ".tmp"  # same filesystem as the cache: the rename is atomic
    try:
        scratch_root.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f"{target.name}-", dir=scratch_root))
    except FileNotFoundError as exc:  # the cache went between the two calls
        raise CacheVanished(str(exc)) from exc
    try:
        try:
            how = {"generate_into": str(scratch / "ri"), "readable": readable(location, src)}
            answer = _run(location, src, how, timeout)
        except ShimError as exc:
            if not scratch.is_dir():  # RDoc failed because its output directory went, not because of the gem
                raise CacheVanished(str(exc)) from exc
            raise
        (scratch / EXTRACT_FILE).write_text(json.dumps(answer))
        shutil.rmtree(target, ignore_errors=True)  # a damaged entry, or one from an older gemdoc
        os.rename(scratch, target)
        return answer
    except FileNotFoundError as exc:
        raise CacheVanished(str(exc)) from exc
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def readable(location: GemLocation, src: list[str]) -> list[str]:
    """The files RDoc may read besides its sources when a comment names one (``# :include: README.rdoc``,
    a C method's ``/* in other.c */``): the gem's sources and prose, which its digest covers
    (indexer.source_digest), so that a cache entry or a stored gem shared by digest holds only what
    that digest says; a file elsewhere in the gem, or outside it, is never read."""
    if location.files is not None:
        return list(src)
    return [*src, *(doc.relative for doc in prose.discover(location.root, True))]


def _run(location: GemLocation, src: list[str], how: dict, timeout: float) -> dict:
    return shim.call("extract", {"root": str(location.root), "sources": src, **how}, timeout=timeout)


def _docs(answer: dict, tier: str) -> ApiDocs:
    docs = ApiDocs(answer["ri"], answer["symbols"], answer["parser"], tier)
    docs.chunks, docs.located, docs.methods, docs.hidden = to_chunks(docs.entries, docs.symbols, tier == "installed")
    return docs


def to_chunks(
    entries: list[dict], syms: list[dict], installed: bool = False
) -> tuple[list[Chunk], int, int, list[dict]]:
    """One chunk per class, module, method and attribute; returns (chunks, located methods, methods,
    the methods defined in the source that no chunk documents: ``:nodoc:``, private or protected without a comment,
    or hidden from RDoc)."""
    syms = symbols.resolve(syms)
    defs = symbols.index(syms)
    refiled = symbols.refile(entries, defs)
    originals = _aliased(refiled)  # before the filter: an alias of an uncommented private method is private too
    entries = _documented(refiled, installed)
    chunks, located, methods = [], 0, 0
    seen: set[tuple[str, str]] = set()
    cited: set[int] = set()
    for entry in entries:
        key = (entry["kind"], entry["full_name"])  # an installed ri store lists some entries once per file
        if key in seen:
            continue
        seen.add(key)
        where = symbols.locate(entry, defs)
        if entry["kind"] in ("method", "attribute"):
            methods += 1
            located += where is not None
        cited.add(id(where))
        chunks.extend(_sections(_chunk(entry, where, _visibility(entry, where, originals))))
    documented = {(c.title.rpartition("#")[0] or c.title.rpartition("::")[0], c.name) for c in chunks}
    hidden = [s for s in syms if s["kind"] == "method" and id(s) not in cited
              and (s["owner"], s["name"].lower()) not in documented]  # fmt: skip
    return chunks, located, methods, hidden


def _documented(entries: list[dict], installed: bool) -> list[dict]:
    """Public entries, and the protected or private ones whose comment says something, with their
    aliases (RDoc gives an alias no comment of its own). RDoc stores a private method only when its
    author asked (``# :doc:``: ``Rake::DSL#task``, ActionController's ``send_file``) and protected
    ones by default (Devise's ``after_confirmation_path_for``, for overriding); without a comment such
    an entry is an internal step, not documentation. An ``installed`` store (RubyGems' RDoc hook)
    holds every private method, since the hook never prunes by visibility, and nothing in it says
    which were marked ``:doc:``: its private entries all stay out."""
    commented = ("protected",) if installed else RESTRICTED

    def said(e: dict) -> bool:
        return e.get("visibility") in (None, "public") or (
            e.get("visibility") in commented and bool((e.get("comment") or "").strip()))

    aliases = {(e.get("owner"), e.get("singleton"), a) for e in filter(said, entries) for a in e.get("aliases") or []}
    return [e for e in entries if said(e) or (e.get("owner"), e.get("singleton"), e["name"]) in aliases]


def _aliased(entries: list[dict]) -> dict[tuple, str | None]:
    """Each alias's key (owner, singleton, name) and the visibility of the method it aliases: Ruby's
    alias keeps it, while RDoc gives an alias the visibility of the section it is written in."""
    return {(e.get("owner"), e.get("singleton"), alias): e.get("visibility")
            for e in entries for alias in e.get("aliases") or []}  # fmt: skip


def _visibility(entry: dict, where: dict | None, originals: dict[tuple, str | None]) -> str:
    """What a result says of the entry's visibility: protected or private, or nothing (public). Nothing
    either for a method RDoc was told of (``# :method:``) that no Ruby line defines: RDoc gives it the
    visibility of whatever section follows the comment."""
    visibility = originals.get((entry.get("owner"), entry.get("singleton"), entry["name"]), entry.get("visibility"))
    ghost = where is None and Path(entry.get("file") or "").suffix == ".rb"
    return visibility if visibility in RESTRICTED and not ghost else ""


def _chunk(entry: dict, where: dict | None, visibility: str) -> Chunk:
    return Chunk(
        source_type="ri",
        title=entry["full_name"],
        heading=entry["full_name"],
        body=entry.get("comment") or "",
        file=where["file"] if where else _printable(entry.get("file")),
        line=where["line"] if where else None,
        end_line=where["end_line"] if where else None,
        signature=_signature(entry, where),
        kind=entry["kind"],
        name=entry["name"].lower(),
        visibility=visibility,
    )


def _sections(chunk: Chunk) -> list[Chunk]:
    """A long comment as one chunk per section (and piece of a long section), each headed
    ``Full::Name > Section`` and opening with its heading line, so that its words are searched and
    ``show`` prints the comment whole with its headings; the rest as it is."""
    if len(chunk.body) <= LONG_COMMENT:
        return [chunk]
    found = []
    for section in splitter.sections(chunk.body, "markdown"):
        head = ["#" * len(section.path) + " " + section.path[-1]] if section.path else []
        body = "\n".join(head + section.lines).strip("\n")
        heading = " > ".join([chunk.title, *section.path])
        found += [replace(chunk, heading=heading, body=piece) for piece in splitter.split_long(body) if piece.strip()]
    return found or [chunk]


def _signature(entry: dict, where: dict | None) -> str:
    if entry.get("call_seq"):
        return entry["call_seq"].strip()
    if entry["kind"] == "method":
        return f"{entry['name']}{entry.get('params') or ''}"
    if entry["kind"] == "attribute":
        return f"attr_{ {'R': 'reader', 'W': 'writer'}.get(entry.get('rw'), 'accessor')} :{entry['name']}"
    if entry["kind"] == "class" and entry.get("superclass"):
        return f"class {entry['full_name']} < {entry['superclass']}"
    return f"{entry['kind']} {entry['full_name']}"

"""Parse Gemfile.lock: sources (GEM, PATH, GIT), specs, DEPENDENCIES, BUNDLED WITH."""

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from gemdoc import files
from gemdoc.errors import LockfileError

SOURCE_SECTIONS = {"GEM": "gem", "PATH": "path", "GIT": "git"}
SPEC_LINE = re.compile(r"^    (?P<name>[^\s(]+) \((?P<version>[^)\s]+)\)$")
SPEC_DEP_LINE = re.compile(r"^      (?P<name>[^\s(!]+)(?: \([^)]*\))?$")
DEP_LINE = re.compile(r"^  (?P<name>[^\s(!]+)(?: \([^)]*\))?(?P<pinned>!)?$")
# RubyGems versions contain no "-"; whatever follows the first one is a platform.
VERSION = re.compile(r"^(?P<version>[0-9][0-9A-Za-z.]*)(?:-(?P<platform>.+))?$")
# What RubyGems itself accepts (Gem::SpecificationPolicy, Gem::Version, Gem::Platform): a name,
# version, platform or git revision outside these never reaches a path, a glob or the shim.
GEM_NAME = re.compile(r"\A(?=[^._-])(?=.*[A-Za-z])[A-Za-z0-9._-]+\Z")
GEM_VERSION = re.compile(r"\A[0-9]+(\.[0-9A-Za-z]+)*\Z")
PLATFORM = re.compile(r"\A[A-Za-z0-9_][A-Za-z0-9_.-]*\Z")
REVISION = re.compile(r"\A[0-9a-f]{7,40}\Z")
MAX_BYTES = 8 * 1024 * 1024
SECTION = re.compile(r"\A[A-Z][A-Z ]*[A-Z]\Z")  # GEM, PATH, PLATFORMS, BUNDLED WITH, ...
KEY = re.compile(r"\A[a-z_]+\Z")  # a source's own settings: remote, revision, branch, specs, ...
CONFLICT = re.compile(r"\A(<{7}|={7}|>{7}|\|{7})(\s|\Z)")  # git's merge-conflict markers


@dataclass(frozen=True)
class LockedGem:
    name: str
    version: str
    platform: str | None = None
    source: str = "gem"
    remote: str | None = None
    revision: str | None = None

    @property
    def key(self) -> str:
        return f"{self.name}@{self.version}"


@dataclass
class Lockfile:
    path: Path
    sha256: str
    gems: list[LockedGem] = field(default_factory=list)
    direct: list[str] = field(default_factory=list)
    bundled_with: str | None = None
    malformed: list[str] = field(default_factory=list)  # one line per spec skipped, naming its line
    deps: dict[str, set[str]] = field(default_factory=dict)  # a spec's own dependencies, by gem name

    def select(self, include_transitive: bool) -> list[LockedGem]:
        """The gems in scope, one per name (the first platform variant listed)."""
        wanted = None if include_transitive else set(self.direct)
        chosen: dict[str, LockedGem] = {}
        for gem in self.gems:
            if (wanted is None or gem.name in wanted) and gem.name not in chosen:
                chosen[gem.name] = gem
        return sorted(chosen.values(), key=lambda g: g.name)

    def variants(self, name: str) -> list[LockedGem]:
        return [g for g in self.gems if g.name == name]

    def closure(self, names: set[str]) -> set[str]:
        """``names`` and every gem they depend on, transitively, as the lockfile records it."""
        seen: set[str] = set()
        todo = list(names)
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                todo.extend(self.deps.get(name, ()))
        return seen


def find(project: Path) -> Path:
    """The lockfile of a project directory, honouring BUNDLE_GEMFILE-style names."""
    for name in ("Gemfile.lock", "gems.locked"):
        candidate = project / name
        if candidate.is_file():
            return candidate
    raise LockfileError(
        f"no Gemfile.lock in {project}: run gemdoc inside a Ruby project, after `bundle lock` or `bundle install`"
    )


def load(path: Path) -> Lockfile:
    try:
        raw = files.read_capped(path, MAX_BYTES)
    except OSError as exc:
        raise LockfileError(f"cannot read {path}: {exc.strerror}; check the path and its permissions") from exc
    except ValueError as exc:
        raise LockfileError(f"{path} {exc}, too much for a lockfile; regenerate it with `bundle lock`") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LockfileError(f"{path} is not UTF-8 text; regenerate it with `bundle lock`") from exc
    lock = parse(text, path)
    content = text.removeprefix("\ufeff").replace("\r\n", "\n")  # a BOM or CRLF re-save is the same lock
    lock.sha256 = hashlib.sha256(content.encode()).hexdigest()
    return lock


def parse(text: str, path: Path = Path("Gemfile.lock")) -> Lockfile:
    lock = Lockfile(path=path, sha256="")
    section: str | None = None
    source: dict[str, str | None] = {}
    for number, line in enumerate(text.removeprefix("\ufeff").splitlines(), start=1):  # BOM, CRLF
        if not line.strip():
            continue
        if not line.startswith(" "):
            section = _section(line, number, path)
            source = {"type": SOURCE_SECTIONS.get(section), "remote": None, "revision": None}
            continue
        if section is None:
            raise LockfileError(f"{path}:{number}: text before any section; regenerate it with `bundle lock`")
        _parse_line(lock, section, source, line, number)
    if not lock.gems and not lock.direct:
        raise LockfileError(f"{path} holds no gems and no DEPENDENCIES; regenerate it with `bundle lock`")
    return lock


def _section(line: str, number: int, path: Path) -> str:
    """A section header; anything else at the start of a line is an error naming its line."""
    if CONFLICT.match(line):
        raise LockfileError(
            f"{path}:{number}: merge conflict marker {line[:40]!r}; resolve the conflict, then run `bundle lock`"
        )
    if not SECTION.match(line.rstrip()):
        raise LockfileError(f"{path}:{number}: unreadable line {line[:80]!r}; regenerate it with `bundle lock`")
    return line.rstrip()


def _parse_line(lock: Lockfile, section: str, source: dict, line: str, number: int) -> None:
    if section in SOURCE_SECTIONS:
        _parse_source_line(lock, source, line, number)
    elif section == "DEPENDENCIES":
        match = DEP_LINE.match(line)
        if not match:
            raise LockfileError(
                f"{lock.path}:{number}: unreadable dependency {line.strip()[:80]!r}; regenerate with `bundle lock`"
            )
        lock.direct.append(match["name"])
    elif section == "BUNDLED WITH":
        lock.bundled_with = line.strip()


def invalid(gem: LockedGem) -> str | None:
    """Why RubyGems would not accept this spec's name, version, platform or git revision, or None."""
    if not GEM_NAME.match(gem.name):
        return "not a gem name: letters, digits, '.', '-' and '_', with a letter, not starting with '.', '-' or '_'"
    if not GEM_VERSION.match(gem.version):
        return "not a gem version"
    if gem.platform is not None and not PLATFORM.match(gem.platform):
        return "not a gem platform"
    if gem.source == "git" and not REVISION.match(gem.revision or ""):
        return "its GIT source has no hexadecimal revision"
    return None


def _parse_source_line(lock: Lockfile, source: dict, line: str, number: int) -> None:
    stripped = line.strip()
    if line.startswith("      "):  # a spec's own dependency
        match = SPEC_DEP_LINE.match(line)
        if match and source.get("spec"):
            lock.deps.setdefault(source["spec"], set()).add(match["name"])
        return
    if line.startswith("    "):
        match = SPEC_LINE.match(line)
        version = VERSION.match(match["version"]) if match else None
        if not match or not version:
            raise LockfileError(
                f"{lock.path}:{number}: unreadable spec {stripped[:80]!r}; regenerate with `bundle lock`"
            )
        gem = LockedGem(
            name=match["name"],
            version=version["version"],
            platform=version["platform"],
            source=source["type"],
            remote=source["remote"],
            revision=source["revision"],
        )
        problem = invalid(gem)
        source["spec"] = None if problem else gem.name
        if problem:
            entry = f"{lock.path}:{number}: malformed lockfile entry {stripped[:200]!r}"
            lock.malformed.append(f"{entry} ({problem}); skipped")
        else:
            lock.gems.append(gem)
        return
    key, colon, value = stripped.partition(":")
    if not colon or not KEY.match(key) or line.startswith("   "):
        raise LockfileError(
            f"{lock.path}:{number}: unreadable line {stripped[:80]!r}; regenerate it with `bundle lock`"
        )
    if key in ("remote", "revision"):
        source[key] = value.strip()

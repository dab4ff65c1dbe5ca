"""Which files of a gem are prose, and of which source type.

READMEs, other top-level prose, the changelog, guides/** and the prose under
doc/** and docs/**. Never ri stores, html/js/css, symlinks, binaries, files over
the size cap, or (unless asked) documents marked Japanese, Chinese or Korean.
"""

import os
import re
from dataclasses import dataclass
from pathlib import Path

from gemdoc import files

MAX_BYTES = 2 * 1024 * 1024
PROSE_SUFFIXES = {"", ".md", ".markdown", ".rdoc", ".txt"}
README = re.compile(r"^readme(\.(md|markdown|rdoc|txt))?$", re.I)
CHANGELOG = re.compile(r"^(changelog|changes|history|news)(\.(md|markdown|rdoc|txt))?$", re.I)
# Files that are not documentation, each rule matching whole file names: `Rakefile` is a build
# file, rake's doc/rakefile.rdoc its main guide (benchmarks/prose_filters.py reports every drop).
NOT_PROSE = {
    "license": re.compile(r"^(mit-)?(license|licence|copying)([-_.][a-z0-9]+)*$", re.I),
    "manifest": re.compile(r"^manifest(\.txt)?$", re.I),
    "gemfile": re.compile(r"^gemfile(\.lock)?$", re.I),
    "rakefile": re.compile(r"^rakefile$", re.I),
    "code_of_conduct": re.compile(r"^code[-_]of[-_]conduct(\.(md|markdown|rdoc|txt))?$", re.I),
}
FOREIGN = {"ja", "jp", "ja_jp", "zh", "cn", "zh_cn", "zh_tw", "tw", "ko", "kr", "ko_kr"}
TREES = {"guides": "guides", "doc": "doc", "docs": "doc"}


@dataclass(frozen=True)
class ProseFile:
    path: Path  # absolute
    relative: str  # relative to the gem root, "/"-separated
    source_type: str  # readme | guides | doc | changelog


@dataclass(frozen=True)
class Verdict:
    relative: str
    source_type: str | None  # None: dropped
    rule: str | None = None  # the rule that dropped it


def discover(root: Path, all_languages: bool = False) -> list[ProseFile]:
    return [ProseFile(root / v.relative, v.relative, v.source_type) for v in audit(root, all_languages) if v.source_type]


def audit(root: Path, all_languages: bool = False) -> list[Verdict]:
    """Every file at the gem's top level and in its doc trees, kept (with its source type) or
    dropped (with the rule that dropped it), sorted by path."""
    found = list(_top_level(root))
    for tree, source_type in TREES.items():
        found.extend(_walk(root, root / tree, source_type))
    if not all_languages:
        found = [Verdict(v.relative, None, "foreign language") if v.source_type and is_foreign(v.relative) else v
                 for v in found]  # fmt: skip
    return sorted(found, key=lambda v: v.relative)


def not_prose(name: str) -> str | None:
    """The rule naming ``name`` a file that is not documentation (a whole-name match), or None."""
    return next((rule for rule, pattern in NOT_PROSE.items() if pattern.match(name)), None)


def is_foreign(relative: str) -> bool:
    parts = re.split(r"[/._-]", relative.lower())
    joined = re.split(r"[/.]", relative.lower().replace("-", "_"))
    return bool(FOREIGN.intersection(parts) or FOREIGN.intersection(joined))


def _top_level(root: Path):
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.is_file(follow_symlinks=False) and files.plain(entry.name):  # as files.tree: printable names only
            yield _top_verdict(Path(entry.path), entry.name)


def _top_verdict(path: Path, name: str) -> Verdict:
    if README.match(name):
        kind = "readme"
    elif CHANGELOG.match(name):
        kind = "changelog"
    elif Path(name).suffix.lower() not in PROSE_SUFFIXES - {""}:
        return Verdict(name, None, "not a prose suffix")
    elif not_prose(name):
        return Verdict(name, None, not_prose(name))
    else:
        kind = "readme"
    return Verdict(name, kind, None) if (rule := _unreadable(path)) is None else Verdict(name, None, rule)


def _walk(root: Path, top: Path, source_type: str):
    if top.is_symlink() or not top.is_dir():
        return
    for path in files.tree(top, skip=frozenset({"ri"})):
        relative = path.relative_to(root).as_posix()
        yield Verdict(relative, None, rule) if (rule := _tree_rule(path)) else Verdict(relative, source_type)


def _tree_rule(path: Path) -> str | None:
    """Why a file under doc/, docs/ or guides/ is not prose, or None."""
    name = path.name
    if path.suffix.lower() not in PROSE_SUFFIXES:
        return "not a prose suffix"
    if not_prose(name):
        return not_prose(name)
    if path.suffix == "" and not name.isupper():  # bare names only when they look like README-style docs
        return "bare name not in capitals"
    return _unreadable(path)


def _unreadable(path: Path) -> str | None:
    try:
        if path.stat().st_size > MAX_BYTES:
            return "over 2 MiB"
    except OSError:
        return "unreadable"
    return None if is_text(path) else "binary"


def is_text(path: Path) -> bool:
    try:
        head = path.open("rb").read(8192)
    except OSError:
        return False
    if b"\0" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start > len(head) - 4  # a multibyte character cut by the 8 KiB window
    return True

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
NOT_PROSE = re.compile(r"^(license|licence|copying|mit-license|manifest|gemfile|rakefile|code_of_conduct)", re.I)
FOREIGN = {"ja", "jp", "ja_jp", "zh", "cn", "zh_cn", "zh_tw", "tw", "ko", "kr", "ko_kr"}
TREES = {"guides": "guides", "doc": "doc", "docs": "doc"}


@dataclass(frozen=True)
class ProseFile:
    path: Path  # absolute
    relative: str  # relative to the gem root, "/"-separated
    source_type: str  # readme | guides | doc | changelog


def discover(root: Path, all_languages: bool = False) -> list[ProseFile]:
    found = list(_top_level(root))
    for tree, source_type in TREES.items():
        found.extend(_walk(root, root / tree, source_type))
    keep = [f for f in found if all_languages or not is_foreign(f.relative)]
    return sorted(keep, key=lambda f: f.relative)


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
        if not _readable_file(entry):
            continue
        name = entry.name
        if README.match(name):
            kind = "readme"
        elif CHANGELOG.match(name):
            kind = "changelog"
        elif Path(name).suffix.lower() in PROSE_SUFFIXES - {""} and not NOT_PROSE.match(name):
            kind = "readme"
        else:
            continue
        if is_text(Path(entry.path)):
            yield ProseFile(Path(entry.path), name, kind)


def _walk(root: Path, top: Path, source_type: str):
    if top.is_symlink() or not top.is_dir():
        return
    for path in files.tree(top, skip=frozenset({"ri"})):
        name = path.name
        if path.suffix.lower() not in PROSE_SUFFIXES or NOT_PROSE.match(name):
            continue
        if path.suffix == "" and not name.isupper():  # bare names only when they look like README-style docs
            continue
        if path.stat().st_size <= MAX_BYTES and is_text(path):
            yield ProseFile(path, path.relative_to(root).as_posix(), source_type)


def _readable_file(entry: os.DirEntry) -> bool:
    return entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_size <= MAX_BYTES


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

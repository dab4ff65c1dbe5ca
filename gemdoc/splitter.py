"""Split Markdown and RDoc prose into heading-scoped chunks.

Each chunk is titled by its heading ancestry; a section longer than the target
is split on paragraph boundaries near TARGET characters with a " · i/n" suffix.
No text is dropped: every non-blank line of the input lands in some chunk.
"""

import re
from dataclasses import dataclass

from gemdoc.chunk import Chunk

TARGET = 1500
# A longer line is text, never a heading: a heading is repeated in the title of every chunk under it, so one of a
# megabyte in a gem's README (untrusted) would make gigabytes of titles. Real ones are under 150 characters.
MAX_HEADING = 400
# A heading's opening; its title is the rest of the line less what closes it (_atx, _rdoc): a lazy title
# before a closing run in one pattern, `(.+?)[ \t#]*$`, takes time square in a line's length.
ATX_OPEN = re.compile(r"^ {0,3}(#{1,6})([ \t]+)")
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
RDOC_OPEN = re.compile(r"^(={1,6})([ \t]*)")
FENCE = re.compile(r"^ {0,3}(```|~~~)")


@dataclass
class Section:
    path: list[str]
    line: int  # 1-based line of the section's first line (its heading, if any)
    lines: list[str]


def flavour(filename: str) -> str:
    lower = filename.lower()
    if lower.endswith(".rdoc"):
        return "rdoc"
    if lower.endswith((".md", ".markdown")):
        return "markdown"
    return "markdown" if not lower.endswith(".txt") else "text"


def sections(text: str, kind: str) -> list[Section]:
    lines = text.splitlines()
    result = [Section([], 1, [])]
    stack: list[tuple[int, str]] = []
    fenced = False
    for index, line in enumerate(lines):
        heading = None
        if kind == "markdown":
            if FENCE.match(line):
                fenced = not fenced
            elif not fenced and len(line) <= MAX_HEADING:
                heading = _markdown_heading(line, lines, index, result[-1])
        elif kind == "rdoc" and len(line) <= MAX_HEADING:
            found = _rdoc(line)
            heading = found if found and found[1].strip("=") else None
        if heading is None:
            result[-1].lines.append(line)
            continue
        level, title = heading
        stack = [(lvl, t) for lvl, t in stack if lvl < level] + [(level, _clean(title))]
        result.append(Section([t for _, t in stack], index + 1, []))
    return [s for s in result if s.path or any(l.strip() for l in s.lines)]


def _markdown_heading(line: str, lines: list[str], index: int, current: Section) -> tuple[int, str] | None:
    found = _atx(line)
    if found:
        return found
    nxt = lines[index + 1] if index + 1 < len(lines) else ""
    if line.strip() and not line.startswith("    ") and SETEXT.match(nxt) and _setext_allowed(current, line):
        lines[index + 1] = ""  # the underline belongs to the heading
        return (1 if nxt.strip().startswith("=") else 2), line.strip()
    return None


def _atx(line: str) -> tuple[int, str] | None:
    """A Markdown ATX heading's level and title, as ``^ {0,3}(#{1,6})[ \t]+(.+?)[ \t#]*$`` matches them: the
    title is the shortest start of the rest that leaves only spaces, tabs and ``#`` after it."""
    opening = ATX_OPEN.match(line)
    if not opening:
        return None
    level, space, rest = len(opening[1]), opening[2], line[opening.end() :]
    if rest:
        return level, rest.rstrip(" \t#") or rest[0]
    return (level, space[-1]) if len(space) > 1 else None


def _rdoc(line: str) -> tuple[int, str] | None:
    """An RDoc heading's level and title, as ``^(={1,6})[ \t]*(.+?)[ \t]*$`` matches them."""
    opening = RDOC_OPEN.match(line)
    if not opening:
        return None
    level, space, rest = len(opening[1]), opening[2], line[opening.end() :]
    if rest:
        return level, rest.rstrip(" \t")
    if space:
        return level, space[-1]
    return (level - 1, "=") if level > 1 else None


def _setext_allowed(current: Section, line: str) -> bool:
    """A setext heading is one line of text after a blank line, not a table or list item."""
    previous = current.lines[-1] if current.lines else ""
    return (not previous.strip() or bool(FENCE.match(previous))) and not line.lstrip().startswith(("-", "*", "|", ">", "+"))


def _clean(title: str) -> str:
    title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)  # [text](link) -> text
    return re.sub(r"[*_`]+", "", title).strip() or title.strip()


def split_long(body: str, target: int = TARGET) -> list[str]:
    """Pieces near ``target`` characters, cut between paragraphs (lines if one paragraph is too long)."""
    if len(body) <= target:
        return [body]
    pieces: list[str] = []
    current = ""
    for block in _blocks(body, target):
        if current and len(current) + len(block) + 2 > target:
            pieces.append(current)
            current = block
        else:
            current = f"{current}\n\n{block}" if current else block
    if current:
        pieces.append(current)
    return pieces


def _blocks(body: str, target: int):
    for paragraph in re.split(r"\n\s*\n", body):
        if not paragraph.strip():
            continue
        if len(paragraph) <= target:
            yield paragraph
            continue
        chunk = ""
        for line in paragraph.split("\n"):
            while len(line) > target:  # a single enormous line: cut it hard
                yield from ([chunk] if chunk else [])
                chunk = ""
                yield line[:target]
                line = line[target:]
            if chunk and len(chunk) + len(line) + 1 > target:
                yield chunk
                chunk = line
            else:
                chunk = f"{chunk}\n{line}" if chunk else line
        if chunk:
            yield chunk


def chunk_document(text: str, relative: str, source_type: str) -> list[Chunk]:
    """All chunks of one prose file, titled by heading ancestry."""
    found = sections(text, flavour(relative))
    chunks: list[Chunk] = []
    for index, section in enumerate(found):
        body = "\n".join(section.lines).strip("\n")
        if not body.strip() and _has_children(section, found[index + 1 :]):
            continue  # its heading lives on in its children's titles
        heading = " > ".join(section.path) if section.path else relative
        pieces = split_long(body)
        for number, piece in enumerate(pieces, start=1):
            suffix = f" · {number}/{len(pieces)}" if len(pieces) > 1 else ""
            chunks.append(
                Chunk(
                    source_type=source_type,
                    title=f"{heading}{suffix}",
                    heading=heading,
                    body=piece,
                    file=relative,
                    line=section.line,
                    kind="section",
                    name=(section.path[-1] if section.path else relative).lower(),
                )
            )
    return chunks


def _has_children(section: Section, later: list[Section]) -> bool:
    return bool(later) and later[0].path[: len(section.path)] == section.path and len(later[0].path) > len(section.path)

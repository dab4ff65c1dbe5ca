"""Methods a gem declares to YARD in comments, which RDoc never sees.

DSL methods made by ``define_method`` or delegation are often documented with a YARD
directive instead of a ``def``: ``# @!method create(name, *traits)`` in factory_bot,
``# @method allow_any_instance_of`` in rspec-mocks, ``# @!method self.define(name)`` in
rspec-expectations. Each becomes a method entry of the innermost class or module the
comment sits in (from the source's symbols), cited at the directive's line. Its docstring is
the prose that opens the comment, above any directive, then the comment lines that follow the
directive up to the next directive or the comment's end; directives stacked on consecutive lines
share the lines under the last (Capybara's ``assert_content`` and ``assert_text``).
A name RDoc already documents is left to RDoc, and so are the ``$1`` names of a macro.
"""

import re
import textwrap
from collections.abc import Iterable

from gemdoc import files, symbols
from gemdoc.chunk import Chunk
from gemdoc.prose import MAX_BYTES  # the cap on any file gemdoc reads
# Written at the start of its comment (``# @!method``): one indented under another directive or a class's
# docstring (``#   @!method``, concurrent-ruby's macros) belongs to an object this file does not open.
DIRECTIVE = re.compile(r"^\s*+# ?@!?method\s++(self\.)?([A-Za-z_]\w*+[?!=]?)\s*+(\(.*\))?\s*+$")  # possessive: linear
COMMENT = re.compile(r"^\s*#(?!!)(.*)$")  # not a shebang-like ``#!``
SCOPE_TAG = re.compile(r"^\s*@!(?:scope|visibility)\b")
END = re.compile(r"^(\s*)end\b")
VISIBILITY = re.compile(r"^\s*+(private|protected|public)\s*+(?:#.*)?$")  # bare: the methods after it
# A tag line, not prose that names the tag; blanks, not \s, so that no match runs over empty lines (quadratic)
VISIBILITY_TAG = re.compile(r"^[ \t]*@!visibility[ \t]+(private|protected|public)\b", re.M)
SCOPE_CLASS_TAG = re.compile(r"^[ \t]*@!scope[ \t]+class\b", re.M)
SINGLETON_OPEN = re.compile(r"^(\s*)class\s*<<\s*self\s*(?:#.*)?$")  # not ``class << self; attr_x :y; end``


def declared(root, sources: Iterable[str], syms: list[dict], documented: set[str]) -> list[Chunk]:
    """The method entries the YARD directives in ``sources`` (Ruby files, relative to ``root``)
    declare, except those whose full name is in ``documented``."""
    spans = _namespaces(syms)
    found: list[Chunk] = []
    for rel in sources:
        if not rel.endswith(".rb") or not spans.get(rel):
            continue
        path = files.within(root, rel)
        try:
            text = files.read_capped(path, MAX_BYTES).decode("utf-8", "replace") if path else ""
        except (OSError, ValueError):
            continue
        if "@method" not in text and "@!method" not in text:
            continue  # most files: no directive, and no walk for ``class << self``
        lines = [line.removesuffix("\r") for line in text.split("\n")]  # Ruby's line numbers: \n only
        for chunk in _directives(lines, rel, spans[rel]):
            if chunk.title not in documented:
                documented.add(chunk.title)
                found.append(chunk)
    return found


def _namespaces(syms: list[dict]) -> dict[str, list[tuple[int, int, str]]]:
    """Per file, each class or module opening as (first line, last line, full name)."""
    spans: dict[str, list[tuple[int, int, str]]] = {}
    for sym in syms:
        if sym["kind"] in ("class", "module") and sym.get("line") and sym.get("end_line"):
            spans.setdefault(sym["file"], []).append((sym["line"], sym["end_line"], symbols.full_name(sym)))
    return spans


def _owners(spans: list[tuple[int, int, str]], numbers: list[int]) -> dict[int, tuple[int, int, str]]:
    """The innermost class or module span whose body holds each of the ascending line ``numbers``, in
    one sweep over a stack (a parser's spans nest; of two opened on one line, the inner ends first)."""
    ordered, opened, owners, i = sorted(spans, key=lambda span: (span[0], -span[1])), [], {}, 0
    for number in numbers:
        while i < len(ordered) and ordered[i][0] < number:
            opened.append(ordered[i])
            i += 1
        while opened and opened[-1][1] <= number:
            opened.pop()
        if opened:
            owners[number] = opened[-1]
    return owners


def _directives(lines: list[str], rel: str, spans: list[tuple[int, int, str]]) -> list[Chunk]:
    """The entries of one file. A directive in ``class << self``, written ``self.name`` or with
    ``@!scope class`` declares a class method; one after a bare ``private`` (an instance method, as
    in Ruby) or with its own ``@!visibility private`` tag line is no API (one after ``protected`` is,
    and says so), nor is ``initialize`` or a directive with no text at all. Each line is walked a
    bounded number of times (a ``path:`` gem's file must not take quadratic time), and the entries'
    text together is at most the file's size, since stacked directives share theirs (0.71 at most in gems)."""
    found = [DIRECTIVE.match(line) for line in lines]
    singleton, starts, ends = _singleton_lines(lines), _comment_starts(lines), _stack_ends(found)
    marks = [n for n, line in enumerate(lines, start=1) if found[n - 1] or VISIBILITY.match(line)]
    owners = _owners(spans, marks)  # of each directive and each bare ``private``, in one sweep
    sections = _sections(lines, owners, singleton)
    budget = sum(len(line) + 1 for line in lines)
    leads: dict[int, str] = {}
    texts: dict[int, tuple[str, str | None, bool]] = {}
    chunks = []
    for number, owner in owners.items():
        if not (match := found[number - 1]):
            continue  # a ``private`` line
        if ends[number] not in texts:  # a stack of directives shares the text under its last
            own = _docstring(lines, found, ends[number])
            tag = VISIBILITY_TAG.search(own)
            texts[ends[number]] = (_without_tags(own), tag[1] if tag else None, bool(SCOPE_CLASS_TAG.search(own)))
        own, tagged, class_scope = texts[ends[number]]
        class_method = bool(match[1]) or class_scope or singleton[number]
        section = sections[number] if singleton[number] or not class_method else "public"  # a bare keyword's reach
        visibility = tagged or section
        if visibility == "private" or match[2] == "initialize":
            continue  # ::new is RDoc's, its class often a constant
        if starts[number] not in leads:
            leads[starts[number]] = _lead(lines, starts[number])
        if not (body := "\n\n".join(part for part in (leads[starts[number]], own) if part)):
            continue  # nothing to read (RuboCop's node matchers)
        if (budget := budget - len(body)) < 0:
            break
        chunks.append(_entry(owner[2], match, class_method, body, rel, number, visibility))
    return chunks


def _sections(lines: list[str], owners: dict[int, tuple[int, int, str]], singleton: list[bool]) -> list[str]:
    """For each line number, the visibility a directive there gets from the last bare ``private``,
    ``protected`` or ``public`` before it in the same class or module body (``owners``: of the directives
    and those lines, ascending), on the same side of ``class << self``, as Ruby's methods would."""
    state: dict[tuple, str] = {}
    sections = ["public"] * (len(lines) + 1)
    for number, owner in owners.items():
        where = (owner, singleton[number])
        if keyword := VISIBILITY.match(lines[number - 1]):
            state[where] = keyword[1]
        else:
            sections[number] = state.get(where, "public")
    return sections


def _entry(owner: str, match: re.Match, singleton: bool, body: str, rel: str, number: int, visibility: str) -> Chunk:
    name, params = match[2], match[3] or ""
    title = f"{owner}::{name}" if singleton else f"{owner}#{name}"
    return Chunk(source_type="ri", title=title, heading=title, body=body, file=rel, line=number,
                 signature=f"{name}{params}", kind="method", name=name.lower(),
                 visibility="protected" if visibility == "protected" else "")  # fmt: skip


def _comment_starts(lines: list[str]) -> list[int]:
    """For each line number (index; 0 unused), the first line of the run of comment lines it is in."""
    starts = [0] * (len(lines) + 1)
    for number, line in enumerate(lines, start=1):
        starts[number] = starts[number - 1] if number > 1 and COMMENT.match(lines[number - 2]) else number
    return starts


def _stack_ends(found: list[re.Match | None]) -> list[int]:
    """For each line number, the last of the directives (``found``) stacked on consecutive lines from it:
    stacked names (Capybara's ``assert_content`` over ``assert_text``) share the text under the last."""
    ends = list(range(len(found) + 2))
    for number in range(len(found) - 1, 0, -1):
        if found[number - 1] and found[number]:
            ends[number] = ends[number + 1]
    return ends


def _lead(lines: list[str], first: int) -> str:
    """The prose that opens the comment starting on line ``first``, above its first directive or tag
    (Capybara's ``# Assert text exists`` over four stacked assertions)."""
    text = []
    for index in range(first - 1, len(lines)):
        comment = COMMENT.match(lines[index])
        if not comment or comment[1].lstrip().startswith("@"):
            break  # a directive or tag: what follows is no longer the opening prose
        if comment[1].strip() != "#":  # RDoc's ``##`` that opens a comment
            text.append(comment[1])
    return textwrap.dedent("\n".join(text)).strip("\n").rstrip()


def _without_tags(text: str) -> str:
    """``text`` without the YARD lines that only steer the directive (``@!scope``, ``@!visibility``)."""
    kept = [line for line in text.split("\n") if not SCOPE_TAG.match(line)]
    return "\n".join(kept).strip("\n")


def _singleton_lines(lines: list[str]) -> list[bool]:
    """For each line number, whether it is inside a ``class << self`` block, which ends at the first
    ``end`` at its indentation (gems' code is conventionally indented)."""
    depth, opened = [0] * (len(lines) + 2), {}
    for number, line in enumerate(lines, start=1):
        if start := SINGLETON_OPEN.match(line):
            opened.setdefault(start[1], []).append(number)
        elif (end := END.match(line)) and end[1] in opened:
            for first in opened.pop(end[1]):
                depth[first + 1] += 1
                depth[number] -= 1
    inside, running = [False] * (len(lines) + 1), 0
    for number in range(1, len(lines) + 1):
        running += depth[number]
        inside[number] = running > 0
    return inside


def _docstring(lines: list[str], found: list[re.Match | None], number: int) -> str:
    """The comment lines after the directive on line ``number``, to the next directive (``found``) or the
    comment's end, their common indentation removed."""
    body: list[str] = []
    for index in range(number, len(lines)):
        comment = COMMENT.match(lines[index])
        if not comment or found[index]:
            break
        body.append(comment[1])
    return textwrap.dedent("\n".join(body)).strip("\n").rstrip()

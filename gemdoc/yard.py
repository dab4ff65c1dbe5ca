"""Methods a gem declares to YARD in comments, which RDoc never sees.

DSL methods made by ``define_method`` or delegation are often documented with a YARD
directive instead of a ``def``: ``# @!method create(name, *traits)`` in factory_bot,
``# @method allow_any_instance_of`` in rspec-mocks, ``# @!method self.define(name)`` in
rspec-expectations. Each becomes a method entry of the innermost class or module the
comment sits in (from the source's symbols), its docstring the comment lines that follow
the directive up to the next directive or the block's end, cited at the directive's line.
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
DIRECTIVE = re.compile(r"^\s*# ?@!?method\s+(self\.)?([A-Za-z_]\w*[?!=]?)\s*(\(.*\))?\s*$")
COMMENT = re.compile(r"^\s*#(?!!)(.*)$")  # not a shebang-like ``#!``
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


def _owner(spans: list[tuple[int, int, str]], line: int) -> str | None:
    """The innermost class or module whose body holds ``line``."""
    inside = [(first, full) for first, last, full in spans if first < line < last]
    return max(inside)[1] if inside else None


def _directives(lines: list[str], rel: str, spans: list[tuple[int, int, str]]) -> list[Chunk]:
    """The entries of one file. A directive in ``class << self``, written ``self.name`` or with
    ``@!scope class`` declares a class method; one with ``@!visibility private`` is no API, nor is
    ``initialize`` or a directive with no text of its own."""
    singleton_spans = _singleton_spans(lines)
    chunks = []
    for number, line in enumerate(lines, start=1):
        match = DIRECTIVE.match(line)
        owner = _owner(spans, number) if match else None
        if not match or not owner:
            continue
        name, params, body = match[2], match[3] or "", _docstring(lines, number)
        if not body.strip() or "@!visibility private" in body or name == "initialize":
            continue  # nothing to read (RuboCop's node matchers); ::new is RDoc's, its class often a constant
        singleton = bool(match[1]) or "@!scope class" in body or any(a < number < b for a, b in singleton_spans)
        title = f"{owner}::{name}" if singleton else f"{owner}#{name}"
        chunks.append(Chunk(source_type="ri", title=title, heading=title, body=body, file=rel, line=number,
                            signature=f"{name}{params}", kind="method", name=name.lower()))  # fmt: skip
    return chunks


def _singleton_spans(lines: list[str]) -> list[tuple[int, int]]:
    """Each ``class << self`` block as (its line, its ``end``'s line), the ``end`` found at the same
    indentation (gems' code is conventionally indented)."""
    spans = []
    for number, line in enumerate(lines, start=1):
        if opened := SINGLETON_OPEN.match(line):
            end = re.compile(rf"^{opened[1]}end\b")
            close = next((n for n in range(number + 1, len(lines) + 1) if end.match(lines[n - 1])), None)
            if close:
                spans.append((number, close))
    return spans


def _docstring(lines: list[str], number: int) -> str:
    """The comment lines after the directive on line ``number``, to the next directive or the block's end,
    their common indentation removed."""
    body: list[str] = []
    for line in lines[number:]:
        comment = COMMENT.match(line)
        if not comment or DIRECTIVE.match(line):
            break
        body.append(comment[1])
    return textwrap.dedent("\n".join(body)).strip("\n").rstrip()

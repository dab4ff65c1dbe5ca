"""The unit gemdoc stores and returns: one passage with its citation."""

import hashlib
import re
from dataclasses import dataclass

SOURCE_TYPES = ("ri", "readme", "guides", "doc", "changelog")


@dataclass
class Chunk:
    source_type: str
    title: str  # ri full name, or the heading ancestry (with " · i/n" when split)
    heading: str  # what "one citation" means: ri full name, or heading ancestry
    body: str
    file: str | None  # relative to the gem root
    line: int | None
    signature: str = ""
    kind: str = ""  # class | module | method | attribute | section
    name: str = ""  # lower-cased short name, for exact identifier lookup
    end_line: int | None = None
    visibility: str = ""  # an ri method's or attribute's when not public: protected | private

    def names(self, gem: str) -> str:
        """The words inside the title's identifiers, plus the gem's name: ``ConnectionPool#with``
        tokenizes to ``connectionpool`` and ``with``; this adds ``connection pool``."""
        return identifier_words(f"{self.title} {gem}")

    @property
    def digest(self) -> str:
        """Covers the location too: a definition that moved is a changed chunk."""
        parts = (self.source_type, self.title, self.heading, self.body, self.file or "", str(self.line), self.signature)
        return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def identifier_words(text: str) -> str:
    """Split CamelCase and snake_case identifiers into lower-case words, in order, once each."""
    words: dict[str, None] = {}
    for token in re.findall(r"[A-Za-z0-9]+", text):
        for part in CAMEL.findall(token):
            words.setdefault(part.lower(), None)
    return " ".join(words)


def passages(chunks: list[Chunk]) -> list[tuple[int, int]]:
    """The positions (first, last) of each run of two or more consecutive chunks cut from one passage:
    a long ri comment's sections (ri, one title) or a long section's pieces (one heading), of one
    kind at one location (a method and an attribute of one name are two passages). ``show`` prints
    such a run whole, and the evidence gate weighs an ri comment's run as one passage."""
    runs: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(chunks) + 1):
        if i == len(chunks) or _passage_key(chunks[i]) != _passage_key(chunks[start]):
            if i - start > 1:
                runs.append((start, i - 1))
            start = i
    return runs


def _passage_key(chunk: Chunk) -> tuple:
    return chunk.source_type, chunk.kind, chunk.file, chunk.line, chunk.title if chunk.source_type == "ri" else chunk.heading

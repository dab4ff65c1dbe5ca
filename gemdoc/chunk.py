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

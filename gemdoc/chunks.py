"""The unit gemdoc stores and returns: one passage with its citation."""

import hashlib
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

    @property
    def digest(self) -> str:
        """Covers the location too: a definition that moved is a changed chunk."""
        parts = (self.source_type, self.title, self.heading, self.body, self.file or "", str(self.line), self.signature)
        return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()

"""Stable addresses for results: ``gemdoc://GEM@VERSION/PATH#L12``.

A chunk with a source line is addressed by its file and line; one without a line by its
title (``gemdoc://rack@3.0.0/lib/rack/utils.rb#Rack::Utils.escape``), one without a file
by ``-`` as its path. Addresses name content, not row ids, so they survive a reindex.
"""

import re
from dataclasses import dataclass
from urllib.parse import quote, unquote

from gemdoc.errors import GemdocError

SCHEME = "gemdoc://"
PATTERN = re.compile(r"^gemdoc://(?P<gem>[^@/\s]+)@(?P<version>[^/\s]+)/(?P<path>[^#]*)#(?P<fragment>.+)$")


@dataclass(frozen=True)
class Address:
    gem: str
    version: str
    path: str | None  # None: the chunk has no file
    line: int | None
    title: str | None


def make(gem: str, version: str, path: str | None, line: int | None, title: str) -> str:
    fragment = f"L{line}" if path and line else quote(title, safe=":.?!=_-")
    return f"{SCHEME}{gem}@{version}/{quote(path or '-', safe='/._-+')}#{fragment}"


def parse(text: str) -> Address:
    match = PATTERN.match(text.strip())
    if not match:
        raise GemdocError(f"not a gemdoc URI: {text[:200]!r} (expected gemdoc://GEM@VERSION/PATH#L12)")
    path = unquote(match["path"])
    fragment = match["fragment"]
    line = int(fragment[1:]) if re.fullmatch(r"L\d{1,9}", fragment) else None
    return Address(match["gem"], match["version"], None if path in ("", "-") else path, line,
                   None if line else unquote(fragment))  # fmt: skip

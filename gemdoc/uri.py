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
MAX_CHARS = 2048  # far above any address gemdoc makes; a longer one is refused, never echoed
PATTERN = re.compile(r"^gemdoc://(?P<gem>[^@/\s]+)@(?P<version>[^/\s]+)/(?P<path>[^#]*)#(?P<fragment>.+)$")


class BadAddress(GemdocError):
    """The URI given to `show` is not one gemdoc makes: a usage error."""

    exit_code = 2


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


def shorten(text: str, limit: int = 120) -> str:
    """``text`` for an error message: at most ``limit`` characters, control characters escaped."""
    cut = text if len(text) <= limit else f"{text[:limit]}…"
    return repr(cut)[1:-1]


def parse(text: str) -> Address:
    """The address in ``text``; BadAddress (exit 2) when it is not one gemdoc could have made."""
    if len(text) > MAX_CHARS:
        raise BadAddress(f"a URI of {len(text)} characters is not a gemdoc URI (at most {MAX_CHARS}): check it")
    match = PATTERN.match(text.strip())
    if not match:
        raise BadAddress(f"not a gemdoc URI: '{shorten(text)}' (expected gemdoc://GEM@VERSION/PATH#L12)")
    path = unquote(match["path"])
    fragment = match["fragment"]
    if any(ord(c) < 32 or 0xD800 <= ord(c) <= 0xDFFF for c in path + unquote(fragment)):
        raise BadAddress(f"'{shorten(text)}' holds a control character or invalid text (such as %00): check the URI")
    line = int(fragment[1:]) if re.fullmatch(r"L\d{1,9}", fragment) else None
    return Address(match["gem"], match["version"], None if path in ("", "-") else path, line,
                   None if line else unquote(fragment))  # fmt: skip

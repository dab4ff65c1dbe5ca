"""Join ri entries to source definitions so an API result carries file:line.

A method is matched on (owner, name, singleton); failing that, on (file, name,
singleton) when exactly one definition in ri's own file has that name. A class or
module with a comment is cited where RDoc read it (``ActionController::Live`` in
metal/live.rb, not the test helper that reopens it): at its opening in that file,
or at the file alone when nothing opens it there in Ruby (a class documented in
C); one without, at its first definition. Anything else keeps no location: an
invented citation is worse than an absent one.
"""

from collections import defaultdict
from dataclasses import dataclass, field

Key = tuple[str, str, bool]


@dataclass
class Definitions:
    by_owner: dict[Key, dict] = field(default_factory=dict)  # a method's first definition; a namespace's at ""
    by_file: dict[Key, list[dict]] = field(default_factory=lambda: defaultdict(list))  # methods by file and name
    namespaces: dict[tuple[str, str], dict] = field(default_factory=dict)  # (full name, file): its first opening there


def index(symbols: list[dict]) -> Definitions:
    found = Definitions()
    for sym in symbols:
        if sym["kind"] in ("class", "module"):
            full = full_name(sym)
            found.by_owner.setdefault((full, "", False), sym)
            found.namespaces.setdefault((full, sym["file"]), sym)
            continue
        found.by_owner.setdefault((sym["owner"], sym["name"], bool(sym["singleton"])), sym)
        found.by_file[(sym["file"], sym["name"], bool(sym["singleton"]))].append(sym)
    return found


def full_name(namespace: dict) -> str:
    """A class or module symbol's full name (``Outer::Inner``)."""
    return f"{namespace['owner']}::{namespace['name']}" if namespace["owner"] else namespace["name"]


def locate(entry: dict, defs: Definitions) -> dict | None:
    """The definition an ri entry documents, or None when it cannot be told."""
    if entry["kind"] in ("class", "module"):
        if entry.get("comment") and entry.get("file"):  # a C Document-class opens nothing in Ruby there
            return defs.namespaces.get((entry["full_name"], entry["file"]))
        return defs.by_owner.get((entry["full_name"], "", False))
    key = (entry.get("owner") or "", entry["name"], bool(entry.get("singleton")))
    if key[1:] == ("new", True) and key not in defs.by_owner:  # Foo::new is written as Foo#initialize
        key = (key[0], "initialize", False)
    found = defs.by_owner.get(key)
    if found:
        return found
    candidates = defs.by_file.get((entry.get("file") or "", entry["name"], bool(entry.get("singleton"))), [])
    return candidates[0] if len(candidates) == 1 else None

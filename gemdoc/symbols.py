"""Join ri entries to source definitions so an API result carries file:line.

A method is matched on (owner, name, singleton); failing that, on (file, name,
singleton) when exactly one definition in ri's own file has that name. Anything
else keeps no location: an invented citation is worse than an absent one.
"""

from collections import defaultdict

Key = tuple[str, str, bool]


def index(symbols: list[dict]) -> tuple[dict[Key, dict], dict[Key, list[dict]]]:
    by_owner: dict[Key, dict] = {}
    by_file: dict[Key, list[dict]] = defaultdict(list)
    for sym in symbols:
        if sym["kind"] in ("class", "module"):
            full = f"{sym['owner']}::{sym['name']}" if sym["owner"] else sym["name"]
            by_owner.setdefault((full, "", False), sym)
            continue
        by_owner.setdefault((sym["owner"], sym["name"], bool(sym["singleton"])), sym)
        by_file[(sym["file"], sym["name"], bool(sym["singleton"]))].append(sym)
    return by_owner, by_file


def locate(entry: dict, by_owner: dict[Key, dict], by_file: dict[Key, list[dict]]) -> dict | None:
    """The definition an ri entry documents, or None when it cannot be told."""
    if entry["kind"] in ("class", "module"):
        return by_owner.get((entry["full_name"], "", False))
    key = (entry.get("owner") or "", entry["name"], bool(entry.get("singleton")))
    if key[1:] == ("new", True) and key not in by_owner:  # Foo::new is written as Foo#initialize
        key = (key[0], "initialize", False)
    found = by_owner.get(key)
    if found:
        return found
    candidates = by_file.get((entry.get("file") or "", entry["name"], bool(entry.get("singleton"))), [])
    return candidates[0] if len(candidates) == 1 else None

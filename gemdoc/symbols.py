"""Join ri entries to source definitions so an API result carries file:line.

A method is matched on (owner, name, singleton); failing that, on (file, name,
singleton) when exactly one definition in ri's own file has that name; a module function
(``module_function``) is matched as the module method and as the instance method it also is. A class or
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
        kinds = (False, True) if sym.get("module_function") else (bool(sym["singleton"]),)  # a module function is both
        for singleton in kinds:
            found.by_owner.setdefault((sym["owner"], sym["name"], singleton), sym)
            found.by_file[(sym["file"], sym["name"], singleton)].append(sym)
    return found


def resolve(symbols: list[dict]) -> list[dict]:
    """The shim's symbols with each method defined on a constant (``def ContentTypeField.with_boundary``,
    or inside ``class << ContentTypeField``, in ``module Mail``) under the namespace Ruby finds that
    constant in: through the namespaces open where it is written (``scope``), innermost first, the
    first the gem defines it in (``Mail::ContentTypeField``); as written when the gem defines none there."""
    namespaces = {full_name(sym) for sym in symbols if sym["kind"] in ("class", "module")}
    return [_resolved(sym, namespaces) for sym in symbols]


def _resolved(sym: dict, namespaces: set[str]) -> dict:
    for enclosing in reversed(sym.get("scope") or []):
        candidate = f"{enclosing}::{sym['owner']}"
        if candidate in namespaces:
            return sym | {"owner": candidate}
    return sym


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


def refile(entries: list[dict], defs: Definitions) -> list[dict]:
    """ri entries under the names their source gives them where RDoc lost its place in a file's nesting
    (RDoc 6.4, Ruby 3.1's: after a class opened inside an expression, Thor's ``Thor::Error`` is
    ``Error``; after Sinatra's ``class Stream``, ``Sinatra::Base`` is ``Sinatra::Helpers::Stream::Base``
    and ``Sinatra::Helpers#etag`` is ``Sinatra::Helpers::Stream#etag``). Only where the source is
    unambiguous and the new name is no other entry's: a class or module the source never defines, with
    exactly one namespace of its last name in its file (and everything in it); a method its owner never
    defines, defined exactly once in its file, in a namespace enclosing or enclosed by that owner. And a
    module function RDoc filed as a public instance method under the module method's name (_module_function)."""
    known = {owner for owner, method, _ in defs.by_owner if not method}
    taken = {e["full_name"] for e in entries}
    names = _renamed_namespaces(entries, defs, known, taken)
    refiled = (_module_function(_moved(_renamed(entry, names), defs, known, taken), defs, taken) for entry in entries)
    return [entry for entry in refiled if entry is not None]


def _renamed_namespaces(entries: list[dict], defs: Definitions, known: set[str], taken: set[str]) -> dict[str, str]:
    in_file: dict[str, list[str]] = defaultdict(list)
    for full, file in defs.namespaces:
        in_file[file].append(full)
    names = {}
    for entry in entries:
        full = entry["full_name"]
        if entry["kind"] not in ("class", "module") or full in known or not entry.get("file"):
            continue
        last = full.rpartition("::")[2]
        found = [n for n in in_file.get(entry["file"], []) if n.rpartition("::")[2] == last]
        if len(found) == 1 and found[0] not in taken:
            names[full] = found[0]
    return names


def _renamed(entry: dict, names: dict[str, str]) -> dict:
    """``entry`` under the new name of the namespace it is or lies in (the innermost renamed one)."""
    namespace = entry["kind"] in ("class", "module")
    own = entry["full_name"] if namespace else entry.get("owner") or ""
    inside = [n for n in names if own == n or own.startswith(n + "::")]
    if not inside or not entry["full_name"].startswith(own):
        return entry
    old = max(inside, key=len)
    new = names[old] + own[len(old):]
    return entry | {"full_name": new + entry["full_name"][len(own):]} | ({} if namespace else {"owner": new})


def _module_function(entry: dict, defs: Definitions, taken: set[str]) -> dict | None:
    """A module function as the module method it is called as (``Rack::Utils::escape_html``): RDoc files
    a ``def`` after a bare ``module_function`` as a public instance method, which Ruby makes private.
    None for a method the source makes private where RDoc 6.4 does not read it (``private: true``): the
    module method of a module function ``private_class_method`` names, an alias of a module function
    (Ruby's alias copies the private instance method: RSS's ``alias h html_escape``). RDoc keeps a
    private method out of its store, as it would have kept these had it read them."""
    if entry["kind"] != "method" or entry.get("singleton") or entry.get("visibility") not in (None, "public"):
        return entry
    owner = entry.get("owner") or ""
    where = defs.by_owner.get((owner, entry["name"], False))
    if not where or entry["full_name"] != f"{owner}#{entry['name']}":
        return entry
    if where.get("private"):
        return None
    full = f"{owner}::{entry['name']}"
    if not where.get("module_function") or full in taken:
        return entry
    return entry | {"singleton": True, "full_name": full}


def _moved(entry: dict, defs: Definitions, known: set[str], taken: set[str]) -> dict:
    """A method RDoc filed in a namespace nested in, or enclosing, the one its only definition in its file has."""
    if entry["kind"] not in ("method", "attribute") or entry["name"] == "new":
        return entry
    owner, where = entry.get("owner") or "", locate(entry, defs)  # its owner's definition, else the file's only one
    real = where["owner"] if where else owner
    full = real + entry["full_name"][len(owner):]
    nested = real.startswith(owner + "::") or owner.startswith(real + "::")
    if not nested or real not in known or full in taken or not entry["full_name"].startswith(owner):
        return entry
    return entry | {"owner": real, "full_name": full}

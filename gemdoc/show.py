"""`gemdoc show URI`: the passage a result's URI names, whole, or the source lines around its location."""

import sqlite3
from pathlib import Path

from gemdoc import files, store
from gemdoc.errors import GemdocError, UsageError
from gemdoc.uri import Address

CONTEXT = 12  # source lines shown on each side of a location
MAX_CONTEXT = 200
MAX_PASSAGE = 60_000  # characters of a passage printed at once: the benchmark bundle's longest is 36,000
MAX_LINE = 2_000  # characters of one source line printed: a gem's minified or generated line is not for reading


def entry_of(conn: sqlite3.Connection, address: Address, gems: list[int], project: Path) -> int:
    """The project's own entry for the URI's gem version (``gems``: the project's entry ids)."""
    marks = ",".join("?" * len(gems))
    row = conn.execute(
        f"SELECT id FROM gems WHERE name = ? AND version = ? AND id IN ({marks})", [address.gem, address.version, *gems]
    ).fetchone()
    if row is None:
        raise GemdocError(
            f"{address.gem} {address.version} is not in the index of this project's bundle ({project}): "
            "show reads only gems its Gemfile.lock locks; check the URI, or `gemdoc index`"
        )
    return row[0]


def find_chunk(conn: sqlite3.Connection, address: Address, entry: int) -> sqlite3.Row | None:
    columns = "id, gem, version, source_type, kind, title, heading, signature, body, file, line, end_line"
    if address.line is not None:
        sql, args = "file = ? AND line = ?", [address.path, address.line]
    elif address.path:
        sql, args = "file = ? AND title = ?", [address.path, address.title]
    else:
        sql, args = "file IS NULL AND title = ?", [address.title]
    return conn.execute(
        f"SELECT {columns} FROM chunks WHERE entry = ? AND {sql} ORDER BY source_type != 'ri', id LIMIT 1",
        [entry, *args],
    ).fetchone()


def whole(conn: sqlite3.Connection, row: sqlite3.Row, entry: int) -> str:
    """The text of every chunk cut from the same passage as ``row`` (chunk.passages), in order: the
    pieces of a long section, the sections of a long class or method comment (ri.LONG_COMMENT)."""
    run = None
    if store.has_table(conn, store.PASSAGES):
        run = conn.execute(f"SELECT first, last FROM {store.PASSAGES} WHERE entry = ? AND ? BETWEEN first AND last",
                           [entry, row["id"]]).fetchone()  # fmt: skip
    if run is None:
        return row["body"].strip()
    rows = conn.execute("SELECT body FROM chunks WHERE id BETWEEN ? AND ? ORDER BY id", list(run)).fetchall()
    return "\n\n".join(r[0].strip() for r in rows if r[0].strip())


def window(text: str, offset: int, uri: str) -> str:
    """``text`` whole, or MAX_PASSAGE characters of it from ``offset`` (to the last line end that fits)
    between lines saying where they lie and the ``--offset`` that prints the next: an agent's context
    is not a gem's to fill, and every part of a passage stays one command away."""
    if offset == 0 and len(text) <= MAX_PASSAGE:
        return text
    if offset >= len(text):
        raise UsageError(f"--offset {offset} is past the end of this passage ({len(text):,} characters): "
                         "give a smaller one")  # fmt: skip
    part = text[offset : offset + MAX_PASSAGE]
    newline = part.rfind("\n")
    if offset + len(part) < len(text) and newline > MAX_PASSAGE // 2:
        part = part[:newline]
    end = offset + len(part)
    head = f"[characters {offset:,} to {end:,} of {len(text):,}]\n" if offset else ""
    rest = f"\n\n[cut: the passage is {len(text):,} characters, {offset:,} to {end:,} are shown; " \
           f"`gemdoc show --offset {end} {uri}` prints the next]" if end < len(text) else ""  # fmt: skip
    return head + part + rest


def gem_root(conn: sqlite3.Connection, entry: int) -> Path:
    return Path(conn.execute("SELECT root FROM gems WHERE id = ?", [entry]).fetchone()[0])


def gem_file(conn: sqlite3.Connection, address: Address, entry: int) -> Path:
    """The installed file an address names, only when it is one of the files gemdoc indexed from
    that entry (a chunk cites it, or it defines a method no chunk documents: so a default gem, whose
    root is Ruby's whole lib dir, shows its own files only) and it lies below the gem's root with no
    symlink on the way."""
    root = gem_root(conn, entry)
    path = files.within(root, address.path) if _indexed(conn, entry, address.path) else None
    if path is None:
        raise UsageError(
            f"{address.path[:200]} is not a file of {address.gem} {address.version} that gemdoc indexed: "
            "show --source reads only those; check the URI"
        )
    return path


def _indexed(conn: sqlite3.Connection, entry: int, path: str) -> bool:
    if conn.execute("SELECT 1 FROM chunks WHERE entry = ? AND file = ? LIMIT 1", [entry, path]).fetchone():
        return True
    if not store.has_table(conn, store.UNDOCUMENTED):  # a store written before the table existed
        return False
    sql = f"SELECT 1 FROM {store.UNDOCUMENTED} WHERE entry = ? AND file = ? LIMIT 1"
    return conn.execute(sql, [entry, path]).fetchone() is not None


def source_lines(conn: sqlite3.Connection, address: Address, entry: int, line: int | None, context: int) -> str:
    """Lines ``line - context .. line + context`` of the installed file, numbered."""
    if not address.path:
        raise GemdocError("this result has no source file to show")
    path = gem_file(conn, address, entry)
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    if line is not None and not 1 <= line <= len(lines):
        raise UsageError(f"line {line} is outside {address.path[:200]} (lines 1-{len(lines)}): check the URI's #L")
    context = max(0, min(context, MAX_CONTEXT))
    centre = min(max(line or 1, 1), max(len(lines), 1))
    start, end = max(1, centre - context), min(len(lines), centre + context)
    width = len(str(end))
    body = [f"{'>' if n == line else ' '}{n:>{width}}  {_cut_line(lines[n - 1])}" for n in range(start, end + 1)]
    return f"{address.gem} {address.version} {address.path}:{start}-{end}\n" + "\n".join(body)


def _cut_line(text: str) -> str:
    return text if len(text) <= MAX_LINE else f"{text[:MAX_LINE]} [… {len(text) - MAX_LINE:,} more characters]"


def restricted(visibility: str) -> str:
    """What a title says of an API entry that is not public: it is called from inside its class (and,
    protected, its kind's other objects), overridden, or used in the DSL it belongs to."""
    return f" ({visibility})" if visibility else ""


def chunk_text(row: sqlite3.Row, uri: str, body: str, visibility: str) -> str:
    where = f"{row['file']}:{row['line']}" if row["file"] and row["line"] else row["file"] or "(no source location)"
    title = row["title"] if row["source_type"] == "ri" else row["heading"]  # a section whole, not ``· 2/5``
    title += restricted(visibility)
    head = [title, f"{row['gem']} {row['version']} · {row['source_type']} · {where}", uri]
    if row["signature"] and row["source_type"] == "ri":
        head.append(row["signature"])
    return "\n".join(head) + "\n\n" + body

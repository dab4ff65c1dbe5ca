"""What `gemdoc status` reports, as data: the store, this bundle, and the next command to run."""

import sqlite3
from pathlib import Path

from gemdoc import __version__, cleanup, indexer, lockfile, manifest, paths, plugin, project, store, trust, vectors
from gemdoc.errors import GemdocError


def gather(start: Path) -> dict:
    info: dict = {"gemdoc_version": __version__, "store": str(paths.store_path())}
    info["store_bytes"] = cleanup.store_bytes()
    info["cache"] = str(paths.ri_cache_dir())
    info["cache_bytes"] = cleanup.disk_bytes(paths.ri_cache_dir())
    try:
        root = project.root(start)
    except GemdocError:
        root = None
    info["project"] = str(root) if root else None
    if root:
        _setup_facts(root, info)
    try:
        conn = store.connect(paths.store_path())
    except GemdocError as exc:
        info["store_error"] = str(exc)
        info["next"] = "gemdoc reindex" if "reindex" in str(exc) else "gemdoc index"
        return info
    with conn:
        _store_facts(conn, info)
        if root:
            _project_facts(conn, root, info)
    info["next"] = _next(info)
    return info


def _store_facts(conn: sqlite3.Connection, info: dict) -> None:
    meta = store.read_meta(conn)
    info["schema_version"] = meta.get("schema_version")
    info["store_gemdoc_version"] = meta.get("gemdoc_version")
    info["store_gems"] = conn.execute("SELECT count(*) FROM gems WHERE state = 'complete'").fetchone()[0]
    info["store_chunks"] = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]


def _setup_facts(root: Path, info: dict) -> None:
    """Whether Bundler will run gemdoc's hook here, and whether the hook may act."""
    hook = plugin.state(root)
    info["hook"] = {"armed": hook.armed and not hook.disabled, "index": hook.where, "disabled": hook.disabled}
    info["hook_state"] = hook.describe()
    if not manifest.load(root).auto_index:
        info["hook"]["armed"] = False
        info["hook_state"] = f"off (auto_index: false in {manifest.FILENAME})"
    verdict = trust.verdict(root)
    info["trust"] = {"trusted": verdict.trusted, "how": verdict.how, "reason": verdict.reason}


def _project_facts(conn: sqlite3.Connection, root: Path, info: dict) -> None:
    lock = lockfile.load(lockfile.find(root))
    saved = manifest.load(root)
    info["lockfile_sha256"] = lock.sha256
    info["manifest_sha256"] = saved.lockfile_sha256
    info["scope"] = saved.scope
    try:
        scope = project.scope(conn, root)
    except GemdocError:
        info["indexed"] = False
        return
    info["indexed"] = True
    info["stale"] = scope.stale
    info["outdated"] = _read_by_another_gemdoc(conn, root)
    info["missing"] = scope.missing
    info["changed"] = indexer.changed_copies(root, saved.all_languages)  # the project's own copies, edited since
    info["installed_since"] = indexer.installed_since(root)
    info["not_indexed"] = _not_indexed(root, scope, info)
    _bundle_facts(conn, scope, info)


def _not_indexed(root: Path, scope: project.Scope, info: dict) -> list[dict]:
    """Every locked gem in scope that search cannot answer from, with why and the command that fixes it."""
    absent = {(g["gem"], g["version"]): g["reason"] for g in indexer.absent_gems(root)}
    install = "bundle install" if info.get("hook", {}).get("armed") else "bundle install && gemdoc index"
    listed = []
    for name, version in scope.wanted:
        if (name, version) in scope.entries:
            continue
        if (name, version) in absent and not info["installed_since"]:
            reason, command = absent[(name, version)], install
        elif (name, version) in absent:
            reason, command = "not installed at the last index; gems were installed since", "gemdoc index"
        elif scope.stale:
            reason, command = "Gemfile.lock changed since the last index", "gemdoc index"
        else:
            reason, command = "not indexed yet", "gemdoc index"
        listed.append({"gem": name, "version": version, "reason": reason, "next": command})
    return listed


def _bundle_facts(conn: sqlite3.Connection, scope: project.Scope, info: dict) -> None:
    """This project's own entries: never another project's copy of the same gem versions."""
    ids = [entry for entry, _ in scope.entries.values()]
    marks = ",".join("?" * len(ids))
    every = conn.execute(
        f"SELECT name, version, state, ri_tier, chunks, methods, located, error FROM gems WHERE id IN ({marks})", ids
    ).fetchall()
    rows = [r for r in every if r[2] == "complete"]
    info["bundle_gems"] = len(rows)
    info["bundle_chunks"] = sum(r[4] or 0 for r in rows)
    tiers: dict[str, int] = {}
    for r in rows:
        tiers[r[3] or "none"] = tiers.get(r[3] or "none", 0) + 1
    info["ri_tiers"] = tiers
    methods = sum(r[5] or 0 for r in rows)
    info["ri_methods"] = methods
    info["ri_methods_located"] = sum(r[6] or 0 for r in rows)
    info["failures"] = [
        {"gem": r[0], "version": r[1], "state": r[2], "reason": r[7], "next": "gemdoc index --force"}
        for r in every if r[2] == "failed"
    ]  # fmt: skip
    info["skipped"] = [{"gem": r[0], "version": r[1], "reason": r[7]} for r in every if r[2] == "skipped"]
    complete = [entry for entry, state in scope.entries.values() if state == "complete"]
    info["api_docs_only"] = _api_docs_only(conn, complete)
    info["vectors"] = vectors.embedded(conn, scope.gems)
    info["vector_model"] = vectors.stored_identity(conn) or None


def _read_by_another_gemdoc(conn: sqlite3.Connection, root: Path) -> bool:
    """Whether the project's gems were last read by another extraction than this gemdoc's
    (indexer.EXTRACTOR_VERSION): what this one stores of them (a method's visibility, say) may be
    missing or other until `gemdoc index` reads them again."""
    row = conn.execute("SELECT extractor FROM projects WHERE path = ?", [str(root)]).fetchone()
    return row is not None and row[0] != indexer.EXTRACTOR_VERSION


def _api_docs_only(conn: sqlite3.Connection, entries: list[int]) -> list[str]:
    """The gems (``name version``) with no prose: no README, guide, doc/ file or changelog, only RDoc's
    API entries (Debian's ruby-* packages ship lib/ alone). Each entry's chunks are one id range."""
    sql = ("SELECT g.name || ' ' || g.version FROM gems g WHERE g.id = ? AND NOT EXISTS (SELECT 1 FROM chunks c "
           "WHERE c.id BETWEEN g.first_id AND g.last_id AND c.source_type != 'ri')")
    found = (conn.execute(sql, [entry]).fetchone() for entry in entries)
    return sorted(row[0] for row in found if row)


def _next(info: dict) -> str | None:
    if info.get("project") is None:
        return "cd into a Ruby project (a directory with Gemfile.lock), then `gemdoc index`"
    behind = info.get("stale") or info.get("outdated") or info.get("changed") or info.get("installed_since")
    if not info.get("indexed") or behind:
        return "gemdoc index"
    commands = [g["next"] for g in info.get("not_indexed", [])]
    return min(commands, key=len) if commands else None  # `gemdoc index` before an install


API_ONLY_SHOWN = 8  # the gems without prose the text names; --json lists them all


def text(info: dict) -> str:
    lines = [f"gemdoc:    {info['gemdoc_version']}", f"store:     {info['store']}"]
    if "store_error" in info:
        lines.append(f"           {info['store_error']}")
    else:
        drift = ""
        if info.get("store_gemdoc_version") not in (None, info["gemdoc_version"]):
            drift = f" (written by gemdoc {info['store_gemdoc_version']})"
        lines.append(
            f"           schema {info['schema_version']}{drift} · {info['store_gems']} gems · {info['store_chunks']} chunks"
            f" · {cleanup.human(info['store_bytes'])}"
        )
    size = cleanup.human(info["cache_bytes"])
    lines.append(f"cache:     {info['cache']} · {size} (`gemdoc gc` removes what no project uses)")
    lines.append(f"project:   {info.get('project') or '(none here)'}")
    if info.get("project"):
        trusted = info["trust"]
        lines.append(f"hook:      {info['hook_state']}")
        lines.append(f"trust:     {'trusted (' + trusted['how'] + ')' if trusted['trusted'] else trusted['reason']}")
    if info.get("project") and "store_error" not in info:
        lines.extend(_project_lines(info))
    if info.get("next"):
        lines.append(f"next:      {info['next']}")
    return "\n".join(lines)


def _project_lines(info: dict) -> list[str]:
    if not info.get("indexed"):
        return ["index:     not indexed"]
    state = "stale: Gemfile.lock changed since the last index" if info["stale"] else "matches Gemfile.lock"
    lines = [
        f"lockfile:  {info['lockfile_sha256'][:12]} · {state}",
        f"bundle:    {info['bundle_gems']} gems · {info['bundle_chunks']} chunks · scope {info['scope']}",
    ]
    tiers = ", ".join(f"{k} {v}" for k, v in sorted(info["ri_tiers"].items()))
    located = info["ri_methods_located"]
    methods = info["ri_methods"] or 1
    lines.append(f"ri:        {tiers} · {located}/{info['ri_methods']} methods with file:line ({located / methods:.0%})")
    if info["vectors"]:
        pending = info["bundle_chunks"] - info["vectors"]
        waiting = f" · {pending} pending: `gemdoc embed`" if pending else ""
        lines.append(f"vectors:   {info['vectors']}/{info['bundle_chunks']} chunks{waiting} · {info['vector_model']}")
    else:
        lines.append("vectors:   none (keyword search only); `gemdoc embed` adds semantic search")
    if info["api_docs_only"]:
        gems = info["api_docs_only"]
        more = len(gems) - API_ONLY_SHOWN
        shown = ", ".join(gems[:API_ONLY_SHOWN]) + (f" and {more} more" if more > 0 else "")
        count = f"{len(gems)} gem" + ("s" if len(gems) > 1 else "")
        lines.append(f"prose:     none for {count}, API docs only (no README, guides or changelog in the package): "
                     + shown)
    for failure in info["failures"]:
        lines.append(f"failed:    {failure['gem']} {failure['version']}: {failure['reason']} · next: `{failure['next']}`")
    for skipped in info["skipped"]:
        lines.append(f"skipped:   {skipped['gem']} {skipped['version']}: {skipped['reason']}")
    for gem in info["not_indexed"]:
        lines.append(f"missing:   {gem['gem']} {gem['version']}: {gem['reason']} · next: `{gem['next']}`")
    if info["outdated"]:
        lines.append("extractor: read by another gemdoc version: `gemdoc index` reads its gems again")
    for changed in info["changed"]:
        lines.append(f"changed:   {changed}: its files changed since the last index")
    return lines

"""Which projects may have gemdoc act on their behalf: ``trusted.json`` in the config dir.

A Bundler plugin is code that runs on `bundle install`, and a checked-in ``.gemdoc.yml``
travels with `git clone`; neither may make gemdoc act in a project the user never asked
it to. The first explicit gemdoc command in a project trusts it ("use"); `gemdoc trust`
trusts it on purpose ("explicit"), which also approves the manifest's gated fields and
is what lets the hook index under CI. Changing a gated field voids the approval.
"""

import json
import time
from dataclasses import dataclass
from pathlib import Path

from gemdoc import files, manifest, paths
from gemdoc.errors import GemdocError

EXPLICIT = "explicit"
USE = "use"
NO_GATED_FIELDS = manifest.Manifest().gated_sha256()


@dataclass
class Verdict:
    trusted: bool
    how: str | None = None  # explicit | use
    reason: str | None = None  # why not, one line with the remedy


def trust_file() -> Path:
    return paths.config_dir() / "trusted.json"


def entries() -> dict[str, dict]:
    path = trust_file()
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise GemdocError(f"{path} is unreadable ({type(exc).__name__}): delete it and trust your projects again") from exc
    projects = data.get("projects") if isinstance(data, dict) else None
    return projects if isinstance(projects, dict) else {}


def verdict(project: Path) -> Verdict:
    entry = entries().get(str(project))
    if not entry:
        return Verdict(False, reason=(
            f"{project} is not trusted: your first `gemdoc index` there trusts it, or `gemdoc trust` once you "
            f"have reviewed it (needed when its {manifest.FILENAME} names a model)"
        ))
    if entry.get("gated_sha256") != manifest.load(project).gated_sha256():
        return Verdict(False, entry.get("how"), reason=(
            f"{manifest.FILENAME} in {project} changed {', '.join(manifest.GATED)} since you trusted it: "
            "review it, then run `gemdoc trust` there"
        ))  # fmt: skip
    return Verdict(True, entry.get("how"))


def grant(project: Path, how: str) -> bool:
    """Record trust; True when something changed. An implicit grant never approves gated fields,
    and never turns an explicit approval into an implicit one."""
    known = entries().get(str(project))
    if how == USE and known and known.get("gated_sha256") == NO_GATED_FIELDS:
        return False  # every search calls this: no grant by use can change such an entry, so skip the manifest
    saved = manifest.load(project)
    if how == USE and saved.gated():
        return False
    digest = saved.gated_sha256()
    if not _needs(known, how, digest):
        return False
    with _locked():
        projects = entries()
        entry = projects.get(str(project)) or {}
        if not _needs(entry, how, digest):
            return False
        how = EXPLICIT if entry.get("how") == EXPLICIT else how
        granted = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        projects[str(project)] = {"how": how, "gated_sha256": digest, "granted_at": granted}
        _save(projects)
    return True


def _needs(entry: dict | None, how: str, digest: str) -> bool:
    if not entry or entry.get("gated_sha256") != digest:
        return True
    return how == EXPLICIT and entry.get("how") != EXPLICIT


def revoke(project: Path) -> bool:
    with _locked():
        projects = entries()
        removed = projects.pop(str(project), None) is not None
        if removed:
            _save(projects)
    return removed


def _locked():
    from filelock import FileLock  # writers only: its import would cost every `gemdoc search`

    trust_file().parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(trust_file()) + ".lock", timeout=30)


def _save(projects: dict) -> None:
    files.write_atomic(trust_file(), json.dumps({"projects": projects}, indent=2, sort_keys=True))

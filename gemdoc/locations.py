"""Where each locked gem is installed, asked of Ruby in one process for the whole bundle."""

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from gemdoc import files, shim
from gemdoc.lockfile import LockedGem

LOCATE_TIMEOUT = 120.0
ABOUT_CHARS = 2001  # the shim's summary and description, each at most 1,000 characters


@dataclass
class GemLocation:
    gem: LockedGem
    status: str  # found | missing | error | refused (a path: entry that names no gem)
    root: Path | None = None
    files: list[str] | None = None  # set when the code is scattered (Debian, default gems)
    ri_dir: Path | None = None
    ri_covers: tuple[str, ...] = ("lib",)  # the dirs the installed ri store documents (the gemspec's source_paths)
    layout: str = "gem"
    reason: str | None = None
    about: str = ""  # the gemspec's summary and description (evaluated gemspecs only)

    @property
    def found(self) -> bool:
        return self.status == "found"

    def why(self) -> str:
        """Why the gem was not found, in `index` and `status` words."""
        if self.refused:
            return f"{self.reason}: no gem; point its path: in the Gemfile at the gem's own directory"
        return f"not installed ({self.reason})" if self.reason else "not installed"

    def remedy(self) -> str:
        return self.why() if self.refused else f"{self.why()}: run `bundle install`"

    @property
    def refused(self) -> bool:
        """A ``path:`` entry that names no gem (its directory is /, holds the home directory or the project)."""
        return self.status == "refused"


@dataclass
class Located:
    gems: list[GemLocation]
    roots: list[str] = field(default_factory=list)  # the gem directories Ruby searched, in its order


def locate(
    project: Path, gems: list[LockedGem], variants: dict[str, list[LockedGem]], trusted: bool
) -> list[GemLocation]:
    return locate_bundle(project, gems, variants, trusted).gems


def locate_bundle(
    project: Path, gems: list[LockedGem], variants: dict[str, list[LockedGem]], trusted: bool
) -> Located:
    """One location per gem; platform variants are tried in lockfile order. Only in a ``trusted``
    project does the shim evaluate the gemspecs the project controls (``path:`` gems, its own
    bundle path): a gemspec is Ruby code."""
    tries = [v for g in gems for v in variants.get(g.name, [g])]
    request = {"project": str(project), "evaluate": trusted, "gems": [_request(g) for g in tries]}
    answer_all = shim.call("locate", request, timeout=LOCATE_TIMEOUT)
    by_gem: dict[str, GemLocation] = {}
    for gem, answer in zip(tries, answer_all["gems"]):
        current = by_gem.get(gem.name)
        if current is None or (not current.found and answer.get("status") == "found"):
            by_gem[gem.name] = _location(gem, answer)
    roots = [str(r) for r in answer_all.get("roots") or []]
    return Located([by_gem[g.name] for g in gems], roots)


INSTALL_ENV = ("GEM_HOME", "GEM_PATH", "BUNDLE_PATH", "BUNDLE_APP_CONFIG", "BUNDLE_GEMFILE")


def install_fingerprint(project: Path, roots: list[str], paths: list[str]) -> str:
    """What changes when a missing gem gets installed, read without starting Ruby: the
    modification times of the directories gems are installed into (a new gemspec or checkout
    changes them), of ``paths`` (``path:`` sources) and Bundler's settings, and the
    environment that chooses those directories. Equal fingerprints: installing is still to do."""
    watched = [project / ".bundle", project / ".bundle" / "config", project / "vendor" / "bundle"]
    for root in roots:
        watched += [Path(root), Path(root) / "specifications", Path(root) / "bundler" / "gems"]
    watched += [Path(project, p) for p in paths] + [Path(project, p).parent for p in paths]
    state = {"env": {k: os.environ.get(k) for k in INSTALL_ENV}, "files": [[str(w), _mtime(w)] for w in watched]}
    return hashlib.sha256(json.dumps(state).encode()).hexdigest()


def _mtime(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None


def _request(gem: LockedGem) -> dict:
    return {
        "name": gem.name,
        "version": gem.version,
        "platform": gem.platform,
        "source": gem.source,
        "path": gem.remote,
        "revision": gem.revision,
    }


def _location(gem: LockedGem, answer: dict) -> GemLocation:
    root = Path(answer["dir"]) if answer.get("dir") else None
    listed = answer.get("files")
    return GemLocation(
        gem=gem,
        status=answer.get("status", "error"),
        root=root,
        files=None if listed is None or root is None else [f for f in listed if files.within(root, f)],
        ri_dir=Path(answer["ri_dir"]) if answer.get("ri_dir") else None,
        ri_covers=tuple(str(d).strip("/") for d in answer.get("source_paths") or ["lib"]),
        layout=answer.get("layout", "gem"),
        reason=answer.get("reason"),
        about=str(answer.get("about") or "")[:ABOUT_CHARS],
    )

"""Where each locked gem is installed, asked of Ruby in one process for the whole bundle."""

from dataclasses import dataclass
from pathlib import Path

from gemdoc import files, shim
from gemdoc.lockfile import LockedGem

LOCATE_TIMEOUT = 120.0


@dataclass
class GemLocation:
    gem: LockedGem
    status: str  # found | missing | error
    root: Path | None = None
    files: list[str] | None = None  # set when the code is scattered (Debian, default gems)
    ri_dir: Path | None = None
    layout: str = "gem"
    reason: str | None = None

    @property
    def found(self) -> bool:
        return self.status == "found"

    def remedy(self) -> str:
        if self.reason:
            return self.reason
        return f"{self.gem.name} {self.gem.version} is not installed: run `bundle install`"


def locate(
    project: Path, gems: list[LockedGem], variants: dict[str, list[LockedGem]], trusted: bool
) -> list[GemLocation]:
    """One location per gem; platform variants are tried in lockfile order. Only in a ``trusted``
    project does the shim evaluate the gemspecs the project controls (``path:`` gems, its own
    bundle path): a gemspec is Ruby code."""
    tries = [v for g in gems for v in variants.get(g.name, [g])]
    request = {"project": str(project), "evaluate": trusted, "gems": [_request(g) for g in tries]}
    answers = shim.call("locate", request, timeout=LOCATE_TIMEOUT)["gems"]
    by_gem: dict[str, GemLocation] = {}
    for gem, answer in zip(tries, answers):
        current = by_gem.get(gem.name)
        if current is None or (not current.found and answer.get("status") == "found"):
            by_gem[gem.name] = _location(gem, answer)
    return [by_gem[g.name] for g in gems]


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
        layout=answer.get("layout", "gem"),
        reason=answer.get("reason"),
    )

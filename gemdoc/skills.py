"""Installing gemdoc's agent skill (SKILL.md, Agent Skills format) where agents look for it."""

import os
import tempfile
from pathlib import Path

from gemdoc import paths

SKILL_DIRS = (Path(".claude") / "skills" / "gemdoc", Path(".agents") / "skills" / "gemdoc")


def text() -> str:
    return paths.package_resource("SKILL.md").read_text(encoding="utf-8")


def install(base: Path) -> list[tuple[Path, bool]]:
    """Write SKILL.md under each skills directory of ``base``; (path, changed) per target."""
    body = text()
    done = []
    for directory in SKILL_DIRS:
        target = base / directory / "SKILL.md"
        if target.is_file() and target.read_text(encoding="utf-8") == body:
            done.append((target, False))
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".SKILL.", dir=target.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(body)
        os.replace(tmp, target)
        done.append((target, True))
    return done

"""Installing gemdoc's agent skill (SKILL.md, Agent Skills format) where agents look for it."""

from pathlib import Path

from gemdoc import files, paths

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
        files.write_atomic(target, body)
        done.append((target, True))
    return done

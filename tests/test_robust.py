"""Hostile and broken input (issue 12): a damaged store is named and repaired, parsers fail loud
with one line, a cache removed mid-run is regenerated, the MCP server answers what it cannot
parse, and random input never makes the CLI crash, write outside its dirs or read outside the
scoped gems. Commands run as real `gemdoc` subprocesses over real SQLite stores."""

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gemdoc import paths

pytestmark = pytest.mark.slow
WORDS = "alpha beta gamma delta widget frobnicate session cookie token retry queue job worker".split()
# root ignores file modes; without these capabilities it obeys them, as a user would
DROP_ROOT_POWERS = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"] if os.geteuid() == 0 else []


def gemdoc(cwd: Path, *args: str, timeout: float = 120, **kwargs) -> subprocess.CompletedProcess:
    command = [*DROP_ROOT_POWERS, sys.executable, "-m", "gemdoc", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout, **kwargs)


def one_line(done: subprocess.CompletedProcess, fragment: str) -> str:
    """The single `gemdoc: ...` line of a failed command, which must contain ``fragment``."""
    lines = done.stderr.strip().splitlines()
    assert done.returncode not in (0, None), done.stdout + done.stderr
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    assert len(lines) == 1 and lines[0].startswith("gemdoc: ") and fragment in lines[0], done.stderr
    return lines[0]


def prose_project(base: Path, guides: int = 40) -> Path:
    """A project locking one `path:` gem of prose only (no RDoc run), big enough for a store of a few MB."""
    rng = random.Random(12)
    gem = base / "widgety"
    (gem / "doc").mkdir(parents=True)
    (gem / "README.md").write_text("# widgety\n\nCall widgety to frobnicate the widget.\n")
    for i in range(guides):
        sections = (
            f"## Section {j}\n\n" + " ".join(f"{rng.choice(WORDS)}{rng.randint(0, 999)}" for _ in range(300))
            for j in range(10)
        )
        (gem / "doc" / f"guide{i}.md").write_text(f"# Guide {i}\n\n" + "\n\n".join(sections))
    project = base / "app"
    project.mkdir()
    (project / "Gemfile.lock").write_text(
        f"PATH\n  remote: {gem}\n  specs:\n    widgety (1.0)\n\nPLATFORMS\n  ruby\n\nDEPENDENCIES\n  widgety!\n"
    )
    return project


@pytest.fixture
def indexed(tmp_path) -> Path:
    project = prose_project(tmp_path)
    done = gemdoc(project, "index")
    assert done.returncode == 0, done.stderr
    assert paths.store_path().stat().st_size > 2 << 20
    return project


def test_garbage_in_the_store_is_named_and_reindex_moves_it_aside(indexed):
    store = paths.store_path()
    with store.open("r+b") as handle:
        handle.seek(1 << 20)
        handle.write(random.Random(1).randbytes(200 * 1024))
    one_line(gemdoc(indexed, "search", "widget"), "is malformed")
    rebuilt = gemdoc(indexed, "reindex")
    assert rebuilt.returncode == 0 and "Traceback" not in rebuilt.stderr, rebuilt.stderr
    moved = [line for line in rebuilt.stderr.splitlines() if "moved it aside to" in line]
    assert len(moved) == 1 and "malformed" in moved[0], rebuilt.stderr
    aside = Path(moved[0].split("moved it aside to ")[1].split(" and ")[0])
    assert aside.parent == store.parent and aside.stat().st_size > 2 << 20  # kept, not deleted
    found = gemdoc(indexed, "search", "widgety frobnicate", "--json")
    assert found.returncode == 0 and json.loads(found.stdout)["results"], found.stderr


def test_a_truncated_store_is_called_truncated_and_rebuilt(indexed):
    store = paths.store_path()
    data = store.read_bytes()
    store.write_bytes(data[: len(data) // 2])
    line = one_line(gemdoc(indexed, "search", "widget"), "is truncated")
    assert f"{len(data) // 2} of its {len(data)} bytes" in line and "gemdoc reindex" in line
    one_line(gemdoc(indexed, "index", "--force"), "is truncated")
    status = gemdoc(indexed, "status", "--json")
    assert json.loads(status.stdout)["next"] == "gemdoc reindex", status.stdout
    rebuilt = gemdoc(indexed, "reindex")
    assert rebuilt.returncode == 0 and "truncated" in rebuilt.stderr and "moved it aside" in rebuilt.stderr
    assert gemdoc(indexed, "search", "widgety").returncode == 0


@pytest.mark.skipif(os.geteuid() == 0 and not shutil.which("setpriv"), reason="root ignores file modes")
def test_a_read_only_store_directory_and_an_unwritable_lock_say_so(indexed):
    folder = paths.store_path().parent
    folder.chmod(0o555)
    try:
        for args in (["search", "widget"], ["index", "--force"], ["reindex"]):
            one_line(gemdoc(indexed, *args), f"the store directory {folder} is read-only")
    finally:
        folder.chmod(0o755)
    paths.lock_path().chmod(0o444)
    for args in (["index", "--force"], ["reindex"]):
        one_line(gemdoc(indexed, *args, timeout=30), "the writer lock")
    paths.lock_path().chmod(0o644)
    assert gemdoc(indexed, "index", "--force").returncode == 0

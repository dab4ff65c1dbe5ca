"""A newcomer's first hour (issue 13), run as a user would: the README's commands, the CLI in a
subprocess, real Ruby, RDoc and Bundler."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

README = (ROOT / "README.md").read_text()
DEBIAN_PYTHON = Path("/usr/bin/python3")


def gemdoc(*args: str, cwd: Path, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """The CLI as a user runs it, from this checkout."""
    env = (env or dict(os.environ)) | {"PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "gemdoc", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)  # fmt: skip


def first_command() -> str:
    """The README's first shell command (its first bash block, comments dropped, continuations joined)."""
    block = README.split("```bash\n", 1)[1].split("```", 1)[0]
    lines = [line for line in block.replace("\\\n", " ").splitlines() if line.strip() and not line.startswith("#")]
    return lines[0]


@pytest.mark.slow
@pytest.mark.skipif(not DEBIAN_PYTHON.exists(), reason="needs the system's (PEP 668) python3")
def test_readme_first_command_works_with_a_pep668_python(tmp_path):
    """Debian's python3 refuses `pip install .` outside a venv; the README's command works as written."""
    command = first_command()
    assert not re.search(r"(^|&&\s*)pip install", command), command
    checkout = tmp_path / "gemdoc"
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    for name in listed.splitlines():
        if (ROOT / name).is_file():
            (checkout / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, checkout / name)
    env = dict(os.environ) | {"PATH": f"{DEBIAN_PYTHON.parent}:/bin"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run(["bash", "-c", command], cwd=checkout, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Object#stub" in done.stdout

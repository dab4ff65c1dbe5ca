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


@pytest.fixture
def half_installed(tmp_path, ruby_env, gem_home) -> tuple[Path, dict]:
    """A project locked with the fixture gem, run where that gem is not installed (yet)."""
    project = tmp_path / "half"
    project.mkdir()
    (project / "Gemfile").write_text('source "https://rubygems.org"\ngem "gemdoc_fixture"\ngem "io-wait"\n')
    subprocess.run(["bundle", "lock", "--local"], cwd=project, env=ruby_env, check=True, capture_output=True)
    empty = tmp_path / "empty_gem_home"
    empty.mkdir()
    default_path = ruby_env["GEM_PATH"].split(":", 1)[1]
    return project, ruby_env | {"GEM_HOME": str(empty), "GEM_PATH": f"{empty}:{default_path}"}


@pytest.mark.slow
def test_status_lists_what_is_not_installed_and_index_is_a_noop_until_it_is(half_installed, gem_home):
    project, env = half_installed
    first = gemdoc("index", cwd=project, env=env)
    assert first.returncode == 0, first.stderr
    line = next(x for x in first.stderr.splitlines() if x.startswith("gemdoc_fixture"))
    assert line.count("not installed") == 1 and "run `bundle install`" in line, line

    again = gemdoc("index", cwd=project, env=env)
    assert again.stdout.startswith("unchanged:") and "1 not installed" in again.stdout, again.stdout + again.stderr

    info = json.loads(gemdoc("status", "--json", cwd=project, env=env).stdout)
    assert info["not_indexed"] == [{"gem": "gemdoc_fixture", "version": "1.2.3", "reason": "not installed",
                                    "next": "bundle install && gemdoc index"}]  # fmt: skip
    assert info["next"] == "bundle install && gemdoc index"
    assert info["failures"] == [] and [s["gem"] for s in info["skipped"]] == ["io-wait"], info
    text = gemdoc("status", cwd=project, env=env).stdout
    assert "missing:   gemdoc_fixture 1.2.3: not installed · next: `bundle install && gemdoc index`" in text
    assert "skipped:   io-wait" in text and "failed:" not in text, text

    package = gem_home / "cache" / "gemdoc_fixture-1.2.3.gem"
    subprocess.run(["gem", "install", "--local", "--no-document", "--install-dir", env["GEM_HOME"], str(package)],
                   env=env, check=True, capture_output=True)  # fmt: skip
    assert json.loads(gemdoc("status", "--json", cwd=project, env=env).stdout)["next"] == "gemdoc index"
    installed = gemdoc("index", cwd=project, env=env)
    assert "gemdoc_fixture 1.2.3  indexed" in installed.stderr, installed.stdout + installed.stderr
    after = json.loads(gemdoc("status", "--json", cwd=project, env=env).stdout)
    assert after["not_indexed"] == [] and after["next"] is None, after

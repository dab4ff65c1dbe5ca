"""Shared fixtures. Every test runs with GEMDOC_HOME, HOME and the XDG dirs in a temporary
directory, so nothing ever reads or writes the real home directory."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
EXAMPLE = ROOT / "examples" / "demo"


@pytest.fixture(autouse=True)
def isolated_home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in ("XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(var, str(home / var.lower()))
    monkeypatch.setenv("GEMDOC_HOME", str(tmp_path / "gemdoc"))
    monkeypatch.delenv("BUNDLE_GEMFILE", raising=False)
    return tmp_path / "gemdoc"


def run(cmd: list[str], cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"{cmd} failed: {done.stderr}{done.stdout}"
    return done


def _crasher_source() -> str:
    """3,000 nested modules: RDoc's recursive parser dies with SystemStackError on it."""
    depth = 3000
    return "\n".join(f"module Deep{i}" for i in range(depth)) + "\n" + "end\n" * depth


@pytest.fixture(scope="session")
def gem_home(tmp_path_factory) -> Path:
    """A GEM_HOME holding the fixture gems, built with `gem build`, installed with `gem install --local`."""
    base = tmp_path_factory.mktemp("gems")
    home = base / "gem_home"
    env = os.environ | {"HOME": str(base)}
    for name in ("gemdoc_fixture", "gemdoc_crasher"):
        src = base / "src" / name
        shutil.copytree(FIXTURES / name, src)
        if name == "gemdoc_crasher":
            (src / "lib" / "gemdoc_crasher.rb").write_text(_crasher_source())
        run(["gem", "build", f"{name}.gemspec"], cwd=src, env=env)
        package = next(src.glob(f"{name}-*.gem"))
        run(["gem", "install", "--local", "--no-document", "--install-dir", str(home), str(package)], env=env)
    installed = home / "gems" / "gemdoc_fixture-1.2.3"
    (installed / "lib" / "gemdoc_fixture" / "loop").symlink_to("..")  # a symlink loop in the API sources
    (installed / "doc" / "loop").symlink_to("..")  # and one in the prose tree
    return home


def default_gem_path() -> str:
    return run(["ruby", "-e", "puts Gem.default_path.join(':')"]).stdout.strip()


@pytest.fixture
def ruby_env(gem_home, monkeypatch) -> dict:
    """Environment in which Ruby sees the fixture gems as well as the system's."""
    monkeypatch.setenv("GEM_HOME", str(gem_home))
    monkeypatch.setenv("GEM_PATH", f"{gem_home}:{default_gem_path()}")
    return dict(os.environ)


@pytest.fixture
def fixture_project(tmp_path, ruby_env) -> Path:
    """A project depending on the fixture gems and rake, locked offline."""
    project = tmp_path / "app"
    project.mkdir()
    (project / "Gemfile").write_text(
        'source "https://rubygems.org"\ngem "gemdoc_fixture"\ngem "gemdoc_crasher"\ngem "rake"\n'
    )
    run(["bundle", "lock", "--local"], cwd=project, env=ruby_env)
    return project


@pytest.fixture
def example_project(tmp_path) -> Path:
    """A copy of the example project shipped in examples/demo."""
    project = tmp_path / "demo"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(".gemdoc.yml"))
    return project

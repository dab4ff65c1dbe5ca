"""The Bundler plugin, `gemdoc init`, `gemdoc hook` and trust, with the real `bundle`, offline.

Every test drives `bundle install --local` (or `add`, `update`) in a temporary project whose
gems live in a temporary GEM_HOME, and reads what the hook printed and what the store holds.
"""

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, default_gem_path, run
from gemdoc import models, paths, plugin, trust

pytestmark = pytest.mark.slow
PLUGIN = ROOT / "plugins" / plugin.NAME
GEMDOC_BIN_DIR = Path(sys.executable).parent


def _gem_source(base: Path, name: str, version: str, doc: str) -> Path:
    src = base / f"{name}-{version}"
    (src / "lib").mkdir(parents=True)
    (src / f"{name}.gemspec").write_text(
        f'Gem::Specification.new do |s|\n  s.name = "{name}"; s.version = "{version}"; s.summary = "fixture"\n'
        f'  s.authors = ["gemdoc"]; s.license = "MIT"; s.files = ["lib/{name}.rb"]\nend\n'
    )
    module = "".join(part.capitalize() for part in name.split("_"))
    (src / "lib" / f"{name}.rb").write_text(f"# {module}.\nmodule {module}\n  # {doc}\n  def self.turn; end\nend\n")
    return src


@pytest.fixture(scope="module")
def plugin_gems(tmp_path_factory) -> dict:
    """gemdoc_widget 1.0.0 and 1.1.0 installed in a GEM_HOME; gemdoc_gadget only in a file:// mirror."""
    base = tmp_path_factory.mktemp("plugin_gems")
    home, env = base / "gem_home", os.environ | {"HOME": str(base)}
    for version, doc in (("1.0.0", "Turns the widget clockwise."), ("1.1.0", "Turns the widget anticlockwise.")):
        src = _gem_source(base / "src", "gemdoc_widget", version, doc)
        run(["gem", "build", "gemdoc_widget.gemspec"], cwd=src, env=env)
        gem = src / f"gemdoc_widget-{version}.gem"
        run(["gem", "install", "--local", "--no-document", "--install-dir", str(home), str(gem)], env=env)
    gadget = _gem_source(base / "src", "gemdoc_gadget", "0.3.0", "Spins the gadget twice.")
    mirror = base / "mirror"
    shim = ROOT / "ruby_shim" / "gemdoc_shim.rb"
    request = json.dumps({"plugin": str(gadget), "out": str(mirror)})
    subprocess.run(["ruby", str(shim), "mirror"], input=request, env=env, text=True, check=True, capture_output=True)
    return {"home": home, "mirror": mirror}


@pytest.fixture
def bundle_env(plugin_gems, monkeypatch) -> dict:
    """The environment `bundle` runs in: gemdoc on PATH, no CI, no Rails, the fixture gems."""
    for var in ("CI", "GEMDOC_NO_AUTO_INDEX", "GEMDOC_BIN", "RAILS_ENV", "RACK_ENV", "BUNDLE_PLUGINS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATH", f"{GEMDOC_BIN_DIR}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("GEM_HOME", str(plugin_gems["home"]))
    monkeypatch.setenv("GEM_PATH", f"{plugin_gems['home']}:{default_gem_path()}")
    return dict(os.environ)


def make_project(tmp_path: Path, env: dict, gemfile: str, name: str = "app") -> Path:
    project = tmp_path / name
    project.mkdir()
    (project / "Gemfile").write_text(gemfile)
    run(["bundle", "lock", "--local"], cwd=project, env=env)
    return project


def bundle(project: Path, *args: str, env: dict | None = None) -> list[str]:
    """Run bundle; it must succeed. Returns the lines the plugin printed."""
    done = subprocess.run(["bundle", *args], cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr + done.stdout
    return [line for line in (done.stdout + done.stderr).splitlines() if line.startswith("[gemdoc]")]


def gemdoc(project: Path, *args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([str(GEMDOC_BIN_DIR / "gemdoc"), *args], cwd=project, env=env, capture_output=True,
                          text=True, timeout=300)  # fmt: skip


def stored(name: str) -> list[str]:
    if not paths.store_path().exists():
        return []
    with sqlite3.connect(paths.store_path()) as conn:
        return [v for (v,) in conn.execute("SELECT version FROM gems WHERE name = ? ORDER BY version", [name])]


WIDGET = 'source "https://rubygems.org"\ngem "rake"\ngem "gemdoc_widget", "1.0.0"\n'


@pytest.fixture
def initialised(tmp_path, bundle_env) -> Path:
    project = make_project(tmp_path, bundle_env, WIDGET)
    done = gemdoc(project, "init", env=bundle_env)
    assert done.returncode == 0, done.stderr
    assert "installed the Bundler plugin" in done.stdout and "next: run `bundle install`" in done.stdout
    return project


def test_init_arms_the_hook_and_the_first_install_indexes(initialised, bundle_env):
    project = initialised
    index = project / ".bundle" / "plugin" / "index"
    registered = index.read_text()
    assert re.search(r"after-install-all:\n\s+- \"?bundler-gemdoc", registered), registered  # §15.1a mode 2
    installed = Path(re.search(r'bundler-gemdoc: "?([^"\n]+)', registered.split("plugin_paths:")[1]).group(1))
    assert (installed / "plugins.rb").is_file() and installed.is_relative_to(project / ".bundle")  # §15.1a mode 1
    assert not (project / "plugins.rb").exists()
    assert trust.verdict(project).trusted and (project / ".gemdoc.yml").exists()

    lines = bundle(project, "install", "--local", env=bundle_env)
    assert len(lines) == 1 and lines[0].startswith("[gemdoc] indexed 2 gems"), lines
    assert "clockwise" in gemdoc(project, "search", "turns the widget", "-n", "1", env=bundle_env).stdout

    status = gemdoc(project, "status", "--json", env=bundle_env)
    info = json.loads(status.stdout)
    assert info["hook"]["armed"] and info["trust"]["trusted"] and info["stale"] is False


def test_second_install_is_silent_and_does_no_work(initialised, bundle_env):
    bundle(initialised, "install", "--local", env=bundle_env)
    before = paths.store_path().stat().st_mtime_ns, (initialised / ".gemdoc.yml").stat().st_mtime_ns
    assert bundle(initialised, "install", "--local", env=bundle_env) == []
    assert (paths.store_path().stat().st_mtime_ns, (initialised / ".gemdoc.yml").stat().st_mtime_ns) == before
    again = gemdoc(initialised, "init", env=bundle_env)
    assert again.returncode == 0 and again.stdout.startswith("unchanged: gemdoc is already set up"), again.stdout


def test_a_gem_added_to_the_gemfile_is_indexed_alone(tmp_path, bundle_env):
    project = make_project(tmp_path, bundle_env, 'source "https://rubygems.org"\ngem "rake"\n')
    gemdoc(project, "init", env=bundle_env)
    assert bundle(project, "install", "--local", env=bundle_env)[0].startswith("[gemdoc] indexed 1 gem (rake")
    with (project / "Gemfile").open("a") as gemfile:
        gemfile.write('gem "gemdoc_widget", "1.0.0"\n')
    lines = bundle(project, "install", "--local", env=bundle_env)  # fires on a later install too (§15.1a mode 2)
    assert lines == [lines[0]] and lines[0].startswith("[gemdoc] indexed 1 gem (gemdoc_widget 1.0.0)"), lines


def test_bundle_add_through_a_file_mirror(tmp_path, bundle_env, plugin_gems):
    mirror = plugin_gems["mirror"]
    project = make_project(tmp_path, bundle_env, f'source "file://{mirror}"\ngem "rake"\n')
    gemdoc(project, "init", env=bundle_env)
    bundle(project, "install", "--local", env=bundle_env)
    lines = bundle(project, "add", "gemdoc_gadget", env=bundle_env)
    assert len(lines) == 1 and lines[0].startswith("[gemdoc] indexed 1 gem (gemdoc_gadget 0.3.0)"), lines
    assert "twice" in gemdoc(project, "search", "spins the gadget", env=bundle_env).stdout


def test_update_reindexes_the_changed_version_only(initialised, bundle_env):
    bundle(initialised, "install", "--local", env=bundle_env)
    gemfile = initialised / "Gemfile"
    gemfile.write_text(gemfile.read_text().replace('"1.0.0"', '">= 1.0"'))
    lines = bundle(initialised, "update", "--local", "gemdoc_widget", env=bundle_env)
    assert len(lines) == 1 and lines[0].startswith("[gemdoc] indexed 1 gem (gemdoc_widget 1.1.0)"), lines
    assert stored("gemdoc_widget") == ["1.0.0", "1.1.0"]
    top = gemdoc(initialised, "search", "turns the widget", "--json", env=bundle_env).stdout
    assert {r["version"] for r in json.loads(top)["results"] if r["gem"] == "gemdoc_widget"} == {"1.1.0"}


def test_ci_is_silent_unless_trusted_on_purpose(tmp_path, bundle_env):
    project = make_project(tmp_path, bundle_env, WIDGET)
    plugin.install(project)
    trust.grant(project, trust.USE)
    ci = bundle_env | {"CI": "1"}
    assert bundle(project, "install", "--local", env=ci) == [] and stored("rake") == []
    no_auto = bundle_env | {"GEMDOC_NO_AUTO_INDEX": "1"}
    assert bundle(project, "install", "--local", env=no_auto) == [] and stored("rake") == []
    assert gemdoc(project, "trust", env=bundle_env).stdout.startswith("trusted")
    assert bundle(project, "install", "--local", env=ci)[0].startswith("[gemdoc] indexed 2 gems")


def test_an_untrusted_clone_prints_one_line_and_indexes_nothing(tmp_path, bundle_env):
    """The team route: a checked-in `plugin` line installs and fires in the clone's first install."""
    gemfile = WIDGET + f'plugin "bundler-gemdoc", path: "{PLUGIN}"\n'
    project = make_project(tmp_path, bundle_env, gemfile)
    lines = bundle(project, "install", "--local", env=bundle_env)
    assert len(lines) == 1 and "not trusted: your first `gemdoc index` there" in lines[0], lines
    assert not paths.store_path().exists()


@pytest.mark.parametrize(
    "gemdoc_bin, message",
    [
        ("/nonexistent/gemdoc", "not found on PATH"),
        (f"{sys.executable} -c 'import sys; print(\"boom\"); sys.exit(3)'", "boom (gemdoc hook exited 3)"),
        (f"{sys.executable} -c 'import time; time.sleep(60)'", "longer than 1 s and was stopped"),
    ],
)
def test_a_broken_gemdoc_never_fails_the_bundle(initialised, bundle_env, gemdoc_bin, message):
    env = bundle_env | {"GEMDOC_BIN": gemdoc_bin, "GEMDOC_HOOK_TIMEOUT": "1"}
    lines = bundle(initialised, "install", "--local", env=env)
    assert len(lines) == 1 and message in lines[0], lines


def test_plugins_false_disables_the_hook(initialised, bundle_env):
    run(["bundle", "config", "set", "--local", "plugins", "false"], cwd=initialised, env=bundle_env)
    assert bundle(initialised, "install", "--local", env=bundle_env) == [] and stored("rake") == []
    assert "disabled" in json.loads(gemdoc(initialised, "status", "--json", env=bundle_env).stdout)["hook_state"]


def test_a_corrupt_manifest_is_one_line_and_the_bundle_succeeds(initialised, bundle_env):
    (initialised / ".gemdoc.yml").write_text("scope: [unclosed\n")
    lines = bundle(initialised, "install", "--local", env=bundle_env)
    assert len(lines) == 1 and ".gemdoc.yml is not valid YAML" in lines[0], lines


def test_no_auto_index_installs_no_plugin(tmp_path, bundle_env):
    project = make_project(tmp_path, bundle_env, WIDGET)
    done = gemdoc(project, "init", "--no-auto-index", env=bundle_env)
    assert "next: run `gemdoc index`" in done.stdout and not (project / ".bundle" / "plugin").exists()
    assert "auto_index: false" in (project / ".gemdoc.yml").read_text()


def test_plugin_source_follows_the_rules_bundler_enforces_silently():
    """§15.1a: a plugin that looks installed and does nothing. Modes 1 and 2 are also asserted
    end to end above; modes 3 and 4 can only be seen in the source."""
    plugins_rb = (PLUGIN / "plugins.rb").read_text()
    assert re.search(r'::Bundler::Plugin\.add_hook\("after-install-all"\)', plugins_rb)
    spec = (PLUGIN / f"{plugin.NAME}.gemspec").read_text()
    assert '"plugins.rb"' in spec  # shipped at the top of the gem
    for source in PLUGIN.rglob("*.rb"):
        code = "\n".join(line.split("#")[0] for line in source.read_text().splitlines())
        assert not re.search(r"(?<!::)\bBundler\b", code), f"{source}: every Bundler reference must be ::Bundler"
        assert "RAILS_ENV" not in code and "RACK_ENV" not in code, f"{source}: no environment guard but CI"


def test_trust_gates_the_manifest_model_settings(tmp_path, monkeypatch):
    for var in ("GEMDOC_MODEL", "GEMDOC_MODEL_DIR"):
        monkeypatch.delenv(var, raising=False)
    project = tmp_path / "p"
    project.mkdir()
    (project / ".gemdoc.yml").write_text("scope: direct\n")
    assert trust.grant(project, trust.USE) and trust.verdict(project).trusted
    (project / ".gemdoc.yml").write_text("scope: direct\nmodel_dir: /elsewhere/model\n")
    verdict = trust.verdict(project)
    assert not verdict.trusted and "gemdoc trust" in verdict.reason
    assert not trust.grant(project, trust.USE) and not trust.verdict(project).trusted  # use never approves
    assert models.configured(project).model_dir is None
    assert trust.grant(project, trust.EXPLICIT) and trust.verdict(project).how == trust.EXPLICIT
    assert models.configured(project).model_dir == Path("/elsewhere/model")
    assert trust.revoke(project) and not trust.verdict(project).trusted and not trust.revoke(project)


def test_wheel_ships_the_plugin_the_shim_and_the_skill(tmp_path):
    shutil.copytree(ROOT, tmp_path / "src", ignore=shutil.ignore_patterns(".git", ".venv", "benchmarks", "*.egg-info"))
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"), str(tmp_path / "src")])
    wheel = next((tmp_path / "dist").glob("gemdoc-*.whl"))
    import zipfile

    names = set(zipfile.ZipFile(wheel).namelist())
    for shipped in ("gemdoc/plugins/bundler-gemdoc/plugins.rb", "gemdoc/plugins/bundler-gemdoc/lib/bundler_gemdoc.rb",
                    "gemdoc/plugins/bundler-gemdoc/bundler-gemdoc.gemspec", "gemdoc/ruby_shim/mirror.rb",
                    "gemdoc/SKILL.md"):  # fmt: skip
        assert shipped in names, sorted(names)
    assert zipfile.ZipFile(wheel).read("gemdoc/SKILL.md").decode() == (ROOT / "SKILL.md").read_text()


def test_the_first_explicit_command_trusts_a_project_and_status_does_not(tmp_path):
    from click.testing import CliRunner

    from gemdoc.cli import main

    project = tmp_path / "p"
    project.mkdir()
    (project / "Gemfile.lock").write_text("GEM\n  specs:\n    rake (13.0.6)\n\nDEPENDENCIES\n  rake\n")
    runner = CliRunner()
    runner.invoke(main, ["status", "-C", str(project)])
    runner.invoke(main, ["hook", "-C", str(project)])
    assert not trust.verdict(project).trusted
    runner.invoke(main, ["search", "-C", str(project), "anything"])  # fails (no index), but was asked for
    assert trust.verdict(project).how == trust.USE
    listed = runner.invoke(main, ["trust", "list"])
    assert listed.exit_code == 0 and str(project) in listed.stdout and " use " in listed.stdout
    assert runner.invoke(main, ["trust", "-C", str(project)]).stdout.startswith("trusted")
    assert trust.verdict(project).how == trust.EXPLICIT
    assert runner.invoke(main, ["trust", "revoke", str(project)]).stdout.startswith("revoked")
    again = runner.invoke(main, ["trust", "revoke", str(project)])
    assert again.exit_code == 1 and "was not trusted" in again.output


def test_use_never_trusts_a_project_whose_manifest_names_a_model(tmp_path):
    """SKILL.md: `gemdoc index` trusts a project for use unless its .gemdoc.yml names a model; the reason
    `status` gives says so."""
    from click.testing import CliRunner

    from gemdoc.cli import main

    project = tmp_path / "p"
    project.mkdir()
    (project / "Gemfile.lock").write_text("GEM\n  specs:\n    rake (13.0.6)\n\nDEPENDENCIES\n  rake\n")
    (project / ".gemdoc.yml").write_text("model_dir: /somewhere/else\n")
    CliRunner().invoke(main, ["search", "-C", str(project), "anything"])
    verdict = trust.verdict(project)
    assert not verdict.trusted and "`gemdoc trust` once you have reviewed it (needed when" in verdict.reason


def test_hook_skips_a_lockfile_gemdoc_does_not_read(tmp_path):
    from click.testing import CliRunner

    from gemdoc.cli import main

    project = tmp_path / "p"
    project.mkdir()
    (project / "Gemfile.lock").write_text("GEM\n  specs:\n    rake (13.0.6)\n\nDEPENDENCIES\n  rake\n")
    other = project / "Gemfile.next.lock"
    other.write_text((project / "Gemfile.lock").read_text())
    trust.grant(project, trust.USE)  # the hook asks trust first; this test is about the lockfile check after it
    done = CliRunner().invoke(main, ["hook", "-C", str(project), "--lockfile", str(other)])
    assert done.exit_code == 0 and done.stdout.startswith("skipped: Bundler wrote") and "Gemfile.lock" in done.stdout
    assert not paths.store_path().exists()

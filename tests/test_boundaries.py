"""One project cannot read another's files, nor the machine's: `show` stays inside the gems of the
current project and inside the files gemdoc indexed from them; lockfile names never become paths;
project YAML and lockfiles are read within bounds; the hook asks trust first; an untrusted
project's gemspecs are never evaluated. Every command runs as a real `gemdoc` subprocess."""

import json
import os
import resource
import sqlite3
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from gemdoc import paths

pytestmark = pytest.mark.slow
MEMORY_LIMIT = 1 << 30  # an alias bomb must fail fast under it, never take the machine's memory


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def gemdoc(project: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gemdoc", *args], cwd=project, capture_output=True, text=True,
                          timeout=timeout, preexec_fn=_limit_memory)  # fmt: skip


def one_line(done: subprocess.CompletedProcess, fragment: str) -> None:
    lines = done.stderr.strip().splitlines()
    assert done.returncode != 0, done.stdout + done.stderr
    assert len(lines) == 1 and lines[0].startswith("gemdoc: ") and fragment in lines[0], done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def path_project(base: Path, name: str, gems: dict[str, str]) -> Path:
    """A project locking one `path:` gem per entry of ``gems`` (name -> the directory it points at)."""
    project = base / name
    project.mkdir()
    sections = "".join(f"PATH\n  remote: {remote}\n  specs:\n    {gem} (1.0)\n\n" for gem, remote in gems.items())
    deps = "".join(f"  {gem}!\n" for gem in gems)
    (project / "Gemfile.lock").write_text(f"{sections}PLATFORMS\n  ruby\n\nDEPENDENCIES\n{deps}")
    return project


def doc_gem(base: Path, name: str) -> Path:
    """A gem directory of prose only (nothing for RDoc to run on), plus a file it never documents."""
    gem = base / name
    gem.mkdir()
    (gem / "README.md").write_text(f"# {name}\n\n## Usage\n\nCall {name} to frobnicate the widget.\n")
    (gem / "secrets.env").write_text("API_KEY=hunter2\n")
    return gem


def test_a_path_gem_at_etc_never_shows_etc_files(tmp_path):
    project = path_project(tmp_path, "app", {"passwd": "/etc"})
    gemdoc(project, "index")
    for name in ("shadow", "passwd", "hostname"):
        done = gemdoc(project, "show", f"gemdoc://passwd@1.0/{name}#L1", "--source")
        assert "root:" not in done.stdout and done.stdout == "", done.stdout
        assert done.returncode != 0 and "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1


def test_show_source_reads_only_files_gemdoc_indexed_from_the_gem(tmp_path):
    gem = doc_gem(tmp_path, "widget")
    (gem / "doc").mkdir()
    (gem / "doc" / "guide.md").symlink_to(gem / "secrets.env")  # inside the gem, but a symlink: never followed
    project = path_project(tmp_path, "app", {"widget": str(gem)})
    assert gemdoc(project, "index").returncode == 0
    shown = gemdoc(project, "show", "gemdoc://widget@1.0/README.md#L5", "--source")
    assert shown.returncode == 0 and "frobnicate" in shown.stdout, shown.stderr
    for path in ("secrets.env", "doc/guide.md", "./secrets.env", "doc/../secrets.env"):
        done = gemdoc(project, "show", f"gemdoc://widget@1.0/{path}#L1", "--source")
        assert "hunter2" not in done.stdout
        one_line(done, "is not a file of widget 1.0 that gemdoc indexed")


def test_a_default_gem_shows_its_own_files_not_rubys_lib_dir(tmp_path):
    project = tmp_path / "app"
    project.mkdir()
    (project / "Gemfile.lock").write_text("GEM\n  remote: https://rubygems.org/\n  specs:\n    digest (3.1.0)\n\n"
                                          "PLATFORMS\n  ruby\n\nDEPENDENCIES\n  digest\n")  # fmt: skip
    assert gemdoc(project, "index").returncode == 0
    one_line(gemdoc(project, "show", "gemdoc://digest@3.1.0/net/http.rb#L1", "--source"), "is not a file of digest")
    results = json.loads(gemdoc(project, "search", "--json", "--no-refusal", "-n", "50", "Digest hexdigest").stdout)
    hit = next(r for r in results["results"] if r["line"])
    own = gemdoc(project, "show", hit["uri"], "--source")
    assert own.returncode == 0 and hit["path"] in own.stdout.splitlines()[0], own.stderr


def test_show_reads_only_the_current_projects_gems_on_the_cli_and_over_mcp(tmp_path):
    mine, theirs = doc_gem(tmp_path, "mine"), doc_gem(tmp_path, "theirs")
    a = path_project(tmp_path, "a", {"mine": str(mine)})
    b = path_project(tmp_path, "b", {"theirs": str(theirs)})
    assert gemdoc(a, "index").returncode == 0 and gemdoc(b, "index").returncode == 0
    other = "gemdoc://theirs@1.0/README.md#L5"
    assert gemdoc(b, "show", other, "--source").returncode == 0  # readable where it belongs
    for args in (["show", other], ["show", other, "--source"], ["show", "-C", str(a), other]):
        one_line(gemdoc(a, *args), "is not in the index of this project's bundle")
    replies = anyio.run(_mcp_show, a, [other, "gemdoc://mine@1.0/README.md#L5"])
    assert "is not in the index of this project's bundle" in replies[0]["error"] and "text" not in replies[0]
    assert "frobnicate" in replies[1]["text"]


async def _mcp_show(project: Path, uris: list[str]) -> list[dict]:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {k: os.environ[k] for k in ("GEMDOC_HOME", "HOME", "PATH", "PYTHONPATH") if k in os.environ}
    params = StdioServerParameters(command=sys.executable, args=["-m", "gemdoc", "mcp"], env=env, cwd=str(project))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            replies = [await session.call_tool("show", {"uri": u, "source": True}) for u in uris]
    return [{"error": r.content[0].text} if r.is_error else json.loads(r.content[0].text) for r in replies]


def test_names_that_climb_out_never_become_paths(tmp_path):
    """A PATH spec named ../../x would put the ri cache entry outside the cache (and rmtree there); a
    GEM spec climbing from a gem root to a .gemspec elsewhere would make the shim evaluate it."""
    project = tmp_path / "app"
    (project / "lib").mkdir(parents=True)
    (project / "lib" / "x.rb").write_text("# X.\nmodule X\n  # Does x.\n  def self.x; end\nend\n")
    marker = tmp_path / "evaluated"
    evil = tmp_path / "evil" / "evil-1.0.gemspec"
    evil.parent.mkdir()
    evil.write_text(f'File.write("{marker}", "pwned")\n')
    climb = "../" * 16 + str(evil.parent / "evil").lstrip("/")
    escape = "../../../escaped"  # from $GEMDOC_HOME/cache/ri to tmp_path
    (project / "Gemfile.lock").write_text(
        f"GEM\n  remote: https://rubygems.org/\n  specs:\n    {climb} (1.0)\n\n"
        f"PATH\n  remote: .\n  specs:\n    {escape} (1.0)\n    app (1.0)\n\n"
        f"PLATFORMS\n  ruby\n\nDEPENDENCIES\n  {climb}\n  {escape}!\n  app!\n"
    )  # fmt: skip
    before = {p.name for p in tmp_path.iterdir()}
    done = gemdoc(project, "index", "--all")
    assert not marker.exists(), "the shim evaluated a gemspec outside the project"
    assert {p.name for p in tmp_path.iterdir()} - before <= {"gemdoc"}, sorted(tmp_path.iterdir())
    assert "Traceback" not in done.stderr and done.returncode == 0, done.stderr
    malformed = [line for line in done.stderr.splitlines() if "malformed lockfile entry" in line]
    assert len(malformed) == 2 and "Gemfile.lock:4:" in malformed[0] and "Gemfile.lock:9:" in malformed[1], malformed
    assert "app 1.0  indexed" in done.stderr  # the well-formed entries are indexed as usual


BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)},"
    f" *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
    for i in range(8)
) + "model: *i\n"


@pytest.mark.parametrize("content, fragment", [
    (BOMB, "uses a YAML alias"),
    ("# padding\n" * 30_000 + "scope: direct\n", "is larger than 256 KiB"),
    ("/dev/zero", "is not a regular file"),
    (b"scope: direct\n\xff\xfe\x00\x00", "is not UTF-8 text"),
    ("[" * 20_000 + "]" * 20_000, "nests too deeply"),
])  # fmt: skip
def test_a_hostile_manifest_is_one_line_for_every_command(tmp_path, content, fragment):
    project = tmp_path / "app"
    project.mkdir()
    (project / "Gemfile.lock").write_text("GEM\n  specs:\n    rake (13.0.6)\n\nDEPENDENCIES\n  rake\n")
    manifest = project / ".gemdoc.yml"
    if content == "/dev/zero":
        manifest.symlink_to("/dev/zero")
    elif isinstance(content, bytes):
        manifest.write_bytes(content)
    else:
        manifest.write_text(content)
    for args in (["index"], ["status"], ["trust"]):
        one_line(gemdoc(project, *args, timeout=30), fragment)
    assert not paths.store_path().exists()


def test_bundler_settings_with_an_alias_bomb_are_ignored(tmp_path):
    project = tmp_path / "app"
    plugin_dir = project / ".bundle" / "plugin"
    (plugin_dir / "gems" / "bundler-gemdoc").mkdir(parents=True)
    (plugin_dir / "gems" / "bundler-gemdoc" / "plugins.rb").write_text("")
    (project / "Gemfile.lock").write_text("GEM\n  specs:\n    rake (13.0.6)\n\nDEPENDENCIES\n  rake\n")
    (plugin_dir / "index").write_text(
        f"---\nhooks:\n  after-install-all:\n  - bundler-gemdoc\nplugin_paths:\n"
        f"  bundler-gemdoc: {plugin_dir / 'gems' / 'bundler-gemdoc'}\n"
    )  # fmt: skip
    (project / ".bundle" / "config").write_text(BOMB.replace("model:", "BUNDLE_PLUGINS:"))
    done = gemdoc(project, "status", "--json", timeout=30)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert json.loads(done.stdout)["hook"]["armed"] is True  # the bomb is no setting: plugins stay on


def test_an_oversized_lockfile_is_one_line(tmp_path):
    project = tmp_path / "app"
    project.mkdir()
    deps = "      rake\n" * 900_000  # ~10 MB of a spec's own dependencies
    (project / "Gemfile.lock").write_text(f"GEM\n  specs:\n    rake (13.0.6)\n{deps}\nDEPENDENCIES\n  rake\n")
    one_line(gemdoc(project, "index", timeout=60), "is larger than 8192 KiB")


def test_the_hook_asks_trust_before_reading_the_project(tmp_path):
    project = tmp_path / "app"
    project.mkdir()
    (project / "Gemfile.lock").write_text("GEM\n  specs:\n    rake (13.0.6)\n\nDEPENDENCIES\n  rake\n")
    (project / ".gemdoc.yml").write_text(BOMB)
    done = gemdoc(project, "hook", timeout=30)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert done.stdout.strip().startswith("not indexing:") and "not trusted" in done.stdout, done.stdout
    assert not paths.store_path().exists()


def test_an_untrusted_projects_gemspecs_are_not_evaluated(tmp_path):
    """A `path:` gemspec and a gemspec in the project's own vendor/bundle are Ruby; a project that is
    not trusted (here: its .gemdoc.yml names a model nobody approved) gets its gems found by file
    names alone, and evaluation starts once it is trusted."""
    project = tmp_path / "app"
    marker = tmp_path / "evaluated"
    local = project / "engines" / "local"
    local.mkdir(parents=True)
    (local / "README.md").write_text("# local\n\n## Usage\n\nLocal turns the crank.\n")
    (local / "local.gemspec").write_text(
        f'File.write("{marker}", "path")\nGem::Specification.new {{ |s| s.name = "local"; s.version = "1.0" }}\n'
    )
    vendored = project / "vendor" / "bundle" / "ruby" / "3.1.0"
    (vendored / "specifications").mkdir(parents=True)
    (vendored / "gems" / "boxed-2.0").mkdir(parents=True)
    (vendored / "gems" / "boxed-2.0" / "README.md").write_text("# boxed\n\n## Usage\n\nBoxed packs the crate.\n")
    (vendored / "specifications" / "boxed-2.0.gemspec").write_text(
        f'File.write("{marker}", "vendored")\nGem::Specification.new {{ |s| s.name = "boxed"; s.version = "2.0" }}\n'
    )
    (project / "Gemfile.lock").write_text(
        "GEM\n  remote: https://rubygems.org/\n  specs:\n    boxed (2.0)\n\n"
        "PATH\n  remote: engines/local\n  specs:\n    local (1.0)\n\n"
        "PLATFORMS\n  ruby\n\nDEPENDENCIES\n  boxed\n  local!\n"
    )  # fmt: skip
    (project / ".gemdoc.yml").write_text("scope: direct\nmodel: someone/else\n")
    done = gemdoc(project, "index")
    assert done.returncode == 0, done.stderr
    assert not marker.exists(), f"evaluated: {marker.read_text()}"
    assert "boxed 2.0  indexed" in done.stderr and "local 1.0  indexed" in done.stderr, done.stderr
    assert gemdoc(project, "trust").returncode == 0
    assert gemdoc(project, "index", "--force").returncode == 0
    assert marker.exists()


def test_files_a_gemspec_lists_outside_the_gem_are_never_read(tmp_path):
    """A default-gem spec in a (trusted) project's vendor/bundle lists a Ruby file far outside the
    gem: RDoc must never read it, so nothing of it reaches the shared store."""
    outside = tmp_path / "elsewhere" / "outside.rb"
    outside.parent.mkdir()
    outside.write_text("# Zanzibar lists every secret.\nmodule Outside\n  # Zanzibar.\n  def self.zanzibar; end\nend\n")
    project = tmp_path / "app"
    specs = project / "vendor" / "bundle" / "ruby" / "3.1.0" / "specifications" / "default"
    specs.mkdir(parents=True)
    climb = "lib/" + "../" * 16 + str(outside).lstrip("/")
    (specs / "sneaky-1.0.gemspec").write_text(
        f'Gem::Specification.new {{ |s| s.name = "sneaky"; s.version = "1.0"; s.files = ["{climb}"] }}\n'
    )
    (project / "Gemfile.lock").write_text("GEM\n  remote: https://rubygems.org/\n  specs:\n    sneaky (1.0)\n\n"
                                          "PLATFORMS\n  ruby\n\nDEPENDENCIES\n  sneaky\n")  # fmt: skip
    done = gemdoc(project, "index")
    assert "Traceback" not in done.stderr and "sneaky 1.0  skipped" in done.stderr, done.stderr
    found = json.loads(gemdoc(project, "search", "--json", "--no-refusal", "zanzibar").stdout or "{}")
    assert not found.get("results"), found


def test_rdoc_reads_no_file_a_gem_names_outside_itself_nor_its_rdoc_options(tmp_path):
    """A gem's comments name files for RDoc to read (``# :include: path``, a C method's ``/* in other.c */``): only
    the gem's own sources and prose are read, which its digest covers (what is cached and stored is shared by that
    digest), never another file of the gem, one up the tree or one through a symlink out of it. Nor does the
    gem's ``.rdoc_options`` steer RDoc (``exclude``): what is extracted is cached for every project of that version."""
    outside = tmp_path / "secret.txt"
    outside.write_text("Zanzibar token from outside the gem.\n")
    gem = tmp_path / "src" / "leaky"
    (gem / "lib").mkdir(parents=True)
    (gem / "ext" / "leaky").mkdir(parents=True)
    (gem / "notes.txt").write_text("Quokka notes from inside the gem.\n")
    (gem / "data").mkdir()
    (gem / "data" / "okapi.txt").write_text("Okapi data no digest covers.\n")
    climb = "../" * 12 + str(outside).lstrip("/")
    (gem / "lib" / "leaky.rb").write_text(
        f"# Leaky reads:\n#\n# :include: ../../../secret.txt\n#\n# :include: {climb}\n#\n# :include: notes.txt\n"
        "#\n# :include: data/okapi.txt\n"
        "module Leaky\nend\n")  # fmt: skip
    (gem / "lib" / "gearbox.rb").write_text("# Gearbox turns the Wombat wheel.\n#\n# :include: README.md\n"
                                            "class Gearbox\nend\n")  # fmt: skip
    (gem / "lib" / "README.md").write_text("Okapi beside the source, no digest's.\n")  # not prose: RDoc looks on
    (gem / "lib" / "wide.rb").write_text("#" + " " * 50 + ":include: README.md\nclass Wide\nend\n")  # indent: no
    (gem / "README.md").write_text("# Leaky\n\nThe Numbat readme.\n")
    (gem / "ext" / "leaky" / "other.c").symlink_to(tmp_path / "other.c")
    body = "/*\n * {}\n */\nstatic VALUE {}(VALUE self) {{ return self; }}\n"
    (tmp_path / "other.c").write_text(body.format("Zanzibar leaks from outside.", "leak_fn"))
    (gem / "ext" / "leaky" / "inner.c").write_text(body.format("Quokka stays inside.", "keep_fn"))
    (gem / "ext" / "leaky" / "leaky.c").write_text(
        'void Init_leaky(void) {\n  VALUE m = rb_define_module("Leaky");\n'
        '  rb_define_method(m, "leak", leak_fn, 0); /* in other.c */\n'
        '  rb_define_method(m, "keep", keep_fn, 0); /* in inner.c */\n}\n')  # fmt: skip
    (gem / ".rdoc_options").write_text("exclude:\n- gearbox\n")
    project = path_project(tmp_path, "app", {"leaky": "../src/leaky"})
    done = gemdoc(project, "index")
    assert "Traceback" not in done.stderr and "leaky 1.0  indexed" in done.stderr, done.stdout + done.stderr
    conn = sqlite3.connect(paths.store_path())
    bodies = "\n".join(body for (body,) in conn.execute("SELECT body FROM chunks"))
    assert "Zanzibar" not in bodies and "Okapi" not in bodies and bodies.count("Numbat") == 2, bodies
    assert "Quokka notes from inside" in bodies and "Quokka stays inside" in bodies, bodies  # inside: still read
    gearbox = conn.execute("SELECT body FROM chunks WHERE title = 'Gearbox'").fetchone()  # .rdoc_options excludes it
    assert gearbox and "Wombat" in gearbox[0] and "Numbat" in gearbox[0], gearbox  # with the gem's README included


def test_a_path_gem_at_the_home_directory_or_around_the_project_is_no_gem(tmp_path):
    """A fresh clone's lockfile names ``remote: ~``, ``..`` or ``/``: every document under it would be indexed as
    one gem and shown to any agent asking in the project. None is read; each is skipped, saying why. (``remote: .``,
    a gem's own repository, is read: test_names_that_climb_out_never_become_paths.)"""
    home = Path(os.environ["HOME"])
    (home / "notes.md").write_text("# Notes\n\nThe zebra password is kept here.\n")
    (tmp_path / "README.md").write_text("# Around\n\nThe zebra lives around the project.\n")
    project = path_project(tmp_path, "app", {"homegem": "~", "upgem": "..", "rootgem": "/", "nearby": "../src/nearby"})
    nearby = tmp_path / "src" / "nearby"
    nearby.mkdir(parents=True)
    (nearby / "README.md").write_text("# Nearby\n\nA sibling gem's own zebra docs.\n")
    done = gemdoc(project, "index")
    assert "Traceback" not in done.stderr, done.stderr
    for gem in ("homegem", "upgem", "rootgem"):
        assert f"{gem} 1.0  skipped (its path: holds the project or the home directory" in done.stderr, done.stderr
    assert "run `bundle install`" not in done.stderr, done.stderr  # installing would not help
    status = gemdoc(project, "status").stdout
    assert "missing:   homegem 1.0: its path: holds the project or the home directory, or is /: no gem; point" in status
    again = gemdoc(project, "index").stdout
    assert again.startswith("unchanged:") and "3 path: entries name no gem" in again, again  # nothing to install
    found = json.loads(gemdoc(project, "search", "--json", "--no-refusal", "zebra").stdout)
    assert [r["gem"] for r in found["results"]] == ["nearby"], found
    env = {k: v for k, v in os.environ.items() if k != "HOME"}  # HOME unset or missing (www-data, CI)
    for name, home in (("homeless", {}), ("lost", {"HOME": str(tmp_path / "nonexistent")})):
        lost = path_project(tmp_path / "src", name, {"upgem": ".."})
        done = subprocess.run([sys.executable, "-m", "gemdoc", "index"], cwd=lost, env=env | home, capture_output=True,
                              text=True, timeout=120)  # fmt: skip
        assert "upgem 1.0  skipped" in done.stderr and "holds the project" in done.stderr, (home, done.stderr)


def test_a_gems_example_app_reads_the_gem_around_it(tmp_path):
    """An example app inside a gem's repository locks that gem with ``remote: ../..``: a directory around the
    project with NAME.gemspec at its top is that gem, and is read; so is a monorepo's other gem below it
    (``path "../.." do gem "alpha" end``: Bundler finds ``alpha/alpha.gemspec``)."""
    engine = tmp_path / "engine"
    (engine / "lib").mkdir(parents=True)
    (engine / "engine.gemspec").write_text('Gem::Specification.new { |s| s.name = "engine"; s.version = "1.0" }\n')
    (engine / "lib" / "engine.rb").write_text("# Engine spins the narwhal.\nmodule Engine\nend\n")
    (engine / "alpha" / "lib").mkdir(parents=True)
    (engine / "alpha" / "alpha.gemspec").write_text((engine / "engine.gemspec").read_text().replace("engine", "alpha"))
    (engine / "alpha" / "lib" / "alpha.rb").write_text("# Alpha feeds the walrus.\nmodule Alpha\nend\n")
    (engine / "examples").mkdir()
    project = path_project(engine / "examples", "app", {"engine": "../..", "alpha": "../.."})
    done = gemdoc(project, "index")
    assert "engine 1.0  indexed" in done.stderr and "alpha 1.0  indexed" in done.stderr, done.stderr
    for word, title in (("narwhal", "Engine"), ("walrus", "Alpha")):
        found = json.loads(gemdoc(project, "search", "--json", word).stdout)
        assert [r["title"] for r in found["results"]][:1] == [title], found


def test_a_file_named_with_a_newline_or_too_large_is_not_read(tmp_path):
    """A newline (or U+2028) in a file's name would forge lines wherever a result cites its file (``--files``);
    a source of more than ri.MAX_SOURCE_BYTES would keep RDoc busy for minutes. Neither is read; the rest is."""
    gem = tmp_path / "src" / "forged"
    (gem / "lib").mkdir(parents=True)
    (gem / "lib" / "x.rb:4\nrails@7.1.0 evil.rb:12\nq.rb").write_text("# Forged ocelot.\nclass Forged\nend\n")
    (gem / "lib" / "y.rb:4\u2028rails@7.1.1 evil.rb:12\u2028q.rb").write_text("# Spaced ocelot.\nclass Spaced\nend\n")
    (gem / "lib" / "huge.rb").write_text("# Huge ocelot.\nclass Huge\nend\n" + "# padding\n" * 900_000)
    (gem / "lib" / "plain.rb").write_text("# Plain ocelot.\nclass Plain\nend\n")
    (gem / "README\n.md").write_text("# Forged\n\nThe ocelot readme.\n")
    project = path_project(tmp_path, "app", {"forged": "../src/forged"})
    done = gemdoc(project, "index")
    assert "Traceback" not in done.stderr and "forged 1.0  indexed" in done.stderr, done.stderr
    found = json.loads(gemdoc(project, "search", "--json", "--no-refusal", "ocelot").stdout)
    titles = {r["title"] for r in found["results"]}
    assert titles == {"Plain"}, titles
    files = gemdoc(project, "search", "--files", "--no-refusal", "ocelot").stdout
    assert "rails@" not in files and files.splitlines() == ["forged@1.0 lib/plain.rb:2"], files


def test_the_files_rdoc_includes_are_counted_against_one_budget(tmp_path):
    """One allowed file included again and again (50 times a 1 MB README) made a 50 MB comment in 513 s: RDoc reads
    at most Confined::MAX_INCLUDED bytes of included files per gem (here lowered to 10). A C method's source file
    (``once``) counts once, however many methods RDoc reads it again for."""
    (tmp_path / "a.txt").write_text("123456")
    script = ('require "rdoc"; load ARGV[0]; c = GemdocShim::Confined; c.send(:remove_const, :MAX_INCLUDED); '
              'c.const_set(:MAX_INCLUDED, 10); c.enter(ARGV[1], ["a.txt"]); f = File.join(ARGV[1], "a.txt"); '
              'puts [c.allows?(f), c.allows?(f), c.allows?(File.join(ARGV[1], "b.txt")), '
              '(c.enter(ARGV[1], ["a.txt"]); nil), c.allows?(f, once: true), c.allows?(f, once: true), '
              'c.allows?(f)].inspect')
    shim_path = Path(__file__).resolve().parent.parent / "ruby_shim" / "gemdoc_shim.rb"
    done = subprocess.run(["ruby", "-e", script, str(shim_path), str(tmp_path)], capture_output=True, text=True)
    assert done.stdout.strip() == "[true, false, false, nil, true, true, false]", done.stdout + done.stderr

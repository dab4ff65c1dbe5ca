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


@pytest.fixture(scope="module")
def indexed_example(tmp_path_factory) -> tuple[Path, dict]:
    """The example project indexed once in its own gemdoc home, shared by the read-only tests below."""
    base = tmp_path_factory.mktemp("first_hour")
    env = {k: v for k, v in os.environ.items() if k not in ("BUNDLE_GEMFILE", "GEM_HOME", "GEM_PATH")}
    env |= {"HOME": str(base / "home"), "GEMDOC_HOME": str(base / "gemdoc"), "XDG_DATA_HOME": str(base / "data"),
            "XDG_CACHE_HOME": str(base / "cache"), "XDG_CONFIG_HOME": str(base / "config")}  # fmt: skip
    project = base / "demo"
    shutil.copytree(ROOT / "examples" / "demo", project, ignore=shutil.ignore_patterns(".gemdoc.yml"))
    before = _files(project)
    status = gemdoc("status", cwd=project, env=env)
    assert "not trusted: your first `gemdoc index` there" in status.stdout, status.stdout  # not `gemdoc trust`
    done = gemdoc("index", cwd=project, env=env)
    assert done.returncode == 0, done.stderr
    assert _files(project) == before | {".gemdoc.yml"}  # SKILL.md: `gemdoc index` writes only .gemdoc.yml
    assert "trusted (use)" in gemdoc("status", cwd=project, env=env).stdout  # SKILL.md: and trusts it for use
    return project, env


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.mark.parametrize("words", ["", "   ", "?!", "#.::"])
def test_a_query_without_words_is_a_usage_error(indexed_example, words):
    project, env = indexed_example
    for command in ("search", "query", "vsearch"):
        done = gemdoc(command, words, cwd=project, env=env)
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        assert done.stderr.count("\n") == 1 and "no words" in done.stderr and not done.stdout, done.stderr


@pytest.mark.parametrize("uri, says", [
    ("gemdoc://rake@13.0.6/lib/rake/task.rb#L99999", "outside lib/rake/task.rb"),
    ("gemdoc://rake@13.0.6/lib/rake/task.rb#L0", "outside lib/rake/task.rb"),
    ("gemdoc://rake@13.0.6/lib/rake/nothing.rb#L3", "not a file of rake"),
    ("gemdoc://rack@2.2.0/lib/rack.rb#L1", "not in the index of this project's bundle"),
    ("gemdoc://rake@13.0.6/lib/rake/task.rb#No%23such", "nothing at"),
    ("https://example.com/x", "not a gemdoc URI"),
])  # fmt: skip
def test_show_of_a_uri_naming_nothing_is_a_usage_error(indexed_example, uri, says):
    project, env = indexed_example
    for extra in ((), ("--source",)):
        done = gemdoc("show", uri, *extra, cwd=project, env=env)
        assert done.returncode == 2 and says in done.stderr, (extra, done.stdout, done.stderr)
        assert done.stderr.count("\n") == 1 and not done.stdout


def test_show_takes_the_project_option_like_every_project_command(indexed_example, tmp_path):
    project, env = indexed_example
    done = gemdoc("show", "-C", str(project), "gemdoc://rake@13.0.6/lib/rake/task.rb#L120", cwd=tmp_path, env=env)
    assert done.returncode == 0 and "rake 13.0.6" in done.stdout, done.stderr
    sentence = re.search(r"Every command that acts on one project \(all but (.*?)\) takes `--project DIR`", README, re.S)
    exempt = {" ".join(w for w in name.split() if w.islower()) for name in re.findall(r"`([^`]+)`", sentence[1])}
    from gemdoc.cli import main
    import click

    def walk(group, prefix=""):
        for name, command in group.commands.items():
            if isinstance(command, click.Group):
                yield from walk(command, f"{prefix}{name} ")
            yield f"{prefix}{name}", command

    for name, command in walk(main):
        if name in exempt or name == "skill":
            continue
        assert any("-C" in p.opts for p in command.params), f"gemdoc {name} has no -C/--project"


def test_a_long_query_and_a_long_result_are_cut_at_a_word_boundary(indexed_example):
    project, env = indexed_example
    words = ["stub", "method", "minitest", "replacing", "temporary", "duration", "block"]
    long_query = " ".join(words[i % len(words)] for i in range(3000))  # about 25,000 characters
    reply = json.loads(gemdoc("search", "--json", long_query, cwd=project, env=env).stdout)
    assert long_query.startswith(reply["query"]) and long_query[len(reply["query"])] == " ", reply["query"][-30:]
    assert any("truncated" in note for note in reply["notes"])
    whole = gemdoc("search", "--json", "-n", "1", "Object#stub", cwd=project, env=env).stdout
    text = json.loads(whole)["results"][0]["text"]
    budget = str(len(whole.strip()) - 200)  # the first result must lose about 200 characters
    cut = json.loads(gemdoc("search", "--json", "-n", "1", "--max-chars", budget, "Object#stub", cwd=project,
                            env=env).stdout)["results"][0]  # fmt: skip
    assert cut["text_truncated"] and cut["text"].endswith("…")
    kept = cut["text"][:-1]
    assert text.startswith(kept) and text[len(kept)].isspace(), kept[-30:]


INT8 = ROOT.parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx-int8"
UNREACHABLE = "http://127.0.0.1:9"  # the discard port: nothing listens, a connection is refused at once


def test_embed_without_network_fails_fast_naming_the_network_and_the_model_dir(indexed_example):
    project, env = indexed_example
    offline = {k: v for k, v in env.items() if k not in ("GEMDOC_MODEL_DIR", "HF_HUB_OFFLINE", "NO_PROXY", "no_proxy")}
    offline |= {k: UNREACHABLE for k in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy")}
    import time

    start = time.monotonic()
    done = gemdoc("embed", cwd=project, env=offline, timeout=120)
    seconds = time.monotonic() - start
    assert done.returncode == 1 and seconds < 10, (seconds, done.stderr[-500:])
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("gemdoc: cannot download"), done.stderr
    assert "no network" in done.stderr and "GEMDOC_MODEL_DIR" in done.stderr and "model_dir" in done.stderr
    assert "GEMDOC_MODEL_DIR" in gemdoc("embed", "--help", cwd=project, env=env).stdout


async def _mcp_query(project: Path, env: dict) -> dict:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "gemdoc", "mcp"],
                                   env=env | {"PYTHONPATH": str(ROOT)}, cwd=str(project))  # fmt: skip
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            answer = await session.call_tool("query", {"question": "how do I stub a method in a test", "n": 3})
            return json.loads(answer.content[0].text)


@pytest.mark.slow
@pytest.mark.skipif(not INT8.is_dir(), reason="needs the small model in ../shared/models")
def test_the_model_is_found_where_embed_got_it_or_query_answers_by_keyword(indexed_example, tmp_path):
    import anyio

    project, env = indexed_example
    model = tmp_path / "model"
    shutil.copytree(INT8, model)
    embedded = gemdoc("embed", "-q", cwd=project, env=env | {"GEMDOC_MODEL_DIR": str(model)})
    assert embedded.returncode == 0, embedded.stderr
    plain = {k: v for k, v in env.items() if k != "GEMDOC_MODEL_DIR"}  # a later shell, or the README's .mcp.json
    reply = json.loads(gemdoc("query", "--json", "how do I stub a method in a test", cwd=project, env=plain).stdout)
    assert reply["mode"] == "hybrid" and reply["results"], reply["notes"]
    assert anyio.run(_mcp_query, project, plain)["mode"] == "hybrid"

    shutil.rmtree(model)  # the model is gone: query still answers, by keyword, and says why
    done = gemdoc("query", "--json", "how do I stub a method in a test", cwd=project, env=plain)
    reply = json.loads(done.stdout)
    assert done.returncode == 0 and reply["mode"] == "keyword" and reply["results"], done.stderr
    assert any("answered by keyword alone" in note for note in reply["notes"]) and "keyword alone" in done.stderr
    text = gemdoc("query", "how do I stub a method in a test", cwd=project, env=plain)
    assert (text.stdout + text.stderr).count("keyword alone") == 1, text.stdout + text.stderr  # said once
    over_mcp = anyio.run(_mcp_query, project, plain)
    assert "error" not in over_mcp and over_mcp["mode"] == "keyword" and over_mcp["results"], over_mcp
    assert any("answered by keyword alone" in note for note in over_mcp["notes"])


def bundled_gem_dirs() -> list[Path]:
    """The gems Ruby ships (its bundled gems, under its own lib directory), each in its own directory."""
    code = 'print File.join(RbConfig::CONFIG["rubylibprefix"], "gems", RbConfig::CONFIG["ruby_version"])'
    home = subprocess.run(["ruby", "-e", code], capture_output=True, text=True, check=True).stdout
    return sorted(p for p in (Path(home) / "gems").iterdir() if p.is_dir())


def test_prose_filters_drop_no_guide_of_rubys_bundled_gems():
    from gemdoc import prose

    dropped: dict[str, list[str]] = {}
    verdicts = {}
    for gem in bundled_gem_dirs():
        for verdict in prose.audit(gem):
            verdicts[f"{gem.name}/{verdict.relative}"] = verdict
            if verdict.rule:
                dropped.setdefault(verdict.rule, []).append(f"{gem.name}/{verdict.relative}")
    listing = "\n".join(f"{rule}: {len(names)}: {' '.join(names[:12])}" for rule, names in sorted(dropped.items()))
    assert verdicts["rake-13.0.6/doc/rakefile.rdoc"].source_type == "doc", listing
    in_trees = [name for rule in prose.NOT_PROSE for name in dropped.get(rule, []) if name.count("/") > 1]
    assert in_trees == [], f"a name rule dropped files of doc trees:\n{listing}"
    guides = [name for name, v in verdicts.items() if name.count("/") > 1 and v.rule
              and Path(name).suffix in prose.PROSE_SUFFIXES - {""}]  # fmt: skip
    assert guides == [], f"prose files of doc trees dropped:\n{listing}"
    assert dropped["license"] and all(Path(n).name.upper().startswith("LICENSE") for n in dropped["license"]), listing


def test_rakes_main_guide_is_searchable(indexed_example):
    project, env = indexed_example
    reply = json.loads(gemdoc("search", "--json", "-n", "3", "Tasks that Expect Parameters", cwd=project, env=env).stdout)
    assert "doc/rakefile.rdoc" in [r["path"] for r in reply["results"]], [r["uri"] for r in reply["results"]]


META_GEMSPEC = """Gem::Specification.new do |s|
  s.name = "gemdoc_meta"
  s.version = "0.1.0"
  s.summary = "A meta-gem, as rails is: no code of its own, only dependencies"
  s.authors = ["gemdoc"]
  s.files = ["README.md"]
  s.add_dependency "gemdoc_fixture", "1.2.3"
end
"""


@pytest.fixture
def meta_project(tmp_path, ruby_env) -> tuple[Path, dict]:
    """A project whose one dependency is a meta-gem standing for the fixture gem (as rails stands for
    ActiveRecord and friends), built with `gem build` and installed with `gem install --local`."""
    src, home = tmp_path / "meta_src", tmp_path / "meta_home"
    src.mkdir()
    (src / "gemdoc_meta.gemspec").write_text(META_GEMSPEC)
    (src / "README.md").write_text("# gemdoc_meta\n\nInstalls the fixture gem.\n")
    subprocess.run(["gem", "build", "gemdoc_meta.gemspec"], cwd=src, env=ruby_env, check=True, capture_output=True)
    subprocess.run(["gem", "install", "--local", "--ignore-dependencies", "--no-document", "--install-dir", str(home),
                    str(src / "gemdoc_meta-0.1.0.gem")], env=ruby_env, check=True, capture_output=True)  # fmt: skip
    env = ruby_env | {"GEM_PATH": f"{home}:{ruby_env['GEM_PATH']}"}
    project = tmp_path / "meta_app"
    project.mkdir()
    (project / "Gemfile").write_text('source "https://rubygems.org"\ngem "gemdoc_meta"\n')
    subprocess.run(["bundle", "lock", "--local"], cwd=project, env=env, check=True, capture_output=True)
    return project, env


async def _mcp_search(project: Path, env: dict, question: str) -> dict:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "gemdoc", "mcp"],
                                   env=env | {"PYTHONPATH": str(ROOT)}, cwd=str(project))  # fmt: skip
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return json.loads((await session.call_tool("search", {"query": question, "n": 3})).content[0].text)


@pytest.mark.slow
def test_the_default_scope_has_a_meta_gems_dependencies_and_a_gem_outside_is_named(meta_project):
    import anyio

    project, env = meta_project
    default = gemdoc("index", cwd=project, env=env)
    assert default.returncode == 0 and "gemdoc_fixture 1.2.3  indexed" in default.stderr, default.stderr
    reply = json.loads(gemdoc("search", "--json", "GemdocFixture", cwd=project, env=env).stdout)
    assert reply["notes"] == [] and reply["results"][0]["gem"] == "gemdoc_fixture", reply
    assert "scope meta" in gemdoc("status", cwd=project, env=env).stdout

    direct = gemdoc("index", "--direct", cwd=project, env=env)
    assert direct.returncode == 0, direct.stderr
    note = "gemdoc_fixture 1.2.3 is in this bundle but not in the indexed scope (direct dependencies): " \
           "`gemdoc index --all` adds it"  # fmt: skip
    text = gemdoc("search", "GemdocFixture::Widget", cwd=project, env=env)
    assert note in text.stdout, text.stdout + text.stderr
    assert note in json.loads(gemdoc("search", "--json", "GemdocFixture.greet", cwd=project, env=env).stdout)["notes"]
    assert note in anyio.run(_mcp_search, project, env, "how do I call GemdocFixture")["notes"]

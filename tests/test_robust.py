"""Hostile and broken input (issue 12): a damaged store is named and repaired, parsers fail loud
with one line, a cache removed mid-run is regenerated, the MCP server answers what it cannot
parse, and random input never makes the CLI crash, write outside its dirs or read outside the
scoped gems. Commands run as real `gemdoc` subprocesses over real SQLite stores."""

import json
import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gemdoc import paths, store

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
    search = {"name": "search", "arguments": {"query": "widget"}}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": search}
    [over_mcp] = _mcp_exchange(indexed, [json.dumps(call).encode()])
    said = over_mcp["result"]["content"][0]["text"]
    assert over_mcp["result"]["isError"] and "the store at" in said and "reindex" in said, over_mcp
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


@pytest.fixture
def small(tmp_path) -> Path:
    project = prose_project(tmp_path, guides=3)
    assert gemdoc(project, "index").returncode == 0
    return project


def test_a_lockfile_with_a_bom_and_crlf_line_ends_parses(tmp_path):
    project = prose_project(tmp_path, guides=1)
    lock = project / "Gemfile.lock"
    lock.write_bytes(b"\xef\xbb\xbf" + lock.read_text().replace("\n", "\r\n").encode())
    done = gemdoc(project, "index")
    assert done.returncode == 0 and "1 gems: 1 indexed" in done.stdout, done.stdout + done.stderr
    assert gemdoc(project, "index").stdout.startswith("unchanged: Gemfile.lock")
    assert "Call widgety" in gemdoc(project, "search", "widgety frobnicate").stdout
    lock.write_text(lock.read_bytes().decode().removeprefix("\ufeff").replace("\r\n", "\n"))  # saved again, plain
    assert gemdoc(project, "index").stdout.startswith("unchanged: Gemfile.lock")  # the same lock, not re-read


CONFLICTED = "GEM\n  specs:\n<<<<<<< HEAD\n    rake (13.0.6)\n=======\n    rake (13.1.0)\n>>>>>>> main\n"


@pytest.mark.parametrize("text, where, fragment", [
    (CONFLICTED + "\nDEPENDENCIES\n  rake\n", 3, "merge conflict marker"),
    ("GEM\n  specs:\n    rake (13.0.6)\n\nDEPENDENCIES\n  rake\n<<<<<<< ours\n", 7, "merge conflict marker"),
    ("GEM\n  specs:\n    rake (13.0.6)\nrake 13.0.6\n\nDEPENDENCIES\n  rake\n", 4, "unreadable line"),
    ("GEM\n  specs:\n\trake (13.0.6)\n\nDEPENDENCIES\n  rake\n", 3, "unreadable line"),
    ("GEM\n  remote https://rubygems.org/\n  specs:\n    rake (13.0.6)\n\nDEPENDENCIES\n  rake\n", 2,
     "unreadable line"),
])  # fmt: skip
def test_conflict_markers_and_unparsable_lines_are_one_line_naming_file_and_line(tmp_path, text, where, fragment):
    project = tmp_path / "app"
    project.mkdir()
    (project / "Gemfile.lock").write_text(text)
    for args in (["index"], ["reindex", "--dry-run"]):
        line = one_line(gemdoc(project, *args), fragment)
        assert f"Gemfile.lock:{where}: " in line and "bundle lock" in line, line
    assert not paths.store_path().exists()


def test_a_query_of_invalid_utf8_is_replaced_and_json_stays_json(small):
    done = subprocess.run([sys.executable, "-m", "gemdoc", "search", b"widgety \xff\xfe frobnicate", "--json"],
                          cwd=small, capture_output=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout.decode("utf-8"))  # strict: every byte is UTF-8
    assert "\ufffd" in reply["query"] and reply["results"], reply


@pytest.mark.parametrize("address", [
    "gemdoc://widgety@1.0/README.md%00#L1",
    "gemdoc://widgety@1.0/" + "a/" * 60_000 + "x.rb#L1",
    "gemdoc://widgety@1.0/README.md#" + "Foo" * 34_000,
    "gemdoc://widgety@1.0/README.md#" + "%00" * 10,
])  # fmt: skip
def test_show_refuses_a_hostile_uri_with_a_short_line_and_exit_2(small, address):
    for args in (["show", address], ["show", address, "--source"]):
        done = gemdoc(small, *args)
        line = one_line(done, "URI")
        assert done.returncode == 2 and len(line) < 300, line


def test_the_documented_minimum_budget_keeps_the_first_result_in_every_mode(small):
    query = ["search", "widgety", "frobnicate", "-n", "5", "--max-chars", "500"]
    text = gemdoc(small, *query)
    first = [w for w in text.stdout.split() if w.startswith("gemdoc://")][0]
    reply = json.loads(gemdoc(small, *query, "--json").stdout)
    assert reply["results"] and reply["results"][0]["uri"] == first, reply
    assert reply["results"][0]["text_truncated"] is True
    listed = gemdoc(small, *query, "--files").stdout.splitlines()
    assert listed[0] == "widgety@1.0 " + first.split("/", 3)[3].replace("#L", ":"), listed


# Loaded into every Ruby gemdoc starts (RUBYOPT): when Ruby exits while a cache entry is being generated
# (a scratch directory exists under the cache's .tmp), remove the whole ri cache, as `rm -rf` from another
# shell would, at most as many times as the countdown file says.
CACHE_REMOVER = """
at_exit do
  countdown = ENV.fetch("GEMDOC_TEST_COUNTDOWN")
  cache = File.join(ENV.fetch("GEMDOC_HOME"), "cache", "ri")
  left = File.exist?(countdown) ? File.read(countdown).to_i : 0
  if left > 0 && !Dir.glob(File.join(cache, ".tmp", "*")).empty?
    File.write(countdown, (left - 1).to_s)
    require "fileutils"
    FileUtils.rm_rf(cache)
  end
end
"""


def api_project(base: Path) -> Path:
    """A `path:` gem with Ruby API docs (so RDoc runs and fills the ri cache) and a README."""
    project = prose_project(base, guides=1)
    lib = base / "widgety" / "lib"
    lib.mkdir()
    (lib / "widgety.rb").write_text(
        "# Frobnicates widgets.\nmodule Widgety\n  # Spin the widget +times+ times.\n"
        "  def self.spin(times)\n  end\nend\n"
    )
    return project


def removing_the_cache(base: Path, times: int) -> dict:
    remover = base / "remove_cache.rb"
    remover.write_text(CACHE_REMOVER)
    (base / "countdown").write_text(str(times))
    return os.environ | {"RUBYOPT": f"-r{remover}", "GEMDOC_TEST_COUNTDOWN": str(base / "countdown")}


def test_disk_bytes_counts_a_tree_once_without_following_links(tmp_path, monkeypatch):
    """What `status` and `gc` report: every file's own size, a link as a link (the top one too), a loop
    walked once; a directory it may not read (another user's cache entry) counts 0 instead of failing."""
    from gemdoc import cleanup

    outside = tmp_path / "outside.bin"
    outside.write_bytes(b"x" * 10_000)
    tree = tmp_path / "tree"
    (tree / "a" / "b").mkdir(parents=True)
    (tree / "a" / "x.ri").write_bytes(b"y" * 100)
    (tree / "a" / "b" / "z.ri").write_bytes(b"z" * 50)
    (tree / "a" / "far").symlink_to(outside)
    (tree / "a" / "b" / "loop").symlink_to(tree)
    (tmp_path / "linked").symlink_to(tree)
    links = (tree / "a" / "far").lstat().st_size + (tree / "a" / "b" / "loop").lstat().st_size
    assert cleanup.disk_bytes(tree) == 150 + links
    assert cleanup.disk_bytes(tmp_path / "linked") == (tmp_path / "linked").lstat().st_size
    assert cleanup.disk_bytes(tree / "a" / "x.ri") == 100 and cleanup.disk_bytes(tmp_path / "absent") == 0
    scandir = os.scandir

    def refusing(path):
        if str(path).endswith("/b"):
            raise PermissionError(13, "Permission denied", str(path))
        return scandir(path)

    monkeypatch.setattr(cleanup.os, "scandir", refusing)
    assert cleanup.disk_bytes(tree) == 100 + (tree / "a" / "far").lstat().st_size


def test_a_symlinked_top_directory_is_not_walked(tmp_path):
    """A `path:` gem's `app -> /` (or `lib -> ../elsewhere`) must not make gemdoc read outside the gem."""
    from gemdoc import files

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.rb").write_text("class Secret; end\n")
    gem = tmp_path / "gem"
    (gem / "lib").mkdir(parents=True)
    (gem / "lib" / "own.rb").write_text("class Own; end\n")
    (gem / "app").symlink_to(outside)
    assert [p.name for p in files.tree(gem / "lib")] == ["own.rb"]
    assert list(files.tree(gem / "app")) == []


def test_a_cache_removed_while_an_entry_is_written_is_regenerated(tmp_path):
    project = api_project(tmp_path)
    done = gemdoc(project, "index", env=removing_the_cache(tmp_path, 1))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "1 indexed" in done.stdout and (tmp_path / "countdown").read_text() == "0", done.stdout + done.stderr
    assert "Widgety::spin" in gemdoc(project, "search", "Widgety.spin").stdout
    assert list(paths.ri_cache_dir().glob("widgety-1.0-*/extract.json"))


def test_a_cache_removed_on_every_attempt_is_a_failure_the_next_index_redoes(tmp_path):
    project = api_project(tmp_path)
    done = gemdoc(project, "index", env=removing_the_cache(tmp_path, 99))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "was removed 3 times while gemdoc wrote to it" in done.stderr and "1 failed" in done.stdout, done.stderr
    again = gemdoc(project, "index")
    assert again.returncode == 0 and "1 indexed" in again.stdout, again.stdout + again.stderr
    status = json.loads(gemdoc(project, "status", "--json").stdout)
    assert status["failures"] == [], status


def test_a_damaged_cache_entry_is_regenerated(tmp_path):
    project = api_project(tmp_path)
    assert gemdoc(project, "index").returncode == 0
    for entry in paths.ri_cache_dir().glob("widgety-1.0-*/extract.json"):
        entry.write_text(entry.read_text()[:100])  # cut short, as by a full disk
    done = gemdoc(project, "index", "--force")
    assert done.returncode == 0 and "Traceback" not in done.stderr and "1 updated" in done.stdout, done.stderr
    assert "Widgety::spin" in gemdoc(project, "search", "Widgety.spin").stdout


def test_index_survives_the_cache_being_removed_over_and_over(tmp_path):
    """The real race: another process removes the ri cache every few milliseconds during `index --force`."""
    project = api_project(tmp_path)
    remover = subprocess.Popen([sys.executable, "-c", (
        "import shutil, sys, time\n"
        "while True:\n    shutil.rmtree(sys.argv[1], ignore_errors=True)\n    time.sleep(0.005)\n"
    ), str(paths.ri_cache_dir())])  # fmt: skip
    try:
        runs = [gemdoc(project, "index", "--force") for _ in range(4)]
    finally:
        remover.kill()
        remover.wait()
    for done in runs:
        assert done.returncode in (0, 2) and "Traceback" not in done.stderr, done.stderr
        assert "Errno" not in done.stderr and "ENOENT" not in done.stderr, done.stderr
    last = gemdoc(project, "index")
    assert last.returncode == 0 and "Traceback" not in last.stderr, last.stderr
    if runs[-1].returncode == 2 and all(done.returncode == 2 for done in runs):
        assert "1 indexed" in last.stdout or "1 updated" in last.stdout, last.stdout  # else an earlier run wrote it
    conn = store.connect(paths.store_path())
    assert conn.execute("SELECT count(*) FROM gems WHERE state = 'complete' AND chunks > 0").fetchone()[0] == 1


def _mcp_exchange(project: Path, lines: list[bytes], timeout: float = 20) -> list[dict]:
    """Send raw lines to a real `gemdoc mcp` after the handshake; the reply to each, in order
    (None when none came within ``timeout``)."""
    import selectors

    server = subprocess.Popen([sys.executable, "-m", "gemdoc", "mcp"], cwd=project, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    watch = selectors.DefaultSelector()
    watch.register(server.stdout, selectors.EVENT_READ)

    def exchange(raw: bytes) -> dict | None:
        server.stdin.write(raw + b"\n")
        server.stdin.flush()
        if not watch.select(timeout):
            return None
        return json.loads(server.stdout.readline().decode("utf-8"))  # strict UTF-8: the wire is valid JSON

    try:
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}
        assert exchange(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}).encode())
        server.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        return [exchange(raw) for raw in lines]
    finally:
        server.kill()
        server.wait()


def test_the_mcp_server_answers_lines_it_cannot_parse_and_keeps_serving(small):
    search = '{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name": "search", "arguments": %s}}'
    replies = _mcp_exchange(small, [
        b"this is not JSON",
        b'{"jsonrpc": "2.0", "id": 5, "method": 42}',
        (search % (6, '{"query": "widgety \\ud800 frobnicate"}')).encode(),
        (search % (7, '{"query": "widgety frobnicate"}')).encode().replace(b"widgety ", b"widgety \xff "),
        b"[" * 100_000,
        b'{"jsonrpc": "2.0", "id": 8, "method": "tools/list"}',
    ])  # fmt: skip
    assert replies[0]["id"] is None and replies[0]["error"]["code"] == -32700, replies[0]
    assert replies[1]["id"] == 5 and replies[1]["error"]["code"] == -32600, replies[1]
    for reply, ident in zip(replies[2:4], (6, 7)):
        assert reply["id"] == ident and "error" not in reply, reply
        answer = json.loads(reply["result"]["content"][0]["text"])
        assert "\ufffd" in answer["query"] and answer["results"], answer
    assert replies[4]["id"] is None and replies[4]["error"]["code"] == -32700, replies[4]
    assert replies[5]["id"] == 8 and {t["name"] for t in replies[5]["result"]["tools"]} >= {"search", "show"}


def test_a_reply_reads_one_snapshot_of_the_store(small):
    """Every read of one reply sees one state of the store: a gem re-indexed meanwhile cannot pair
    its new rows with the old rowid ranges a reply read first. The writer is not kept waiting (WAL)."""
    reader = store.connect(paths.store_path())
    before = reader.execute("SELECT first_id, last_id FROM gems").fetchall()
    writer = sqlite3.connect(paths.store_path(), timeout=0)
    writer.execute("UPDATE gems SET first_id = first_id + 1000, last_id = last_id + 1000")
    writer.commit()
    writer.close()
    assert reader.execute("SELECT first_id, last_id FROM gems").fetchall() == before
    reader.close()
    after = store.connect(paths.store_path()).execute("SELECT first_id, last_id FROM gems").fetchall()
    assert [(f - 1000, l - 1000) for f, l in after] == [tuple(r) for r in before]


# Property: random lockfiles, manifests, URIs and queries never make the CLI crash, exit outside 0/1/2,
# write outside GEMDOC_HOME (and the project's own .gemdoc.yml), or print a file outside the scoped gem.
# Most examples run in-process (click's CliRunner) for speed; the last test runs real subprocesses.

SECRET = "TOPSECRET-7f3a"
CONFLICT_MARKER = re.compile(r"(<{7}|={7}|>{7})( |$)")
PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
ANY_TEXT = st.text(alphabet=st.characters(exclude_categories=()), max_size=60)  # lone surrogates included
LOCK_LINES = st.one_of(
    st.sampled_from([
        "GEM", "PATH", "GIT", "PLATFORMS", "DEPENDENCIES", "BUNDLED WITH", "RUBY VERSION", "CHECKSUMS", "",
        "  remote: https://rubygems.org/", "  remote: /etc", "  remote: ../../..", "  specs:", "  revision: 0abc123",
        "  ruby", "  widgety!", "  rake", "  rake (>= 1)", "   2.4.19", "<<<<<<< HEAD", "=======", ">>>>>>> main",
        "\t    rake (1.0)", "      rack (~> 3.0)",
    ]),
    st.builds("    {} ({})".format, st.sampled_from(["rake", "widgety", "../../tmp/x", "a b", "é", "x" * 300, "-x"]),
              st.sampled_from(["1.0", "13.0.6", "1.0-x86_64-linux", "../1", "", "1.0 ", "9" * 60])),
    ANY_TEXT.filter(lambda s: "\n" not in s and "\r" not in s),
)  # fmt: skip
SKELETON = [  # a lockfile Bundler could write, of one `path:` gem with no gemspec (found without Ruby)
    "PATH", "  remote: ../widgety", "  specs:", "    widgety (1.0)", "", "PLATFORMS", "  ruby", "",
    "DEPENDENCIES", "  widgety!", "", "BUNDLED WITH", "   2.4.19",
]  # fmt: skip
EDITS = st.lists(st.tuples(st.integers(0, len(SKELETON)), st.one_of(LOCK_LINES, st.none())), max_size=3)


def _edited(edits: list[tuple[int, str | None]]) -> list[str]:
    """The skeleton with lines inserted (a line) or removed (None) at the given positions."""
    lines = list(SKELETON)
    for position, line in edits:
        if line is None:
            del lines[min(position, len(lines) - 1)]
        else:
            lines.insert(position, line)
    return lines


LOCKFILES = st.one_of(
    st.tuples(st.one_of(EDITS.map(_edited), st.lists(LOCK_LINES, max_size=20)), st.booleans(), st.booleans()).map(
        lambda t: (("\ufeff" if t[1] else "") + ("\r\n" if t[2] else "\n").join(t[0])).encode("utf-8", "surrogatepass")
    ),
    st.binary(max_size=200),
)
MANIFESTS = st.one_of(
    st.sampled_from([
        "scope: all\n", "scope: [1]\n", "scope: nope\n", "model: x\nmodel_dir: /etc\n", "model: [a, b]\n",
        "auto_index: no\n", "a: &a [x, x]\nb: &b [*a, *a]\nmodel: *b\n", "!!python/object/apply:os.system [ls]\n",
        "[" * 500, "lockfile_sha256: 12\n", "---\n- 1\n", "",
    ]),
    ANY_TEXT,
).map(lambda text: text.encode("utf-8", "surrogatepass"))
URI_PATHS = st.sampled_from([
    "README.md", "secrets.env", "../secret.txt", "..%2fsecret.txt", "%2e%2e/secret.txt", "doc/../../secret.txt",
    "{secret}", "%2F{secret_rel}", "-", "", "doc/guide0.md", "a/" * 200, "%00", "%ff%fe", "README.md%00.txt",
    "b" * 5000, "c/" * 60_000,
])  # fmt: skip
URIS = st.one_of(
    st.builds("gemdoc://{}@{}/{}#{}".format,
              st.one_of(st.just("widgety"), st.sampled_from(["rake", "passwd", "..", "", "widgety/.."])),
              st.one_of(st.just("1.0"), st.sampled_from(["0", "1.0/..", ""])), URI_PATHS,
              st.one_of(st.sampled_from(["L1", "L0", "L-1", "L99999999999", "widgety", "Foo%23bar", "%00", "F" * 9000]),
                        ANY_TEXT)),
    ANY_TEXT,
)  # fmt: skip
OPTIONS = st.lists(st.one_of(
    st.sampled_from(["--json", "--files", "--explain", "--no-refusal"]),
    st.builds(lambda n: ["-n", str(n)], st.integers(-5, 500)),
    st.builds(lambda n: ["--max-chars", str(n)], st.integers(-1, 300_000)),
    st.builds(lambda x: ["--min-score", x], st.sampled_from(["nan", "inf", "-inf", "0", "1e308", "x"])),
), max_size=3)  # fmt: skip


def _files(top: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_mtime_ns, p.stat().st_size) for p in top.rglob("*") if p.is_file()}


def _cli(project: Path, command: str, *args: str):
    """One in-process run; a result that crashed, exited outside 0/1/2 or leaked a secret fails the test."""
    from click.testing import CliRunner

    from gemdoc.cli import main

    result = CliRunner().invoke(main, [command, "-C", str(project), *args], catch_exceptions=True)
    assert result.exit_code in (0, 1, 2), (args, result.exit_code, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), (args, result.exception)
    output = result.stdout_bytes + result.stderr_bytes
    assert b"Traceback" not in output and SECRET.encode() not in output, (args, output[:500])
    return result


@pytest.fixture
def planted(small, tmp_path) -> Path:
    """The small indexed project, with a secret beside its gem, one inside the gem no index reads, and
    a snapshot of every file outside gemdoc's home and the project manifest."""
    (tmp_path / "secret.txt").write_text(f"{SECRET}\n")
    (tmp_path / "widgety" / "secrets.env").write_text(f"API_KEY={SECRET}\n")
    return small


def _unchanged_outside_gemdoc(tmp_path: Path, before: dict) -> None:
    after = _files(tmp_path)
    allowed = (str(paths.data_dir().parent), str(tmp_path / "app" / ".gemdoc.yml"))
    changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p) and not p.startswith(allowed)}
    assert not changed, changed


@PROPERTY
@given(lock=LOCKFILES, manifest=MANIFESTS)
def test_random_lockfiles_and_manifests_never_crash_or_write_outside(tmp_path, lock, manifest):
    project = tmp_path / "app"
    project.mkdir(exist_ok=True)
    (project / "Gemfile.lock").write_bytes(lock)
    (project / ".gemdoc.yml").write_bytes(manifest)
    before = _files(tmp_path)
    for args in (["status", "--json"], ["index", "--dry-run"], ["search", "widget"], ["hook"]):
        result = _cli(project, *args)
        if args[0] == "status" and result.exit_code == 0:
            json.loads(result.stdout)
    plain = _cli(project, "index", "--dry-run", "--force")  # --force: the outcome of every gem, not the no-op check
    if any(CONFLICT_MARKER.match(line) for line in lock.decode("utf-8", "replace").splitlines()):
        assert plain.exit_code != 0, plain.output  # never read as if the conflict were resolved
    _unchanged_outside_gemdoc(tmp_path, before)
    (project / "Gemfile.lock").write_bytes(b"\xef\xbb\xbf" + lock.replace(b"\n", b"\r\n").removeprefix(b"\xef\xbb\xbf"))
    dressed = _cli(project, "index", "--dry-run", "--force")  # a BOM and CRLF line ends change nothing
    assert (dressed.exit_code, dressed.stdout) == (plain.exit_code, plain.stdout), (dressed.output, plain.output)


@PROPERTY
@given(address=URIS, source=st.booleans())
def test_random_uris_never_read_outside_the_scoped_gem(planted, tmp_path, address, source):
    secret = tmp_path / "secret.txt"
    address = address.replace("{secret}", str(secret)).replace("{secret_rel}", str(secret).lstrip("/"))
    before = _files(tmp_path)
    result = _cli(planted, "show", *(["--source"] if source else []), "--", address)
    if result.exit_code:
        assert len(result.stderr) < 400 and result.stderr.count("\n") == 1, result.stderr[:500]  # one short line
    _unchanged_outside_gemdoc(tmp_path, before)


QUERIES = st.one_of(
    st.sampled_from(["widgety frobnicate", "Guide 2", "Section 4 widget", "widgety"]),
    st.builds("{} {}".format, st.sampled_from(["widgety", "frobnicate the widget"]), ANY_TEXT),
    ANY_TEXT,
).filter(lambda s: s.strip() and not s.startswith("-"))


@PROPERTY
@given(query=QUERIES, options=OPTIONS)
def test_random_queries_and_options_work_in_every_output_mode(planted, query, options):
    """Text, --json and --files list the same first result for any query and option values."""
    args = [a for option in options for a in ([option] if isinstance(option, str) else option)]
    args = [a for a in args if a not in ("--json", "--files")]
    text = _cli(planted, "search", query, *args)
    reply = _cli(planted, "search", query, *args, "--json")
    listed = _cli(planted, "search", query, *args, "--files")
    assert text.exit_code == reply.exit_code == listed.exit_code, (text.output, reply.output, listed.output)
    if reply.exit_code:
        return
    results = json.loads(reply.stdout_bytes.decode("utf-8"))["results"]
    first_text = re.search(r"gemdoc://\S+", text.stdout)
    assert [r["uri"] for r in results[:1]] == ([first_text.group()] if first_text else []), (text.stdout, results)
    files = listed.stdout.splitlines()
    assert len(files[:1]) == len(results[:1]), (files, results)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(address=URIS, query=st.binary(min_size=1, max_size=30).filter(lambda b: b"\x00" not in b))
def test_real_subprocesses_take_random_bytes_and_uris(planted, tmp_path, address, query):
    before = _files(tmp_path)
    address = address.replace("{secret}", str(tmp_path / "secret.txt")).replace("{secret_rel}", "secret.txt")
    address = address.replace("\x00", "%00")  # an argv string cannot hold NUL
    for args in (["search", "--json", "--", query], ["show", "--source", "--", address.encode("utf-8", "replace")]):
        done = subprocess.run([sys.executable, "-m", "gemdoc", *args], cwd=planted, capture_output=True, timeout=60)
        assert done.returncode in (0, 1, 2) and b"Traceback" not in done.stderr, done.stderr[-800:]
        assert SECRET.encode() not in done.stdout + done.stderr
        if args[0] == "search" and done.returncode == 0:
            json.loads(done.stdout.decode("utf-8"))
    _unchanged_outside_gemdoc(tmp_path, before)


MODEL = Path(__file__).resolve().parent.parent.parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx-int8"


@pytest.mark.skipif(not MODEL.is_dir(), reason="the small test model is in ../shared/models beside the checkout")
def test_invalid_utf8_reaches_the_embedder_as_text(small):
    env = os.environ | {"GEMDOC_MODEL_DIR": str(MODEL)}
    embedded = gemdoc(small, "embed", "--quiet", env=env)
    assert embedded.returncode == 0, embedded.stderr
    for command in ("query", "vsearch"):
        done = subprocess.run([sys.executable, "-m", "gemdoc", command, b"frobnicate \xff\xfe widget", "--json"],
                              cwd=small, capture_output=True, timeout=120, env=env)  # fmt: skip
        assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr[-600:]
        reply = json.loads(done.stdout.decode("utf-8"))
        assert "\ufffd" in reply["query"] and reply["mode"] != "keyword", reply

"""`gemdoc search` without click: the same arguments as the click command, the same failures, a faster start."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gemdoc import lockfile, paths, shell
from gemdoc.chunk import Chunk
from gemdoc.cli import main
from gemdoc.cli import search as click_search
from gemdoc.store import GemRecord, Writer

READ_ALIKE = [
    ["retry", "a", "job"],
    ["retry", "--json", "-n", "3", "job"],
    ["-n", "0", "x"],
    ["-n", "100000", "x"],
    ["--max-chars=700", "--min-score", "-1.5", "x"],
    ["--files", "--explain", "--no-refusal", "--gem", "rake", "x"],
    ["--project", "some/dir", "-C", "other/dir", "x", "y"],
    ["--", "--json", "-n"],
    ["-", "x"],
]
LEFT_TO_CLICK = [
    ["--help"],
    ["x", "--help"],
    ["--bogus", "x"],
    ["-n", "many", "x"],
    ["-n"],
    ["x", "-n"],
    ["-n5", "x"],
    ["--json=yes", "x"],
    ["--gem", "--json", "x"],
    ["--json"],
    [],
]


@pytest.mark.parametrize("args", READ_ALIKE)
def test_the_parser_reads_what_click_reads(args):
    assert shell.parse(args) == click_search.make_context("search", list(args)).params


@pytest.mark.parametrize("args", LEFT_TO_CLICK)
def test_anything_else_is_left_to_click(args):
    assert shell.parse(args) is None


def test_a_project_that_is_a_file_or_unreadable_is_left_to_click(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    assert shell.parse(["-C", str(tmp_path / "file"), "x"]) is None
    assert shell.parse(["-C", str(tmp_path), "x"])["project_dir"] == tmp_path
    assert shell.parse(["-C", str(tmp_path / "not yet"), "x"])["project_dir"] == tmp_path / "not yet"
    monkeypatch.setattr(os, "access", lambda path, mode: False)  # tests run as root, who reads everything
    assert shell.parse(["-C", str(tmp_path), "x"]) is None


def test_every_result_option_is_a_click_option():
    click_flags = {flag for param in click_search.params for flag in param.opts if flag.startswith("-")}
    assert click_flags == {flag for option in shell.RESULT_OPTIONS for flag in option.flags}


def _gemdoc(*args, cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    code = "import sys, runpy; runpy.run_module('gemdoc', run_name='__main__')"
    probe = "import atexit, sys; atexit.register(lambda: print('click' in sys.modules, file=sys.stderr)); " + code
    env = dict(kwargs.pop("env", os.environ))
    env.pop("PYTHONUNBUFFERED", None)  # stdout buffered, as users run it
    kwargs = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "env": env, **kwargs}
    return subprocess.run([sys.executable, "-c", probe, *args], cwd=cwd, text=True, **kwargs)


def test_search_fails_in_one_line_without_importing_click(tmp_path):
    (tmp_path / "Gemfile.lock").write_text("GEM\n  specs:\n    rake (13.0.6)\n")
    done = _gemdoc("search", "anything", cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    error, clicked = done.stderr.strip().splitlines()
    assert error.startswith("gemdoc: ") and "gemdoc index" in error and clicked == "False"


def test_help_and_bad_arguments_go_to_click(tmp_path):
    helped = _gemdoc("search", "--help", cwd=tmp_path)
    assert helped.returncode == 0 and "--no-refusal" in helped.stdout and helped.stderr.strip() == "True"
    bad = _gemdoc("search", "-n", "many", "x", cwd=tmp_path)
    assert bad.returncode == 2 and "Invalid value for '-n'" in bad.stderr


@pytest.fixture
def stored(tmp_path) -> Path:
    """A project whose bundle is one stored gem, filled without Ruby."""
    project = tmp_path / "app"
    project.mkdir()
    (project / "Gemfile.lock").write_text("GEM\n  specs:\n    core (1.0)\n\nDEPENDENCIES\n  core\n")
    writer = Writer(paths.store_path())
    body = "Installs a handler that runs when the operating system delivers the given signal to the process."
    chunks = [Chunk("ri", "Signal::trap", "Signal::trap", body, "lib/core.rb", 1, "", "method", "trap")]
    _, entry = writer.replace_gem(GemRecord("core", "1.0", "/x", "gem", "d1", "complete"), chunks)
    digest = lockfile.load(project / "Gemfile.lock").sha256
    writer.record_project(str(project.resolve()), digest, "direct", [("core", "1.0")], [entry], True)
    writer.close()
    return project


def test_search_answers_as_the_click_command_does(stored):
    fast = _gemdoc("search", "--json", "signal handler", cwd=stored)
    assert fast.returncode == 0 and fast.stderr.strip() == "False" and '"title": "Signal::trap"' in fast.stdout
    clicked = CliRunner().invoke(main, ["search", "--json", "-C", str(stored), "signal handler"])
    assert clicked.exit_code == 0 and clicked.output == fast.stdout


@pytest.mark.parametrize("options", [["-n", "5"], ["-n5"]])  # the first is read here, the second by click
def test_a_reader_that_stops_early_gets_no_traceback(stored, options):
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte, as `gemdoc search … | head -0` leaves it
    try:
        done = _gemdoc("search", *options, "signal handler", cwd=stored, stdout=write, stderr=subprocess.PIPE)
    finally:
        os.close(write)
    assert done.returncode == 1 and done.stderr.strip() in ("True", "False")  # no traceback, no "Exception ignored"


@pytest.mark.parametrize("options", [["-n", "5"], ["-n5"]])
def test_an_ascii_terminal_gets_utf_8_not_a_traceback(stored, options):
    done = _gemdoc("search", *options, "signal handler", cwd=stored, env={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert done.returncode == 0 and "Signal::trap" in done.stdout and "\u00b7" in done.stdout

"""Expected failures: one line naming cause and remedy, a non-zero exit, no traceback, nothing written."""

import sqlite3

import pytest
from click.testing import CliRunner

from gemdoc import __version__, paths
from gemdoc.cli import Gemdoc, main
from gemdoc.store import Writer


def cli(*args):
    return CliRunner().invoke(main, list(args))


def one_line_error(result, fragment):
    assert result.exit_code != 0
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gemdoc: ") and fragment in lines[0], result.output
    assert "Traceback" not in result.output


def test_no_lockfile(tmp_path):
    one_line_error(cli("index", "--project", str(tmp_path)), "no Gemfile.lock")
    assert not paths.store_path().exists()


def test_malformed_lockfile(tmp_path):
    (tmp_path / "Gemfile.lock").write_text("GEM\n  specs:\n    rake 13\n")
    one_line_error(cli("index", "--project", str(tmp_path)), "unreadable spec")
    assert not paths.store_path().exists() and not (tmp_path / ".gemdoc.yml").exists()


def test_corrupt_manifest(tmp_path):
    (tmp_path / "Gemfile.lock").write_text("GEM\n  specs:\n    rake (13.0.6)\n")
    (tmp_path / ".gemdoc.yml").write_text("scope: [unclosed\n")
    one_line_error(cli("index", "--project", str(tmp_path)), "not valid YAML")


def test_search_before_any_index(tmp_path):
    (tmp_path / "Gemfile.lock").write_text("GEM\n  specs:\n    rake (13.0.6)\n")
    one_line_error(cli("search", "--project", str(tmp_path), "anything"), "run `gemdoc index`")
    Writer(paths.store_path()).close()
    one_line_error(cli("search", "--project", str(tmp_path), "anything"), "not indexed yet")


def test_store_of_another_schema_refuses_and_names_reindex(tmp_path):
    (tmp_path / "Gemfile.lock").write_text("GEM\n  specs:\n    rake (13.0.6)\n")
    Writer(paths.store_path()).close()
    conn = sqlite3.connect(paths.store_path())
    conn.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    one_line_error(cli("search", "--project", str(tmp_path), "x"), "gemdoc reindex")
    one_line_error(cli("index", "--project", str(tmp_path)), "gemdoc reindex")
    dry = cli("reindex", "--dry-run", "--project", str(tmp_path))
    assert "would discard the store (schema 999" in dry.output
    status = cli("status", "--project", str(tmp_path))
    assert status.exit_code == 0 and "next:      gemdoc reindex" in status.output


def test_version_and_help():
    assert cli("version").output.strip() == f"gemdoc {__version__}"
    assert cli("--version").output.strip() == f"gemdoc, version {__version__}"
    help_text = cli("--help").output
    listed = [line.split()[0] for line in help_text.split("Commands:")[1].splitlines() if line.strip()]
    assert listed == list(Gemdoc.ORDER) and set(listed) == set(main.commands)  # every command, in workflow order


def test_unknown_option_is_a_usage_error():
    result = cli("search", "--bogus", "x")
    assert result.exit_code == 2 and "No such option" in result.output


def test_status_outside_a_project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = cli("status")
    assert result.exit_code == 0 and "(none here)" in result.output


@pytest.mark.parametrize("args", [["-n", "0"], ["-n", "100000"]])
def test_numeric_arguments_saturate(tmp_path, args):
    (tmp_path / "Gemfile.lock").write_text("GEM\n  specs:\n    rake (13.0.6)\n")
    result = cli("search", "--project", str(tmp_path), *args, "x")
    assert "Invalid value" not in result.output  # clamped, then the usual "not indexed" error

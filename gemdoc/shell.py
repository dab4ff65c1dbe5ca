"""The `gemdoc` command's entry point, and what its commands share without click.

Agents run `gemdoc search` once per question, and importing click alone takes about as long
as the search itself. So `main` parses a plain `search` invocation here, from the same
option table cli.py builds its click options from, and hands everything else (help, every
other command, any argument this parser does not take as click would) to the click CLI.
"""

import os
import sqlite3
import sys
from pathlib import Path

from gemdoc.errors import GemdocError


class Option:
    """An option of `gemdoc search` (query and vsearch share the table, and PROJECT serves every
    command): cli.py makes it a click option, `parse` reads it without click."""

    __slots__ = ("dest", "flags", "kind", "default", "bounds", "help", "metavar", "show_default")

    def __init__(self, dest: str, flags: tuple[str, ...], kind: str, help: str, default=None,
                 bounds: tuple[int, int] | None = None, metavar: str | None = None, show_default: bool = False):
        self.dest, self.flags, self.kind, self.help = dest, flags, kind, help  # kind: flag | int | float | str | dir
        self.default = False if kind == "flag" else default
        self.bounds, self.metavar, self.show_default = bounds, metavar, show_default

    def convert(self, text: str):
        """The value as click would make it, or None when click should judge it (and explain why not)."""
        if text.startswith("-") and self.kind != "float":
            return None
        try:
            if self.kind == "int":
                return min(max(int(text), self.bounds[0]), self.bounds[1])  # click.IntRange(clamp=True)
            if self.kind == "float":
                return float(text)
        except ValueError:
            return None
        if self.kind == "dir":  # click.Path(file_okay=False): an existing path must be a readable directory
            taken = not os.path.exists(text) or (os.path.isdir(text) and os.access(text, os.R_OK))
            return Path(text) if taken else None
        return text


PROJECT = Option("project_dir", ("--project", "-C"), "dir",
                 "The Ruby project (default: the nearest directory with a Gemfile.lock).")
RESULT_OPTIONS = (
    PROJECT,
    Option("limit", ("-n",), "int", "Results.", default=10, bounds=(1, 100), show_default=True),
    Option("as_json", ("--json",), "flag", "Print the JSON contract (see README)."),
    Option("as_files", ("--files",), "flag", "Print one `gem@version path:line` per result."),
    Option("explain", ("--explain",), "flag",
           "Per result: arms and ranks, matched terms, field contributions, coverage and gem factors."),
    Option("min_score", ("--min-score",), "float", "Drop results scoring below this (scale differs per command)."),
    Option("max_chars", ("--max-chars",), "int",
           "Character budget for the whole reply; results past it are counted, not printed.",
           default=12_000, bounds=(500, 200_000), show_default=True),
    Option("no_refusal", ("--no-refusal",), "flag", "Rank even when the bundle shows no evidence for the question."),
    Option("gem", ("--gem",), "str", "Search only this gem of the bundle.", metavar="NAME"),
)  # fmt: skip


def parse(args: list[str]) -> dict | None:
    """`search`'s arguments as click would pass them, or None for anything click must judge:
    --help, an unknown option, a missing or malformed value, no query words."""
    by_flag = {flag: option for option in RESULT_OPTIONS for flag in option.flags}
    params = {option.dest: option.default for option in RESULT_OPTIONS}
    words: list[str] = []
    rest = iter(args)
    for arg in rest:
        if arg == "--":
            words.extend(rest)
        elif not arg.startswith("-") or arg == "-":
            words.append(arg)
        elif not _take(arg, rest, by_flag, params):
            return None
    return {"query": tuple(words), **params} if words else None


def _take(arg: str, rest, by_flag: dict[str, Option], params: dict) -> bool:
    name, equals, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
    option = by_flag.get(name)
    if option is None or (option.kind == "flag" and equals):
        return False
    if option.kind == "flag":
        params[option.dest] = True
        return True
    text = inline if equals else next(rest, None)
    value = None if text is None else option.convert(text)  # no value at all: click says so
    params[option.dest] = value
    return value is not None


def guarded(run):
    """Run a command; an expected failure becomes one line on stderr and a non-zero exit, never a traceback."""
    try:
        return run()
    except GemdocError as exc:
        echo(f"gemdoc: {exc}", err=True)
        sys.exit(exc.exit_code)
    except sqlite3.DatabaseError as exc:
        from gemdoc import damage, paths

        problem = damage.explain(paths.store_path(), exc)
        if problem is None:
            raise
        echo(f"gemdoc: {problem}", err=True)
        sys.exit(problem.exit_code)
    except KeyboardInterrupt:
        echo("gemdoc: interrupted; finished gems are stored, run the command again to finish", err=True)
        sys.exit(130)


def echo(text: str, err: bool = False) -> None:
    """A line out, as click.echo writes it: UTF-8 where the stream cannot encode the text (an ASCII
    locale), and flushed at once, so a reader that went away fails the command, where both entry
    paths handle it, not the interpreter's exit."""
    stream = sys.stderr if err else sys.stdout
    line = text + "\n"
    try:
        stream.write(line)
    except UnicodeEncodeError:
        stream.flush()
        stream.buffer.write(line.encode("utf-8", "replace"))
    stream.flush()


def project_root(project_dir: Path | None, explicit: bool = True) -> Path:
    """The project root. An explicit command run in a project trusts it (see trust.py)."""
    from gemdoc import project, trust

    root = project.root(project_dir or Path.cwd())
    if explicit:
        trust.grant(root, trust.USE)
    return root


def bundle(project_dir: Path | None, gem: str | None = None):
    """This project's bundle (or its one gem ``gem``), warning on stderr when the index is stale."""
    from gemdoc import ask

    opened = ask.open_bundle(project_root(project_dir))
    if opened.scope.stale:
        echo("gemdoc: Gemfile.lock changed since the last index; run `gemdoc index`", err=True)
    return ask.only_gem(opened, gem)


def options(limit, explain, min_score, max_chars, no_refusal):
    from gemdoc import ask

    return ask.Options(limit, max_chars, min_score, explain, not no_refusal)


def show_reply(reply, opts, as_json: bool, as_files: bool) -> None:
    from gemdoc import render

    if as_json:
        echo(render.results_json(reply, opts))
    elif as_files:
        if reply.hits:
            echo(render.results_files(reply))
        elif reply.refused:
            echo(render.refusal_text(reply), err=True)  # stdout stays a list of files
    else:
        echo(render.results_text(reply, opts))


def search(query, project_dir, limit, as_json, as_files, explain, min_score, max_chars, no_refusal, gem) -> None:
    """Keyword search in this bundle's documentation (no model, no network)."""
    from gemdoc import ask

    opts = options(limit, explain, min_score, max_chars, no_refusal)
    show_reply(ask.keyword(bundle(project_dir, gem), " ".join(query), opts), opts, as_json, as_files)


def main() -> None:
    args = sys.argv[1:]
    params = parse(args[1:]) if args[:1] == ["search"] else None
    if params is None:
        from gemdoc.cli import main as click_main

        click_main()
        return
    try:
        guarded(lambda: search(**params))
        sys.stdout.flush()
    except BrokenPipeError:  # the reader stopped early (`| head`): as click does, no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)

"""The click command line, a thin layer over the library (indexer, search, status): every command
but a plain `gemdoc search`, which shell.py runs without importing click."""

import json
import sys
from pathlib import Path

import click

from gemdoc import __version__, shell
from gemdoc.errors import GemdocError


def _click_option(option: shell.Option):
    """A click option from shell.py's table, so `gemdoc search`'s click-free parser reads the same options."""
    if option.kind == "flag":
        return click.option(*option.flags, option.dest, is_flag=True, help=option.help)
    if option.kind == "int":
        kind = click.IntRange(*option.bounds, clamp=True)
    elif option.kind == "dir":
        kind = click.Path(file_okay=False, path_type=Path)
    else:
        kind = {"float": float, "str": str}[option.kind]
    return click.option(*option.flags, option.dest, type=kind, default=option.default,
                        show_default=option.show_default, metavar=option.metavar, help=option.help)


PROJECT = _click_option(shell.PROJECT)


class Gemdoc(click.Group):
    """Expected failures become one line on stderr and a non-zero exit, never a traceback."""

    ORDER = ("init", "index", "reindex", "search", "query", "vsearch", "show", "embed", "status", "gc", "trust",
             "skill", "mcp", "hook", "version")  # fmt: skip

    def list_commands(self, ctx) -> list[str]:
        """In the order a user meets them, not alphabetical."""
        return sorted(self.commands, key=lambda name: (self.ORDER.index(name) if name in self.ORDER else 99, name))

    def invoke(self, ctx):
        return shell.guarded(lambda: super(Gemdoc, self).invoke(ctx))


@click.group(cls=Gemdoc)
@click.version_option(__version__, "--version", prog_name="gemdoc")
def main() -> None:
    """Offline search over the documentation of the exact gems in your Gemfile.lock."""


JOBS = click.option("--jobs", "-j", type=click.IntRange(1, 64), default=None, help="Parallel RDoc workers [default: cores].")
DRY_RUN = click.option("--dry-run", is_flag=True, help="Say what would be done; change nothing.")
QUIET = click.option("--quiet", "-q", is_flag=True, help="Print only the summary line.")


@main.command()
@PROJECT
@click.option("--all", "include_all", flag_value="all", default=None, help="Index transitive dependencies too.")
@click.option("--meta", "include_all", flag_value="meta",
              help="Direct dependencies and every gem a meta-gem among them (rails) depends on (the default).")
@click.option("--direct", "include_all", flag_value="direct", help="Index direct dependencies only.")
@click.option("--all-languages", is_flag=True, default=None, help="Also index docs marked Japanese, Chinese or Korean.")
@JOBS
@DRY_RUN
@click.option("--force", is_flag=True, help="Re-read every gem even when nothing changed.")
@QUIET
def index(project_dir, include_all, all_languages, jobs, dry_run, force, quiet) -> None:
    """Index the documentation of the gems in Gemfile.lock."""
    _index(shell.project_root(project_dir), include_all, all_languages, jobs, dry_run, force, quiet)


@main.command()
@PROJECT
@JOBS
@DRY_RUN
@QUIET
def reindex(project_dir, jobs, dry_run, quiet) -> None:
    """Rebuild this project's index from scratch (also after a store schema change)."""
    _index(shell.project_root(project_dir), None, None, jobs, dry_run, True, quiet, rebuild=True)


def _index(project, scope, all_languages, jobs, dry_run, force, quiet, rebuild=False) -> None:
    from gemdoc import indexer

    progress = None if quiet else _progress_printer()
    report = indexer.index_project(project, scope, all_languages, jobs, dry_run, force, progress, rebuild)
    for line in report.malformed + ([report.repaired] if report.repaired else []):
        click.echo(f"gemdoc: {line}", err=True)
    click.echo(_summary(report))
    if any(o.outcome == "failed" for o in report.outcomes):
        sys.exit(2)


def _progress_printer():
    tty = sys.stderr.isatty()

    def show(outcome, done, total):
        counter = f"[{done}/{total}] " if tty else ""
        detail = f"{outcome.chunks} chunks" if outcome.outcome in ("indexed", "updated") else ""
        timing = f"{outcome.seconds:.1f}s" if outcome.seconds else ""
        click.echo(
            f"{counter}{outcome.name} {outcome.version}  {outcome.describe()}  {detail}  {timing}".rstrip(), err=True
        )

    return show


def _summary(report) -> str:
    if report.unchanged_lockfile:
        absent = f"; {report.absent} not installed (`gemdoc status` lists them)" if report.absent else ""
        absent += f"; {report.refused} path: entries name no gem (`gemdoc status`)" if report.refused else ""
        return (f"unchanged: Gemfile.lock {report.lockfile_sha256[:12]} is already indexed "
                f"({report.scope} dependencies){absent}")  # fmt: skip
    if report.dry_run:
        todo = report.count("would index")
        discard = f"dry run: would discard the store ({report.discarded})\n" if report.discarded else ""
        return f"{discard}dry run: {todo} gems would be indexed, {len(report.outcomes) - todo} would not; nothing was changed"
    counts = [f"{report.count(k)} {k}" for k in ("indexed", "updated", "unchanged", "skipped", "failed") if report.count(k)]
    chunks = sum(o.chunks for o in report.outcomes)
    return f"{len(report.outcomes)} gems: {', '.join(counts) or 'nothing to do'} · {chunks} chunks written · {report.seconds:.1f}s"


RESULTS = [click.argument("query", nargs=-1, required=True)] + [_click_option(o) for o in shell.RESULT_OPTIONS]


def results_options(command):
    for decorate in reversed(RESULTS):
        command = decorate(command)
    return command


@main.command()
@results_options
def search(query, project_dir, limit, as_json, as_files, explain, min_score, max_chars, no_refusal, gem) -> None:
    """Keyword search in this bundle's documentation (no model, no network)."""
    shell.search(query, project_dir, limit, as_json, as_files, explain, min_score, max_chars, no_refusal, gem)


@main.command()
@PROJECT
@click.option("--force", is_flag=True, help="Drop every vector and embed again (after changing the model).")
@QUIET
def embed(project_dir, force, quiet) -> None:
    """Give this bundle's chunks vectors; the only command that downloads a model.

    Without network, point GEMDOC_MODEL_DIR (or model_dir: in config.yaml) at a directory holding
    the model's files; GEMDOC_MODEL names another model. Where the model was loaded from is
    recorded with the vectors, so query, vsearch and the MCP server find it there later."""
    from gemdoc import embed as embedding

    progress = None if quiet else _embed_progress()
    report = embedding.embed_project(shell.project_root(project_dir), force, progress)
    pending = f", {report.failed} failed and stay pending" if report.failed else ""
    click.echo(
        f"embedded {report.embedded} chunks ({report.already} already had vectors{pending}) "
        f"in {report.seconds:.1f}s · {report.rate:.0f} chunks/s · {report.identity}"
    )
    if report.failed:
        sys.exit(2)


def _embed_progress():
    tty = sys.stderr.isatty()

    def show(done, total):
        if tty:
            click.echo(f"\rembedding {done}/{total}", err=True, nl=done == total)

    return show


def _vector_arm(bundle, required: bool):
    """The model and the bundle's vectors, or (None, None) with the reason when they are missing."""
    from gemdoc import vectors
    from gemdoc.encoder import Embedder
    from gemdoc.models import for_store

    if not vectors.any_embedded(bundle.conn, bundle.scope.gems):
        if required:
            raise GemdocError("no vectors for this bundle: run `gemdoc embed` first")
        return None, None, "no vectors for this bundle: run `gemdoc embed`"
    try:
        embedder = Embedder(for_store(bundle.root, bundle.conn))
    except GemdocError as exc:  # the model cannot be loaded: `query` still answers, by keyword
        if required:
            raise
        return None, None, str(exc)
    vectors.check_identity(bundle.conn, embedder.identity)
    return embedder, vectors.Matrix(bundle.conn, bundle.scope.gems), None


@main.command()
@results_options
def vsearch(query, project_dir, limit, as_json, as_files, explain, min_score, max_chars, no_refusal, gem) -> None:
    """Vector search only; needs `gemdoc embed` first, never downloads."""
    options = shell.options(limit, explain, min_score, max_chars, no_refusal)
    _semantic(" ".join(query), project_dir, gem, options, as_json, as_files, vector_only=True)


@main.command()
@results_options
def query(query, project_dir, limit, as_json, as_files, explain, min_score, max_chars, no_refusal, gem) -> None:
    """Hybrid search: keyword and vector arms fused. Typed parts route one arm: `lex:` API names
    (keyword arm), `vec:` the question in the docs' words, `hyde:` a passage that would answer it
    (vector arm); untyped text, the question as asked, goes to both."""
    options = shell.options(limit, explain, min_score, max_chars, no_refusal)
    _semantic(" ".join(query), project_dir, gem, options, as_json, as_files, vector_only=False)


def _semantic(text: str, project_dir, gem, options, as_json: bool, as_files: bool, vector_only: bool) -> None:
    from gemdoc import ask

    ask.clean(text)  # a usage error (a query without words) comes before any model or vector
    bundle = shell.bundle(project_dir, gem)
    embedder, matrix, missing = _vector_arm(bundle, required=vector_only)
    reply = ask.semantic(bundle, text, options, embedder, matrix, vector_only)
    if missing:
        if as_json or as_files:  # text output prints the note itself: once is enough
            click.echo(f"gemdoc: {missing}; answered by keyword alone", err=True)
        reply.notes.append(f"answered by keyword alone: {missing}")
    shell.show_reply(reply, options, as_json, as_files)


@main.command()
@click.argument("address", metavar="URI")
@PROJECT
@click.option("--source", is_flag=True, help="Print the source lines around the location instead of the chunk.")
@click.option("--context", type=click.IntRange(0, 200, clamp=True), default=12, show_default=True,
              help="Source lines on each side of the location.")  # fmt: skip
@click.option("--offset", type=click.IntRange(0), default=0, show_default=True,
              help="Print a long passage from this character on (its cut line gives the next).")  # fmt: skip
def show(address, project_dir, source, context, offset) -> None:
    """Print the passage a result's URI (gemdoc://GEM@VERSION/PATH#L12) names, whole, or its source lines."""
    from gemdoc import ask

    click.echo(ask.show(ask.open_bundle(shell.project_root(project_dir)), address, source, context, offset))


@main.command()
@PROJECT
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def status(project_dir, as_json) -> None:
    """Store, bundle, lockfile and ri coverage, and the next command to run."""
    from gemdoc import status as st

    info = st.gather(project_dir or Path.cwd())
    click.echo(json.dumps(info, indent=2) if as_json else st.text(info))


@main.command()
@DRY_RUN
def gc(dry_run) -> None:
    """Remove stored gem versions and ri cache entries that no known project uses (a project
    whose directory or Gemfile.lock is gone no longer counts), and say how many bytes that frees."""
    from gemdoc import cleanup

    report = cleanup.collect(dry_run)
    verb = "would remove" if dry_run else "removed"
    for kind, names in (("project", report.projects), ("gem", report.entries), ("cache", report.cache)):
        for name in names:
            click.echo(f"{verb} {kind}: {name}")
    total = cleanup.human(report.store_bytes + report.cache_bytes)
    parts = f"store {cleanup.human(report.store_bytes)}, cache {cleanup.human(report.cache_bytes)}"
    done = "dry run: would free" if dry_run else "freed"
    click.echo(f"{done} {total} ({parts}): {len(report.entries)} gem versions, {len(report.cache)} cache entries")


@main.command()
@PROJECT
@click.option("--no-auto-index", is_flag=True, help="Set up without the Bundler plugin; run `gemdoc index` yourself.")
def init(project_dir, no_auto_index) -> None:
    """Set up this project: .gemdoc.yml, trust, and the Bundler plugin that indexes on install."""
    from gemdoc import bootstrap

    for line in bootstrap.init(shell.project_root(project_dir, explicit=False), auto_index=not no_auto_index):
        click.echo(line)


@main.command()
@PROJECT
@click.option("--lockfile", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The lockfile Bundler just wrote (checked against the one gemdoc reads).")  # fmt: skip
def hook(project_dir, lockfile) -> None:
    """Run by the Bundler plugin after install/add/update: index new gem versions of a trusted project."""
    from gemdoc import hook as bundler_hook

    for line in bundler_hook.run(shell.project_root(project_dir, explicit=False), lockfile):
        click.echo(line)


@main.group(invoke_without_command=True)
@PROJECT
@click.pass_context
def trust(ctx, project_dir) -> None:
    """Trust this project: the Bundler hook may index it (also under CI) and its .gemdoc.yml
    model settings are approved."""
    from gemdoc import trust as trusting

    if ctx.invoked_subcommand:
        return
    root = shell.project_root(project_dir, explicit=False)
    changed = trusting.grant(root, trusting.EXPLICIT)
    click.echo(f"{'trusted' if changed else 'unchanged: already trusted'}: {root}")


@trust.command("list")
def trust_list() -> None:
    """List trusted projects."""
    from gemdoc import trust as trusting

    entries = trusting.entries()
    for path, entry in sorted(entries.items()):
        click.echo(f"{path}  {entry.get('how')}  {entry.get('granted_at')}")
    if not entries:
        click.echo("no trusted projects")


@trust.command("revoke")
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
def trust_revoke(path) -> None:
    """Withdraw trust from PATH (default: this project)."""
    from gemdoc import trust as trusting

    root = path.resolve() if path else shell.project_root(None, explicit=False)
    if not trusting.revoke(root):
        raise GemdocError(f"{root} was not trusted (see `gemdoc trust list`)")
    click.echo(f"revoked: {root}")


@main.group()
def skill() -> None:
    """The agent skill (SKILL.md) that tells coding agents how to use gemdoc."""


@skill.command("install")
@PROJECT
@click.option("--global", "everywhere", is_flag=True, help="Install for every project: ~/.claude/skills, ~/.agents/skills.")
def skill_install(project_dir, everywhere) -> None:
    """Copy SKILL.md to where agents look for skills (.claude/skills/gemdoc/, .agents/skills/gemdoc/)."""
    from gemdoc import skills

    base = Path.home() if everywhere else (project_dir or Path.cwd()).resolve()
    for target, changed in skills.install(base):
        click.echo(f"{'installed' if changed else 'unchanged'}: {target}")


@main.command()
@PROJECT
def mcp(project_dir) -> None:
    """Serve search, query, show and status to agents over MCP (stdio)."""
    try:
        from gemdoc import mcp_server
    except ImportError as exc:
        raise GemdocError("`gemdoc mcp` needs the mcp package: pip install 'gemdoc[mcp]'") from exc
    mcp_server.serve((project_dir or Path.cwd()).resolve())


@main.command()
def version() -> None:
    """Print gemdoc's version."""
    click.echo(f"gemdoc {__version__}")


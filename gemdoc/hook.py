"""`gemdoc hook`: what the Bundler plugin runs after `bundle install`, `add` and `update`.

Silent when there is nothing to do; one line when it indexed, failed, or was not allowed to
act. It indexes only a trusted project, and only the gem versions the store lacks.
"""

from pathlib import Path

from gemdoc import indexer, lockfile, manifest, trust


def run(project: Path, bundler_lockfile: Path | None = None) -> list[str]:
    """The lines to print; empty when the index already matches the lockfile. Trust is checked
    first: nothing of an untrusted project (manifest, lockfile) is read."""
    verdict = trust.verdict(project)
    if not verdict.trusted:
        return [f"not indexing: {verdict.reason}"]
    saved = manifest.load(project)
    if not saved.auto_index:
        return []
    lock_path = lockfile.find(project)
    if bundler_lockfile and bundler_lockfile.resolve() != lock_path.resolve():
        return [f"skipped: Bundler wrote {bundler_lockfile}, gemdoc indexes {lock_path.name} in {project}"]
    lock = lockfile.load(lock_path)
    if indexer.lockfile_unchanged(project, lock, saved, saved.scope, saved.all_languages):
        return []
    report = indexer.index_project(project, versions_only=True)
    return report.malformed + _summary(report)


def _summary(report: indexer.IndexReport) -> list[str]:
    done = [o for o in report.outcomes if o.outcome in ("indexed", "updated")]
    trouble = [o for o in report.outcomes if o.outcome in ("failed", "skipped") and o.reason]
    lines = []
    if done:
        names = ", ".join(f"{o.name} {o.version}" for o in done[:5]) + (" …" if len(done) > 5 else "")
        chunks = sum(o.chunks for o in done)
        lines.append(f"indexed {len(done)} gem{'s' * (len(done) != 1)} ({names}): {chunks} chunks in {report.seconds:.1f}s")
    lines += [f"{o.outcome}: {o.name} {o.version} ({o.reason})" for o in trouble]
    return lines

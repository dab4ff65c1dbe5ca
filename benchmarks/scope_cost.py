"""What each index scope costs: gems and cold `gemdoc index` time for direct dependencies only,
direct plus what meta-gems (rails) stand for, and the whole bundle.

    python benchmarks/scope_cost.py [--bundle corpus|rails|both] [--count-only]

Bundles: the benchmark bundle (benchmarks/corpus) and a Rails-style application
(benchmarks/rails_app), both resolved offline from Debian's ruby-* packages. Each run starts
from an empty store and ri cache (a gemdoc home of its own under benchmarks/.work).
`--count-only` reports the gems in each scope without indexing. Results, saved after each run:
benchmarks/results/scope-cost.json.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

from gemdoc import lockfile, project  # noqa: E402

BUNDLES = {"corpus": common.CORPUS, "rails": common.ROOT / "rails_app"}
SCOPES = ("direct", "meta", "all")
SUMMARY = re.compile(r"^(?P<gems>\d+) gems: (?P<counts>.*) · (?P<chunks>\d+) chunks written", re.M)


def index_once(project: Path, scope: str) -> dict:
    """A cold `gemdoc index --SCOPE` of ``project`` in a fresh gemdoc home, as a user runs it."""
    home = common.WORK / f"scope-{project.name}-{scope}"
    shutil.rmtree(home, ignore_errors=True)
    env = os.environ | {"GEMDOC_HOME": str(home), "PYTHONPATH": str(common.ROOT.parent)}
    manifest = project / ".gemdoc.yml"
    saved = manifest.read_text() if manifest.exists() else None
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "gemdoc", "index", f"--{scope}", "-q"], cwd=project, env=env,
                          capture_output=True, text=True)  # fmt: skip
    seconds = time.monotonic() - start
    if saved is None:
        manifest.unlink(missing_ok=True)  # the benchmark leaves the committed project as it was
    else:
        manifest.write_text(saved)
    found = SUMMARY.search(done.stdout)
    if not found:
        raise SystemExit(f"gemdoc index --{scope} in {project} printed no summary: {done.stderr[-500:]}")
    counts = dict((k, int(v)) for v, k in (part.split(" ", 1) for part in found["counts"].split(", ")))
    shutil.rmtree(home, ignore_errors=True)
    return {"gems": int(found["gems"]), "indexed": counts.get("indexed", 0), "chunks": int(found["chunks"]),
            "seconds": round(seconds, 1), "outcomes": counts}  # fmt: skip


def scope_sizes(directory: Path) -> dict:
    """Gems in each scope and the meta-gems found, without indexing."""
    lock = lockfile.load(lockfile.find(directory))
    metas = project.meta_gems(directory, lock, lock.select(include_transitive=False), True)
    chosen = {scope: [g.name for g in project.select_gems(directory, lock, scope, True)] for scope in SCOPES}
    return {"meta_gems": sorted(metas), "gems": {scope: len(names) for scope, names in chosen.items()},
            "meta_adds": sorted(set(chosen["meta"]) - set(chosen["direct"])),
            "all_adds": sorted(set(chosen["all"]) - set(chosen["meta"]))}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", choices=(*BUNDLES, "both"), default="both")
    parser.add_argument("--count-only", action="store_true", help="Gems per scope, without indexing.")
    args = parser.parse_args()
    common.ensure_debian_packages()
    chosen = BUNDLES if args.bundle == "both" else {args.bundle: BUNDLES[args.bundle]}
    saved = common.RESULTS / "scope-cost.json"
    results = json.loads(saved.read_text()) if saved.exists() else {}
    results["cores"] = os.cpu_count()
    for name, directory in chosen.items():
        common.ensure_locked(directory)
        results.setdefault(name, {}).update(scope_sizes(directory))
        print(f"{name:7} meta-gems {results[name]['meta_gems']} · gems per scope {results[name]['gems']}", flush=True)
        common.save("scope-cost", results)
        for scope in () if args.count_only else SCOPES:
            r = results[name].setdefault("index", {})[scope] = index_once(directory, scope)
            print(f"{name:7} {scope:7} {r['gems']:4} gems · {r['indexed']:4} indexed · "
                  f"{r['chunks']:6} chunks · {r['seconds']:6.1f} s", flush=True)  # fmt: skip
            common.save("scope-cost", results)
    print(f"results: {saved}")


if __name__ == "__main__":
    main()

"""Indexing speed: cold `gemdoc index --all` against `rdoc --ri` alone on the same gems.

    python benchmarks/index_speed.py [--corpus example|corpus|both] [--jobs N]

The floor runs exactly what gemdoc asks RDoc to do (lib/ and ext/, or the
gem's own files for Debian and default gems) with the same number of parallel
processes, and nothing else. Also measured: `gemdoc index` on an unchanged
lockfile (whole process). Results: benchmarks/results/index-<corpus>.json.
"""

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

from gemdoc import lockfile, locations, ri  # noqa: E402


def gemdoc_bin() -> str:
    return shutil.which("gemdoc") or f"{sys.executable} -m gemdoc"


def api_sources(loc) -> list[str]:
    try:
        return ri.sources(loc)
    except ri.SkipGem:
        return []


def rdoc_floor(project: Path, jobs: int) -> dict:
    """Time `rdoc --ri` over every locatable gem of the bundle, `jobs` at a time."""
    lock = lockfile.load(lockfile.find(project))
    gems = lock.select(include_transitive=True)
    located = [loc for loc in locations.locate(project, gems, {}) if loc.found and api_sources(loc)]
    out = Path(tempfile.mkdtemp(prefix="rdoc-floor-"))

    def one(loc) -> None:
        target = out / f"{loc.gem.name}-{loc.gem.version}"
        subprocess.run(
            ["rdoc", "--ri", "--quiet", "--encoding=UTF-8", "--op", str(target), *api_sources(loc)],
            cwd=loc.root, capture_output=True,
        )  # fmt: skip

    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(one, located))
    seconds = time.monotonic() - start
    shutil.rmtree(out, ignore_errors=True)
    return {"gems": len(located), "seconds": round(seconds, 2)}


def cold_index(project: Path, home: Path, jobs: int) -> dict:
    shutil.rmtree(home, ignore_errors=True)
    (project / ".gemdoc.yml").unlink(missing_ok=True)
    env = os.environ | {"GEMDOC_HOME": str(home)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.monotonic()
    done = subprocess.run(
        [*gemdoc_bin().split(), "index", "--all", "--quiet", "--jobs", str(jobs), "--project", str(project)],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    seconds = time.monotonic() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    summary = done.stdout.strip().splitlines()[-1]
    return {"seconds": round(seconds, 2), "summary": summary, "peak_rss_mib": round(max(peak, before) / 1024, 1)}


def unchanged(project: Path, home: Path, runs: int = 15) -> dict:
    env = os.environ | {"GEMDOC_HOME": str(home)}
    times = []
    for _ in range(runs):
        start = time.monotonic()
        done = subprocess.run([*gemdoc_bin().split(), "index", "--project", str(project)], env=env,
                              capture_output=True, text=True, check=True)  # fmt: skip
        times.append(time.monotonic() - start)
        assert done.stdout.startswith("unchanged"), done.stdout
    return {"median_s": round(statistics.median(times), 3), "max_s": round(max(times), 3), "runs": runs}


def measure(name: str, jobs: int, repeat: int) -> dict:
    """Alternate floor and gemdoc runs and keep the medians: this machine's timings drift by 50%."""
    project = common.CORPUS if name == "corpus" else common.EXAMPLE
    if name == "corpus":
        common.ensure_debian_packages()
    common.ensure_locked(project)
    home = common.WORK / f"index-{name}"
    floors, colds = [], []
    for _ in range(repeat):
        floors.append(rdoc_floor(project, jobs))
        colds.append(cold_index(project, home, jobs))
    floor = {"gems": floors[0]["gems"], "seconds": statistics.median(f["seconds"] for f in floors)}
    cold = {
        "seconds": statistics.median(c["seconds"] for c in colds),
        "summary": colds[-1]["summary"],
        "peak_rss_mib": max(c["peak_rss_mib"] for c in colds),
        "runs": [c["seconds"] for c in colds],
    }
    result = {
        "corpus": name,
        "jobs": jobs,
        "repeat": repeat,
        "rdoc_floor": floor | {"runs": [f["seconds"] for f in floors]},
        "gemdoc_cold": cold,
        "ratio_to_floor": round(cold["seconds"] / floor["seconds"], 2),
        "seconds_per_gem": round(cold["seconds"] / max(floor["gems"], 1), 3),
        "unchanged_lockfile": unchanged(project, home),
    }
    common.save(f"index-{name}", result)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=("example", "corpus", "both"), default="both")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeat", type=int, default=3, help="alternating runs of each side")
    args = parser.parse_args()
    for name in ("example", "corpus") if args.corpus == "both" else (args.corpus,):
        r = measure(name, args.jobs, args.repeat)
        print(
            f"{name}: {r['gemdoc_cold']['summary']}\n"
            f"  gemdoc {r['gemdoc_cold']['seconds']}s vs rdoc --ri alone {r['rdoc_floor']['seconds']}s "
            f"({r['rdoc_floor']['gems']} gems, {args.jobs} processes): {r['ratio_to_floor']}x · "
            f"{r['seconds_per_gem']}s/gem · peak RSS {r['gemdoc_cold']['peak_rss_mib']} MiB\n"
            f"  unchanged lockfile: median {r['unchanged_lockfile']['median_s']}s"
        )


if __name__ == "__main__":
    main()

"""What gemdoc's Bundler hook adds to `bundle install --local` on a 30-gem bundle where one gem changed.

    python benchmarks/hook_overhead.py [--reps 3]

The project is the first 29 direct gems of benchmarks/corpus plus one more (a different
one each repetition, so its version is new to the store). For each repetition:

- plain: the same Gemfile change installed with Bundler plugins off (`BUNDLE_PLUGINS=false`);
- hook: the change installed with the hook armed; the hook indexes the new gem. Its own
  preparation time (RDoc, parsing, chunking, as the store records it) is subtracted, so
  `added` is what the hook costs beyond that gem's ri generation;
- settled: the same change again after reverting, when the gem's version is already stored;
- unchanged: `bundle install --local` with nothing changed, with the hook and without.

Results: benchmarks/results/hook.json.
"""

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

BASE = 29


def direct_gems() -> list[str]:
    lines = (common.CORPUS / "Gemfile").read_text().splitlines()
    return [line.split('"')[1] for line in lines if line.startswith("gem ")]


def write_gemfile(project: Path, gems: list[str]) -> None:
    body = 'source "https://rubygems.org"\n' + "".join(f'gem "{g}"\n' for g in gems)
    (project / "Gemfile").write_text(body)


def install(project: Path, hook: bool) -> tuple[float, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GEMDOC_NO_AUTO_INDEX")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"  # the gemdoc this python runs
    if not hook:
        env["BUNDLE_PLUGINS"] = "false"
    start = time.monotonic()
    done = subprocess.run(["bundle", "install", "--local"], cwd=project, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - start
    if done.returncode != 0:
        sys.exit(f"bundle install failed: {done.stderr[-500:]}")
    return seconds, "\n".join(line for line in (done.stdout + done.stderr).splitlines() if line.startswith("[gemdoc]"))


def prepared_seconds(home: Path, gem: str) -> float:
    with sqlite3.connect(home / "data" / "index.sqlite") as conn:
        row = conn.execute("SELECT seconds FROM gems WHERE name = ?", [gem]).fetchone()
    return row[0] if row else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    common.ensure_debian_packages()
    home = common.use_home("hook")
    subprocess.run(["rm", "-rf", str(home)], check=True)
    project = common.WORK / "hook-project"
    subprocess.run(["rm", "-rf", str(project)], check=True)
    project.mkdir(parents=True)
    gems = direct_gems()
    base, extra = gems[:BASE], gems[BASE : BASE + args.reps]
    write_gemfile(project, base)
    subprocess.run(["bundle", "lock", "--local"], cwd=project, check=True, capture_output=True)
    subprocess.run([sys.executable, "-m", "gemdoc", "init"], cwd=project, check=True, capture_output=True)
    first, _ = install(project, hook=True)
    print(f"first install with the hook indexed {BASE} gems in {first:.1f}s", file=sys.stderr)
    runs = []
    for gem in extra:
        write_gemfile(project, base + [gem])
        plain, _ = install(project, hook=False)
        write_gemfile(project, base)
        install(project, hook=False)
        write_gemfile(project, base + [gem])
        hooked, said = install(project, hook=True)
        own = prepared_seconds(home, gem)
        write_gemfile(project, base)
        install(project, hook=True)
        write_gemfile(project, base + [gem])
        settled, _ = install(project, hook=True)
        runs.append({"gem": gem, "plain": plain, "hook": hooked, "gem_prepare": own,
                     "added": hooked - plain - own, "settled_added": settled - plain, "printed": said})  # fmt: skip
        print(runs[-1], file=sys.stderr)
    unchanged = [install(project, hook=True)[0] - install(project, hook=False)[0] for _ in range(args.reps)]
    result = {
        "unchanged_added_median": statistics.median(unchanged),
        "bundle_gems": BASE + 1,
        "runs": runs,
        "added_median": statistics.median(r["added"] for r in runs),
        "settled_added_median": statistics.median(r["settled_added"] for r in runs),
        "plain_median": statistics.median(r["plain"] for r in runs),
    }
    print(f"wrote {common.save('hook', result)}")


if __name__ == "__main__":
    main()

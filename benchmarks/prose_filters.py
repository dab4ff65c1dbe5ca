"""What each prose filter drops, on every file gemdoc considers in the benchmark bundle's gems.

    python benchmarks/prose_filters.py [--corpus corpus|example]

For every gem of the bundle (transitive ones too) that has a directory of its own, every file at
its top level and under doc/, docs/ and guides/ is kept (with its source type) or dropped by one
rule (prose.audit). Prints, per rule, how many files it drops and, for the rules that judge by name
or content (everything but file suffixes), which files. Results: benchmarks/results/prose-filters.json.
"""

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

from gemdoc import lockfile, locations, prose  # noqa: E402


def audit_bundle(project: Path) -> dict:
    lock = lockfile.load(lockfile.find(project))
    gems = lock.select(include_transitive=True)
    located = locations.locate(project, gems, {g.name: lock.variants(g.name) for g in gems}, True)
    own = [loc for loc in located if loc.found and loc.files is None]  # Debian/default gems keep no prose
    kept: Counter = Counter()
    dropped: dict[str, list[str]] = {}
    suffixes: Counter = Counter()
    for loc in own:
        for verdict in prose.audit(loc.root):
            name = f"{loc.gem.name}-{loc.gem.version}/{verdict.relative}"
            if verdict.source_type:
                kept[verdict.source_type] += 1
                continue
            dropped.setdefault(verdict.rule, []).append(name)
            if verdict.rule == "not a prose suffix":
                suffixes[Path(verdict.relative).suffix.lower() or "(none)"] += 1
    return {
        "gems": len(gems), "gems_with_own_directory": len(own), "kept": dict(kept),
        "dropped": {rule: len(names) for rule, names in dropped.items()},
        "dropped_files": {rule: sorted(names) for rule, names in dropped.items() if rule != "not a prose suffix"},
        "dropped_suffixes": dict(suffixes.most_common(15)),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=("corpus", "example"), default="corpus")
    args = parser.parse_args()
    project = common.CORPUS if args.corpus == "corpus" else common.EXAMPLE
    if args.corpus == "corpus":
        common.ensure_debian_packages()
        common.ensure_locked(project)
    result = audit_bundle(project)
    path = common.save("prose-filters", result)
    print(f"{result['gems']} gems, {result['gems_with_own_directory']} with a directory of their own; "
          f"kept {sum(result['kept'].values())} prose files {result['kept']}")  # fmt: skip
    for rule, count in sorted(result["dropped"].items(), key=lambda kv: -kv[1]):
        print(f"  {rule}: {count}")
        for name in result["dropped_files"].get(rule, []):
            print(f"      {name}")
    print(f"  not a prose suffix, by suffix: {result['dropped_suffixes']}")
    print(f"results: {path}")


if __name__ == "__main__":
    main()

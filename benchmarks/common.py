"""Shared by the benchmark scripts: the corpus project, its store, and its fingerprint."""

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
CORPUS = ROOT / "corpus"
EXAMPLE = ROOT.parent / "examples" / "demo"
WORK = ROOT / ".work"
RESULTS = ROOT / "results"
DEBIAN_PACKAGES = (
    "ruby-rails ruby-rspec ruby-rack ruby-sidekiq ruby-thor ruby-sinatra ruby-faraday ruby-redis "
    "ruby-connection-pool ruby-mustermann ruby-nokogiri ruby-zeitwerk ruby-concurrent ruby-i18n ruby-tzinfo "
    "ruby-kramdown ruby-rouge ruby-mail ruby-builder ruby-erubi ruby-addressable ruby-public-suffix "
    "ruby-rack-test ruby-diff-lcs ruby-webmock ruby-vcr ruby-sequel ruby-tilt ruby-excon ruby-httparty "
    "ruby-multi-json ruby-loofah ruby-dry-inflector ruby-factory-bot "
    "rubocop puma ruby-devise ruby-pg ruby-jbuilder ruby-bootsnap ruby-rspec-rails ruby-capybara ruby-pundit ruby-kaminari"
).split()


def use_home(name: str) -> Path:
    """Point gemdoc at a private home under benchmarks/.work (never the user's)."""
    home = WORK / name
    os.environ["GEMDOC_HOME"] = str(home)
    return home


def ensure_debian_packages() -> None:
    """Install the Debian ruby-* packages the benchmark bundle resolves from, when missing."""
    missing = [p for p in DEBIAN_PACKAGES if subprocess.run(["dpkg", "-s", p], capture_output=True).returncode]
    if missing:
        print(f"installing {len(missing)} Debian packages for the benchmark bundle", file=sys.stderr)
        env = os.environ | {"DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing], check=True, env=env)


def ensure_locked(project: Path) -> None:
    """Re-resolve offline when this machine's gems no longer satisfy the committed lockfile."""
    check = subprocess.run(["bundle", "check"], cwd=project, capture_output=True, text=True)
    if check.returncode != 0:
        subprocess.run(["bundle", "lock", "--local"], cwd=project, check=True, capture_output=True)


def fingerprint(conn: sqlite3.Connection, scope: list[int]) -> dict:
    """Over the scope's store entries (ids, as project.Scope.gems holds them), by gem name and version."""
    digest = hashlib.sha256()
    chunks = 0
    marks = ",".join("?" * len(scope))
    rows = conn.execute(f"SELECT name, version, id FROM gems WHERE id IN ({marks})", scope)
    gems = sorted(tuple(row) for row in rows)
    for name, version, entry in gems:
        digest.update(f"{name}@{version}\n".encode())
        for (d,) in conn.execute("SELECT digest FROM chunks WHERE entry = ? ORDER BY digest", [entry]):
            digest.update(d.encode())
            chunks += 1
    return {
        "gems": len(scope),
        "chunks": chunks,
        "digest": digest.hexdigest()[:12],
        "versions": {n: v for n, v, _ in gems},
    }


def save(name: str, data: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    return path

"""Run the Ruby shim: one JSON request in, one JSON answer out."""

import json
import shutil
import subprocess
from pathlib import Path

from gemdoc.errors import ShimError
from gemdoc.paths import package_resource


def ruby() -> str:
    found = shutil.which("ruby")
    if not found:
        raise ShimError("ruby not found on PATH: install Ruby (Debian: `apt-get install ruby`) and retry")
    return found


def script() -> Path:
    return package_resource("ruby_shim") / "gemdoc_shim.rb"


def command(verb: str) -> list[str]:
    """``extract`` needs only the standard library (rdoc, ripper, json): skipping RubyGems'
    boot saves a third of a small gem's time. ``locate`` asks RubyGems, so it keeps it."""
    flags = ["--disable-gems"] if verb == "extract" else []
    return [ruby(), *flags, str(script()), verb]


def call(verb: str, request: dict, timeout: float) -> dict:
    """Run one shim verb. A crash, a timeout or unreadable output raises ShimError."""
    try:
        done = subprocess.run(
            command(verb),
            input=json.dumps(request),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:
        raise ShimError(f"timed out after {timeout:.0f}s") from exc
    try:
        answer = json.loads(done.stdout) if done.stdout.strip() else {}
    except json.JSONDecodeError as exc:
        raise ShimError(f"unreadable shim output (exit {done.returncode})") from exc
    if "error" in answer:
        raise ShimError(answer["error"])
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        raise ShimError(f"ruby exited {done.returncode}: {tail[0][:200]}")
    return answer

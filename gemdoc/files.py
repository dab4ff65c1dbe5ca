"""Files: walking a gem's directories (regular files only, sorted, never through a symlink:
RDoc's own walk follows symlink loops), and writing a small file atomically.
"""

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


def tree(top: Path, skip: frozenset[str] = frozenset()) -> Iterator[Path]:
    """Every regular file under ``top``, skipping directories named in ``skip`` and any symlink."""
    for dirpath, dirnames, filenames in os.walk(top):  # followlinks=False
        dirnames[:] = sorted(d for d in dirnames if d not in skip and not os.path.islink(os.path.join(dirpath, d)))
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if not path.is_symlink() and path.is_file():
                yield path


def write_atomic(path: Path, text: str) -> None:
    """Write to a temporary file beside ``path``, then rename: a reader sees the old file or the
    new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)

"""Walking a gem's directories: regular files only, sorted, never through a symlink.

RDoc's own directory walk follows symlink loops; gemdoc lists files itself, here.
"""

import os
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

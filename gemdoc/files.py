"""Files: walking a gem's directories (regular files only, sorted, never through a symlink:
RDoc's own walk follows symlink loops), naming a gem's own file safely, reading a project's
file within a size cap, and writing a small file atomically.
"""

import os
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath


def tree(top: Path, skip: frozenset[str] = frozenset()) -> Iterator[Path]:
    """Every regular file under ``top``, skipping directories named in ``skip`` and any symlink
    (``top`` itself too: os.walk would follow it, and a gem's ``app -> /`` would walk the machine),
    and any name that is not printable (plain): a newline in a file's name would forge lines of output
    (``lib/x.rb:4\nrails@7.1.0 evil.rb:12``) wherever a result cites its file."""
    if os.path.islink(top):
        return
    for dirpath, dirnames, filenames in os.walk(top):  # followlinks=False
        dirnames[:] = sorted(d for d in dirnames if d not in skip and plain(d)
                             and not os.path.islink(os.path.join(dirpath, d)))  # fmt: skip
        for name in sorted(filter(plain, filenames)):
            path = Path(dirpath) / name
            if not path.is_symlink() and path.is_file():
                yield path


def plain(name: str) -> bool:
    """Whether a file name is printable: no control character (``\n``, an escape sequence, C1's) and no
    other line or paragraph separator (U+2028, U+0085: ``str.splitlines`` and JavaScript break there)."""
    return name.isprintable()


def within(root: Path, relative: str) -> Path | None:
    """``root/relative`` when it is a regular file below ``root`` reached through no symlink, else
    None: an absolute path, a ``..``, a symlink at any depth below the root (whose target could be
    anything on the machine) or a name the file system refuses never leaves a gem's own files."""
    parts = PurePosixPath(relative).parts if relative and "\0" not in relative else ()
    if not parts or parts[0] == "/" or ".." in parts:
        return None
    try:
        base = root.resolve(strict=True)
        path = base.joinpath(*parts)
        return path if path.resolve(strict=True) == path and path.is_file() else None
    except (OSError, RuntimeError):  # missing, a symlink loop, a name too long
        return None


def read_capped(path: Path, limit: int) -> bytes:
    """The bytes of ``path``, a regular file of at most ``limit`` bytes. Raises ValueError naming
    what is wrong otherwise (a FIFO, a device such as /dev/zero, a file too large), so that no
    file a project controls makes gemdoc block or fill its memory; OSError when it cannot be read."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not block the open
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError("is not a regular file")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"is larger than {limit // 1024} KiB")
    return data


def write_atomic(path: Path, text: str) -> None:
    """Write to a temporary file beside ``path``, then rename: a reader sees the old file or the
    new one, never half of one."""
    import tempfile  # only writers need it, and `gemdoc search` starts faster without it

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)

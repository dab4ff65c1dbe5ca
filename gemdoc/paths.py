"""Where gemdoc keeps its files.

Every function reads the environment when called, never at import time: a
memoised path would let the first reader of GEMDOC_HOME win for the life of
the process and send tests into the real home directory.
"""

import os
from pathlib import Path

import xdg_base_dirs


def _override(sub: str) -> Path | None:
    home = os.environ.get("GEMDOC_HOME")
    return Path(home) / sub if home else None


def data_dir() -> Path:
    return _override("data") or xdg_base_dirs.xdg_data_home() / "gemdoc"


def cache_dir() -> Path:
    return _override("cache") or xdg_base_dirs.xdg_cache_home() / "gemdoc"


def config_dir() -> Path:
    return _override("config") or xdg_base_dirs.xdg_config_home() / "gemdoc"


def store_path() -> Path:
    return data_dir() / "index.sqlite"


def lock_path() -> Path:
    return data_dir() / "index.lock"


def ri_cache_dir() -> Path:
    return cache_dir() / "ri"


def package_resource(name: str) -> Path:
    """A file shipped with gemdoc: inside the installed package, or in a checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / name, here.parent / name):
        if candidate.exists():
            return candidate
    raise FileNotFoundError(f"gemdoc installation is incomplete: {name} not found near {here}")

"""YAML that gemdoc did not write (a project's ``.gemdoc.yml``, Bundler's plugin index and
config), read within bounds: a size cap, UTF-8 text only, no aliases and no deep nesting.

A manifest gemdoc writes never needs an alias, and nine levels of nine-fold aliases in a few
hundred bytes expand into gigabytes as soon as anything walks the value ("billion laughs").
"""

from pathlib import Path

import yaml

from gemdoc import files

MAX_BYTES = 256 * 1024


class Unreadable(Exception):
    """Why a YAML file was refused, as a phrase completing "<path> ..."."""


class _NoAliases(yaml.SafeLoader):
    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            raise Unreadable("uses a YAML alias (*name), which gemdoc does not read")
        return super().compose_node(parent, index)


def load(path: Path, limit: int = MAX_BYTES) -> object:
    """The YAML document in ``path``. Raises Unreadable (too large, not a regular file, not UTF-8,
    an alias, too deep, not YAML) or OSError (cannot be read)."""
    try:
        text = files.read_capped(path, limit).decode("utf-8")
    except ValueError as exc:  # UnicodeDecodeError is one too
        raise Unreadable("is not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else str(exc)) from exc
    try:
        return yaml.load(text, Loader=_NoAliases)  # noqa: S506 - a SafeLoader that also refuses aliases
    except yaml.YAMLError as exc:
        raise Unreadable(f"is not valid YAML ({type(exc).__name__})") from exc
    except RecursionError as exc:
        raise Unreadable("nests too deeply to be a gemdoc or Bundler setting") from exc

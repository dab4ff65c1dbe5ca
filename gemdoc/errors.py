"""Errors a user can cause and fix: each carries one line naming cause and remedy."""


class GemdocError(Exception):
    """An expected failure. The CLI prints ``str(error)`` as one line and exits non-zero."""

    exit_code = 1


class LockfileError(GemdocError):
    """Gemfile.lock is missing or cannot be parsed."""


class StoreError(GemdocError):
    """The store cannot be opened as it is (another schema, corrupt, locked)."""


class ShimError(GemdocError):
    """Ruby (or the shim) could not be run."""

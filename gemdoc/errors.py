"""Errors a user can cause and fix: each carries one line naming cause and remedy."""


class GemdocError(Exception):
    """An expected failure. The CLI prints ``str(error)`` as one line and exits non-zero."""

    exit_code = 1


class UsageError(GemdocError):
    """The command was given something it cannot act on (an empty query, a URI naming nothing)."""

    exit_code = 2


class LockfileError(GemdocError):
    """Gemfile.lock is missing or cannot be parsed."""


class StoreError(GemdocError):
    """The store cannot be opened as it is (another schema, corrupt, locked)."""


class ShimError(GemdocError):
    """Ruby (or the shim) could not be run."""

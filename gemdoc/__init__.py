"""gemdoc: offline search over the documentation of the exact gems in a Gemfile.lock."""

__version__ = "0.1.0"

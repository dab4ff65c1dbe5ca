"""Which embedding model gemdoc uses, and what identifies its vectors.

Read at call time from GEMDOC_MODEL / GEMDOC_MODEL_DIR, then from the project's
``.gemdoc.yml`` (only once the user trusted its values, see trust.py), then from the user
config (``config.yaml`` in the config dir: ``model:``, ``model_dir:``), then the default.
Imports nothing heavy: `gemdoc status` reads it too.
"""

import os
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from gemdoc import paths
from gemdoc.errors import GemdocError

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DIR_KEY = "embedding_model_dir"  # the store's meta: where the model that made its vectors was loaded from


@dataclass(frozen=True)
class Known:
    dimension: int
    pooling: str
    query_prefix: str = ""
    document_prefix: str = ""


# Prefixes change what vectors mean, so they are part of a model's identity.
KNOWN = {
    "sentence-transformers/all-MiniLM-L6-v2": Known(384, "mean"),
    "BAAI/bge-small-en-v1.5": Known(384, "cls", "Represent this sentence for searching relevant passages: "),
    "nomic-ai/nomic-embed-text-v1.5": Known(768, "mean", "search_query: ", "search_document: "),
}


@dataclass(frozen=True)
class ModelSpec:
    name: str
    model_dir: Path | None  # a local directory of the model's files: no download ever

    @property
    def known(self) -> Known | None:
        return KNOWN.get(self.name)

    @property
    def query_prefix(self) -> str:
        return self.known.query_prefix if self.known else ""

    @property
    def document_prefix(self) -> str:
        return self.known.document_prefix if self.known else ""

    def identity(self, dimension: int) -> str:
        """What the store's meta records: vectors with another identity are never mixed in."""
        pooling = self.known.pooling if self.known else "model default"
        return f"{self.name} · {dimension}d · {pooling} · query prefix {self.query_prefix!r} · document prefix {self.document_prefix!r}"


def user_config() -> dict:
    path = paths.config_dir() / "config.yaml"
    if not path.exists():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (yaml.YAMLError, OSError) as exc:
        raise GemdocError(f"{path} is not valid YAML ({type(exc).__name__}): fix it or delete it") from exc
    if not isinstance(data, dict):
        raise GemdocError(f"{path} must be a mapping of settings (model, model_dir): fix it or delete it")
    return data


def configured(project: Path | None = None) -> ModelSpec:
    config = user_config() | (_project_settings(project) if project else {})
    name = os.environ.get("GEMDOC_MODEL") or config.get("model") or DEFAULT_MODEL
    directory = os.environ.get("GEMDOC_MODEL_DIR") or config.get("model_dir")
    return ModelSpec(str(name), Path(directory).expanduser() if directory else None)


def for_store(project: Path, conn: sqlite3.Connection) -> ModelSpec:
    """The configured model; with no directory configured, the directory `gemdoc embed` loaded the
    same model from, as recorded with the vectors, so a later process (a shell without
    GEMDOC_MODEL_DIR, the MCP server) finds the model where embed did."""
    spec = configured(project)
    if spec.model_dir is not None:
        return spec
    from gemdoc.vectors import stored_identity

    row = conn.execute("SELECT value FROM meta WHERE key = ?", [DIR_KEY]).fetchone()
    recorded = row[0] if row else None
    if recorded and stored_identity(conn).startswith(f"{spec.name} · ") and Path(recorded).is_dir():
        return ModelSpec(spec.name, Path(recorded))
    return spec


def _project_settings(project: Path) -> dict:
    """The project's gated model settings, when the user approved these exact values."""
    from gemdoc import manifest, trust

    settings = manifest.load(project).gated()
    if not settings:
        return {}
    verdict = trust.verdict(project)
    if not verdict.trusted:
        print(f"gemdoc: ignoring {', '.join(settings)} in {manifest.FILENAME}: {verdict.reason}", file=sys.stderr)
        return {}
    return settings


def cache_dir() -> Path:
    """Where `gemdoc embed` downloads models."""
    return paths.cache_dir() / "models"

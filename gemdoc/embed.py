"""`gemdoc embed`: give every chunk of the bundle a vector, incrementally and honestly.

Only chunks without a vector are embedded (vectors are keyed by content digest). Each
batch is written in its own transaction, so Ctrl-C keeps every finished batch. A batch
that fails is halved and retried down to one chunk; a chunk that still fails stays
pending and is counted, never faked and never dropped.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gemdoc import models, paths, project, store, vectors
from gemdoc.encoder import Embedder
from gemdoc.errors import GemdocError
from gemdoc.indexer import writer_lock


STEP = 256  # chunks embedded and written per transaction; Ctrl-C keeps every finished step


@dataclass
class EmbedReport:
    identity: str
    embedded: int = 0
    already: int = 0
    failed: int = 0
    seconds: float = 0.0
    reset: bool = False

    @property
    def rate(self) -> float:
        return self.embedded / self.seconds if self.seconds else 0.0


Progress = Callable[[int, int], None]


def embed_project(project_dir: Path, force: bool = False, progress: Progress | None = None) -> EmbedReport:
    conn = store.connect(paths.store_path())
    gems = project.scope(conn, project_dir).gems
    conn.close()
    embedder = Embedder(models.configured(project_dir), allow_download=True)
    with writer_lock():
        writer = store.Writer(paths.store_path())
        try:
            report = _embed(writer, embedder, gems, force, progress)
            if embedder.directory:
                writer.db["meta"].upsert({"key": models.DIR_KEY, "value": str(embedder.directory)}, pk="key")
            return report
        finally:
            writer.close()


def _embed(writer: store.Writer, embedder: Embedder, gems, force: bool, progress: Progress | None) -> EmbedReport:
    report = EmbedReport(embedder.identity)
    if force:
        writer.reset_vectors(embedder.identity, embedder.dimension)
        report.reset = True
    else:
        vectors.check_identity(writer.db.conn, embedder.identity)
        writer.reset_vectors(embedder.identity, embedder.dimension, keep=True)
    # Similar lengths together: texts of one token length share the model's batches.
    todo = sorted(vectors.pending(writer.db.conn, gems), key=lambda item: len(item[1]))
    report.already = vectors.embedded(writer.db.conn, gems)
    start = time.monotonic()
    for offset in range(0, len(todo), STEP):
        batch = todo[offset : offset + STEP]
        report.embedded += _embed_batch(writer, embedder, batch, report)
        report.seconds = time.monotonic() - start
        if progress:
            progress(offset + len(batch), len(todo))
    if todo and not report.embedded:
        raise GemdocError(
            f"no chunk could be embedded ({report.failed} failed): check the model (GEMDOC_MODEL, GEMDOC_MODEL_DIR) and retry"
        )
    return report


def _embed_batch(writer: store.Writer, embedder: Embedder, batch: list[tuple[str, str]], report: EmbedReport) -> int:
    """Embed and store a batch; on failure halve it, down to single chunks. Returns chunks stored."""
    try:
        matrix = embedder.embed_documents([text for _, text in batch])
    except Exception:  # onnxruntime and tokenizers raise anything; the batch is what failed
        if len(batch) == 1:
            report.failed += 1
            return 0
        half = len(batch) // 2
        return _embed_batch(writer, embedder, batch[:half], report) + _embed_batch(writer, embedder, batch[half:], report)
    writer.write_vectors([(digest, matrix[i].tobytes()) for i, (digest, _) in enumerate(batch)])
    return len(batch)

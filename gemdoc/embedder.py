"""Text to vectors with fastembed. Imported only by the commands that embed (embed,
vsearch, query); `gemdoc search` never loads numpy, onnxruntime or fastembed.

Only `gemdoc embed` may download a model (``allow_download=True``): every other
caller loads from a local directory or the download cache, with the Hugging Face
hub switched off, and fails with the remedy when the model is not there.
"""

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from gemdoc import models
from gemdoc.errors import GemdocError

BATCH = 64
MAX_CHARS = 600  # measured: with length-sorted batches, a longer cap embeds no faster and the tail adds little


class NoModel(GemdocError):
    """The model is not on this machine."""


class Embedder:
    def __init__(self, spec: models.ModelSpec, allow_download: bool = False):
        self.spec = spec
        self.model = _load(spec, allow_download)
        probe = self.embed_documents(["gemdoc model check"])
        self.dimension = int(probe.shape[1])
        norm = float((probe[0] ** 2).sum()) ** 0.5
        if not 0.98 < norm < 1.02:
            raise GemdocError(f"model {spec.name} does not return normalised vectors (norm {norm:.3f}): choose another")
        if spec.known and spec.known.dimension != self.dimension:
            raise GemdocError(f"model {spec.name} returned {self.dimension} dimensions, expected {spec.known.dimension}")

    @property
    def identity(self) -> str:
        """The model's identity plus the size of its weights: an int8 and an fp32 build of one
        model make different vectors and must not be mixed either."""
        return f"{self.spec.identity(self.dimension)} · weights {self.weights_bytes} bytes · first {MAX_CHARS} chars"

    @property
    def weights_bytes(self) -> int:
        directory = getattr(getattr(self.model, "model", None), "_model_dir", None)
        files = sorted(Path(directory).glob("*.onnx")) if directory else []
        return sum(f.stat().st_size for f in files)

    def embed_documents(self, texts: list[str]):
        import numpy as np

        prefixed = [self.spec.document_prefix + t[:MAX_CHARS] for t in texts]
        return np.asarray(list(self.model.embed(prefixed, batch_size=BATCH)), dtype=np.float32)

    def embed_query(self, text: str):
        import numpy as np

        vectors = list(self.model.embed([self.spec.query_prefix + text[:MAX_CHARS]], batch_size=1))
        return np.asarray(vectors[0], dtype=np.float32)


def _available(spec: models.ModelSpec, allow_download: bool) -> None:
    """Fail before importing fastembed (a second of imports) when the model cannot be there."""
    if spec.model_dir and not any(spec.model_dir.glob("*.onnx")):
        raise NoModel(f"no ONNX model in {spec.model_dir} (GEMDOC_MODEL_DIR / model_dir): point it at the model's files")
    if not spec.model_dir and not allow_download and not any(models.cache_dir().rglob("*.onnx")):
        raise NoModel(f"model {spec.name} is not downloaded: run `gemdoc embed`")


def _load(spec: models.ModelSpec, allow_download: bool):
    _available(spec, allow_download)
    with _hub(offline=not allow_download or spec.model_dir is not None):
        try:
            from fastembed import TextEmbedding
        except ImportError as exc:
            raise GemdocError("fastembed is not installed: `pip install 'gemdoc[embed]'`") from exc
        kwargs: dict = {"cache_dir": str(models.cache_dir())}
        if spec.model_dir:
            kwargs["specific_model_path"] = str(spec.model_dir)
        elif not allow_download:
            kwargs["local_files_only"] = True
        try:
            return TextEmbedding(model_name=spec.name, **kwargs)
        except ValueError as exc:
            raise GemdocError(f"fastembed does not know model {spec.name!r}: set GEMDOC_MODEL to one it supports") from exc
        except Exception as exc:  # fastembed raises plain exceptions for a missing local model
            if allow_download:
                raise GemdocError(f"could not download {spec.name}: {exc}; check the network, or set GEMDOC_MODEL_DIR") from exc
            raise NoModel(f"model {spec.name} is not downloaded: run `gemdoc embed`") from exc


@contextlib.contextmanager
def _hub(offline: bool) -> Iterator[None]:
    """Switch the Hugging Face hub off (or leave it as it was) while a model loads."""
    saved = {k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", "HF_HUB_DISABLE_TELEMETRY")}
    os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
    if offline:
        os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


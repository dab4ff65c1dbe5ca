"""Text to vectors with fastembed. Imported only by the commands that embed (embed,
vsearch, query); `gemdoc search` never loads numpy, onnxruntime or fastembed.

When the model's files are on disk and its pooling is known, text is embedded by
``OnnxEncoder`` instead of fastembed: the same ONNX file and tokenizer run through
onnxruntime and tokenizers directly, one text at a time, pooled and normalised as fastembed
does (a test holds the two equal). Importing fastembed alone costs about a second, which a
per-question `query` cannot afford, and unpadded texts embed about twice as fast as
fastembed's padded batches (benchmarks/vector_speed.py); a vector then no longer depends on
which texts shared its batch. Each batch runs on one thread, one batch per core at a time
(onnxruntime releases the GIL): on 2 cores that embeds more per second than spreading each
batch over both cores (benchmarks/vector_speed.py measures both). fastembed remains the
loader for downloads and for models whose pooling gemdoc does not know.

Only `gemdoc embed` may download a model (``allow_download=True``): every other
caller loads from a local directory or the download cache, with the Hugging Face
hub switched off, and fails with the remedy when the model is not there.
"""

import contextlib
import functools
import os
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from gemdoc import models
from gemdoc.errors import GemdocError

BATCH = 64
ONNX_FILES = ("model_optimized.onnx", "model.onnx")  # the weights fastembed runs, in its order of preference
MEMO = 16  # query parts remembered by Embedder.embed_part
MAX_CHARS = 600  # measured: with length-sorted batches, a longer cap embeds no faster and the tail adds little
PROBE_SECONDS = 5.0  # how long `gemdoc embed` waits for the model hub before naming the network


class NoModel(GemdocError):
    """The model is not on this machine."""


class OnnxEncoder:
    """fastembed's embedding path for one known model directory, without importing fastembed."""

    def __init__(self, directory: Path, pooling: str):
        import onnxruntime
        from tokenizers import Tokenizer

        self.directory, self.pooling = directory, pooling
        onnx = next(f for f in ONNX_FILES if (directory / f).is_file())
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        options.intra_op_num_threads = 1  # parallel across batches instead (see embed)
        self.session = onnxruntime.InferenceSession(str(directory / onnx), options, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=_max_context(directory))
        self.tokenizer.no_padding()

    def embed(self, texts: list[str], batch_size: int = 1) -> Iterator:
        """Vectors in the order of ``texts``. Texts are never padded: those of one token length
        share a batch, when the model gives a text the same vector in a batch as alone (an int8
        model with dynamic quantization does not; it embeds one text at a time)."""
        ids = [e.ids for e in self.tokenizer.encode_batch(texts)]
        size = batch_size if len(ids) > 1 and self.batches_exactly else 1
        batches = list(_same_length_batches(ids, size))
        feeds = [[ids[i] for i in b] for b in batches]
        outputs = self._pool.map(self._run, feeds) if len(feeds) > 1 else map(self._run, feeds)
        vectors: dict[int, object] = {}
        for batch, output in zip(batches, outputs):
            for index, vector in zip(batch, output):
                vectors[index] = vector
        return (vectors[i] for i in range(len(ids)))

    @functools.cached_property
    def _pool(self) -> ThreadPoolExecutor:
        """One worker per core; onnxruntime releases the GIL while a batch runs."""
        return ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="gemdoc-embed")

    def _run(self, batch: list[list[int]]):
        import numpy as np

        ids = np.array(batch, dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = self.session.run(None, feed)[0]
        pooled = hidden.mean(axis=1) if self.pooling == "mean" else hidden[:, 0]
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.where(norms == 0, 1e-12, norms)).astype(np.float32)

    @functools.cached_property
    def batches_exactly(self) -> bool:
        """Does a text get the same vector in a batch as alone? Asked of the model once."""
        probe = self.tokenizer.encode("gemdoc checks whether batching changes a vector").ids
        other = [probe[0], *reversed(probe[1:-1]), probe[-1]]
        alone, together = self._run([probe])[0], self._run([probe, other])[0]
        return float(abs(alone - together).max()) < 1e-5


def _same_length_batches(ids: list[list[int]], size: int) -> Iterator[list[int]]:
    """Indexes of ``ids`` grouped by token count, at most ``size`` per group."""
    by_length: dict[int, list[int]] = {}
    for index, tokens in enumerate(ids):
        by_length.setdefault(len(tokens), []).append(index)
    for group in by_length.values():
        for start in range(0, len(group), size):
            yield group[start : start + size]


def _max_context(directory: Path) -> int:
    """The truncation length fastembed uses: the stricter of the tokenizer config's two limits."""
    import json

    config = json.loads((directory / "tokenizer_config.json").read_text(encoding="utf-8"))
    limits = [v for v in (config.get("model_max_length"), config.get("max_length"))
              if isinstance(v, int) and not isinstance(v, bool) and 0 < v < 1_000_000]  # fmt: skip
    return min(limits) if limits else 512


def _direct_dir(spec: models.ModelSpec) -> Path | None:
    """The model's files, when they are on disk and its pooling is known (else fastembed loads it)."""
    if not spec.known or spec.known.pooling not in ("mean", "cls"):
        return None
    if spec.model_dir:
        candidates = [spec.model_dir]
    else:
        short = spec.name.split("/")[-1]
        candidates = list(models.cache_dir().glob(f"*{short}*/snapshots/*"))
    usable = [d for d in candidates if (d / "tokenizer.json").is_file() and (d / "tokenizer_config.json").is_file()
              and any((d / f).is_file() for f in ONNX_FILES)]  # fmt: skip
    return usable[0] if len(usable) == 1 else None


class Embedder:
    def __init__(self, spec: models.ModelSpec, allow_download: bool = False):
        """The model's files run directly when they are on disk and its pooling is known (see
        OnnxEncoder); fastembed loads anything else, and downloads (``allow_download``: only
        `gemdoc embed`)."""
        self.spec = spec
        self._memo: dict[tuple[str, bool], object] = {}
        self._memo_lock = threading.Lock()
        direct = _direct_dir(spec)
        if direct is None:
            self.model = _load(spec, allow_download)
            direct = _direct_dir(spec)  # a download just made the files local
        if direct is not None:
            self.model = OnnxEncoder(direct, spec.known.pooling)
        self.directory = direct or getattr(getattr(self.model, "model", None), "_model_dir", None)
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
        files = sorted(Path(self.directory).glob("*.onnx")) if self.directory else []
        return sum(f.stat().st_size for f in files)

    def embed_documents(self, texts: list[str]):
        import numpy as np

        prefixed = [self.spec.document_prefix + t[:MAX_CHARS] for t in texts]
        return np.asarray(list(self.model.embed(prefixed, batch_size=BATCH)), dtype=np.float32)

    def embed_query(self, text: str):
        import numpy as np

        vectors = list(self.model.embed([self.spec.query_prefix + text[:MAX_CHARS]], batch_size=1))
        return np.asarray(vectors[0], dtype=np.float32)

    def embed_part(self, text: str, as_document: bool):
        """One part of a query: a question or rephrasing as a query, a ``hyde:`` passage as a document.
        Remembered (the last MEMO parts): the vector arm and the evidence gate embed the same parts."""
        key = (text, as_document)
        with self._memo_lock:  # the MCP server answers requests on several threads
            vector = self._memo.get(key)
        if vector is None:
            vector = self.embed_documents([text])[0] if as_document else self.embed_query(text)
            vector.setflags(write=False)  # shared by every caller
            with self._memo_lock:
                self._memo[key] = vector
                while len(self._memo) > MEMO:
                    self._memo.pop(next(iter(self._memo)))
        return vector


def _available(spec: models.ModelSpec, allow_download: bool) -> None:
    """Fail before importing fastembed (a second of imports) when the model cannot be there."""
    if spec.model_dir and not any(spec.model_dir.glob("*.onnx")):
        raise NoModel(f"no ONNX model in {spec.model_dir} (GEMDOC_MODEL_DIR / model_dir): point it at the model's files")
    if not spec.model_dir and not allow_download and not any(models.cache_dir().rglob("*.onnx")):
        raise NoModel(f"model {spec.name} is not downloaded: run `gemdoc embed`")


def _reachable(spec: models.ModelSpec) -> None:
    """Before a download, one request to the model hub: without network fastembed retries for
    about 40 s and then blames the model name. Any HTTP answer means the hub is there."""
    endpoint = os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
    remedy = ("set GEMDOC_MODEL_DIR (or model_dir: in config.yaml) to a directory holding the model's files "
              "(model.onnx, tokenizer.json, tokenizer_config.json)")  # fmt: skip
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on"):
        raise NoModel(f"cannot download {spec.name}: HF_HUB_OFFLINE is set (no network); {remedy}")
    try:
        urllib.request.urlopen(urllib.request.Request(endpoint, method="HEAD"), timeout=PROBE_SECONDS).close()
    except urllib.error.HTTPError:
        return
    except (OSError, ValueError) as exc:
        why = getattr(exc, "reason", None) or exc
        raise NoModel(f"cannot download {spec.name}: no network to {endpoint} ({str(why)[:120]}); {remedy}") from exc


def _load(spec: models.ModelSpec, allow_download: bool):
    _available(spec, allow_download)
    if allow_download and not spec.model_dir and not _cached(spec):
        _reachable(spec)
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


def _cached(spec: models.ModelSpec) -> bool:
    """Are this model's files already in the download cache (no network needed)?"""
    short = spec.name.split("/")[-1]
    return any(models.cache_dir().glob(f"*{short}*/**/*.onnx"))


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


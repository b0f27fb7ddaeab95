"""The ONNX Runtime embedder against sentence-transformers, its conversion and its checks, and a
serving process without torch."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings

from memories import embeddings, onnx_model
from tests.conftest import ROOT

# Equal embeddings, to this tolerance: the two runtimes order float32 sums differently, which
# moved a component by at most 2.3e-7 here (worst cosine 0.99999988); a real difference
# (tokenisation, truncation, pooling) moves cosines by 1e-2 or more.
MIN_COSINE = 0.99999
MAX_ABS_DIFFERENCE = 1e-5

WORDS = [
    *("memory", "agent", "remembers", "the", "meeting", "on", "Tuesday", "with", "Mara", "about"),
    *("garden", "budget", "allergy", "peanuts", "Paris", "Lisbon", "flight", "deadline", "invoice"),
    *("project", "Kubernetes", "deploy", "rollback", "coffee"),
]
SENTENCES = [
    "Mara moved to Lisbon in March and works at a bakery near the river.",
    "The user prefers short answers, in British English, with no emoji.",
    "Deploys go out on Thursdays after the integration tests pass on main.",
    "He is allergic to peanuts and carries an EpiPen on every trip.",
    "The quarterly budget for the community garden was raised to 4,200 euros.",
]
FOREIGN = [
    "Je préfère le thé au café, surtout le matin.",
    "Meine Schwester wohnt seit zwei Jahren in München.",
    "Mi vuelo a Buenos Aires sale el viernes a las 7:45.",
    "私は毎朝六時に起きて、公園を散歩します。",
    "我下周要去上海参加一个关于人工智能的会议。",
    "Мой брат учится в Санкт-Петербурге на инженера.",
    "أحب قراءة الكتب في المساء مع كوب من الشاي.",
    "मुझे बारिश के मौसम में पकौड़े खाना पसंद है।",
    "저는 서울에서 태어났지만 부산에서 자랐어요.",
    "Ο παππούς μου φτιάχνει το καλύτερο ελαιόλαδο.",  # noqa: RUF001 - Greek on purpose
]
EMOJI = ["🎉🎉🎉", "Launch day 🚀 went well 👍", "🍕 or 🍣 tonight?", "❤️", "👩‍👩‍👧‍👦 family trip ✈️ 🏖️"]
EMPTYISH = ["", " ", "\n", "\t\t", "...", "?", "a", "0", "[CLS]", "[SEP] [PAD]", "\u200b", "  \n  x  "]


def _texts() -> list[str]:
    """A few hundred varied texts, the same on every run."""
    rng = random.Random(19)  # noqa: S311 - reproducible test data
    texts = [*SENTENCES, *FOREIGN, *EMOJI, *EMPTYISH]
    texts += [" ".join(rng.choices(WORDS, k=rng.randint(1, 12))) for _ in range(120)]
    texts += [" ".join(rng.choices(SENTENCES + FOREIGN, k=rng.randint(2, 6))) for _ in range(60)]
    # Longer than max_seq_length (256 tokens): both must cut at the same token.
    texts += [" ".join(rng.choices(SENTENCES + FOREIGN + EMOJI, k=rng.randint(25, 60))) for _ in range(40)]
    texts += [
        "".join(rng.choices("abcdefghijklmnopqrstuvwxyz0123456789 .,:/-_#@", k=rng.randint(1, 400)))
        for _ in range(40)
    ]
    texts += [
        "def f(x):\n    return x ** 2  # squares",
        "https://example.com/a/b?c=d&e=f",
        "ALL CAPS SHOUTING",
        "CamelCaseIdentifierName",
    ]
    return texts


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return _texts()


@pytest.fixture(scope="module")
def reference(texts) -> np.ndarray:
    """sentence-transformers' embeddings of the texts: what the service ran before (torch)."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(onnx_model.source_dir()), device="cpu")
    return model.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)


def _compare(ours: np.ndarray, theirs: np.ndarray) -> tuple[float, float]:
    cosines = (ours * theirs).sum(axis=1) / (np.linalg.norm(ours, axis=1) * np.linalg.norm(theirs, axis=1))
    return float(np.abs(ours - theirs).max()), float(cosines.min())


class TestEqualToSentenceTransformers:
    def test_it_embeds_a_few_hundred_varied_texts_as_sentence_transformers_does(self, texts, reference):
        ours = np.array(embeddings.embed(texts), dtype=np.float32)
        assert ours.shape == reference.shape == (len(texts), embeddings.DIMENSIONS)
        worst_abs, worst_cosine = _compare(ours, reference)
        assert worst_abs <= MAX_ABS_DIFFERENCE and worst_cosine >= MIN_COSINE, (worst_abs, worst_cosine)

    def test_it_embeds_each_text_alone_as_in_a_batch(self, texts, reference):
        # Batches pad to their longest text; padding must not reach a text's vector.
        picks = [texts[i] for i in range(0, len(texts), 17)]
        alone = np.array([embeddings.embed([t])[0] for t in picks], dtype=np.float32)
        worst_abs, worst_cosine = _compare(alone, reference[::17])
        assert worst_abs <= MAX_ABS_DIFFERENCE and worst_cosine >= MIN_COSINE, (worst_abs, worst_cosine)

    def test_it_returns_unit_vectors_with_the_texts_in_their_order(self, texts):
        vectors = np.array(embeddings.embed(texts[:50]))
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
        reversed_vectors = np.array(embeddings.embed(texts[:50][::-1]))
        assert np.allclose(vectors, reversed_vectors[::-1], atol=1e-6)

    def test_it_cuts_a_text_at_max_seq_length(self):
        max_tokens = json.loads((onnx_model.source_dir() / "sentence_bert_config.json").read_text())[
            "max_seq_length"
        ]
        long = " ".join(["the garden budget"] * max_tokens)
        longer, other = embeddings.embed(
            [long + " and then peanuts, Lisbon and rockets", long[: len(long) // 4]]
        )
        (same,) = embeddings.embed([long])
        assert np.allclose(longer, same, atol=1e-6)
        assert not np.allclose(same, other, atol=1e-3)


@pytest.fixture
def model_copy(tmp_path) -> Path:
    """A folder holding a copy of the checked ONNX file and its manifest."""
    embeddings.get_model()
    for name in (f"{onnx_model.MODEL_NAME}.onnx", f"{onnx_model.MODEL_NAME}.json"):
        shutil.copy(settings.VAR_DIR / "models" / name, tmp_path / name)
    return tmp_path


def _flip_a_byte(path: Path) -> None:
    with path.open("r+b") as handle:
        handle.seek(path.stat().st_size // 2)
        byte = handle.read(1)
        handle.seek(-1, 1)
        handle.write(bytes([byte[0] ^ 0xFF]))


class TestConversion:
    def test_it_accepts_the_file_it_made(self, model_copy):
        assert onnx_model.onnx_model_problem(directory=model_copy, source=onnx_model.source_dir()) == ""

    def test_it_finds_a_missing_file(self, model_copy):
        (model_copy / f"{onnx_model.MODEL_NAME}.onnx").unlink()
        problem = onnx_model.onnx_model_problem(directory=model_copy, source=onnx_model.source_dir())
        assert problem.endswith("is missing")

    def test_it_finds_a_corrupt_file(self, model_copy):
        _flip_a_byte(model_copy / f"{onnx_model.MODEL_NAME}.onnx")
        problem = onnx_model.onnx_model_problem(directory=model_copy, source=onnx_model.source_dir())
        assert "is corrupt" in problem

    def test_it_finds_a_file_made_from_other_weights(self, model_copy):
        manifest_file = model_copy / f"{onnx_model.MODEL_NAME}.json"
        manifest = json.loads(manifest_file.read_text())
        manifest_file.write_text(json.dumps({**manifest, "source_sha256": "0" * 64}))
        problem = onnx_model.onnx_model_problem(directory=model_copy, source=onnx_model.source_dir())
        assert "other weights" in problem

    def test_it_finds_an_unreadable_manifest(self, model_copy):
        (model_copy / f"{onnx_model.MODEL_NAME}.json").write_text("{not json")
        problem = onnx_model.onnx_model_problem(directory=model_copy, source=onnx_model.source_dir())
        assert "unreadable" in problem

    @pytest.mark.slow
    def test_it_rebuilds_a_corrupt_file_with_the_same_embeddings(self, model_copy, texts):
        onnx_file = model_copy / f"{onnx_model.MODEL_NAME}.onnx"
        _flip_a_byte(onnx_file)
        source = onnx_model.source_dir()
        assert onnx_model.onnx_model_ensure(directory=model_copy, source=source) == onnx_file
        assert onnx_model.onnx_model_problem(directory=model_copy, source=source) == ""
        rebuilt = onnx_model.OnnxEmbedder(onnx_file, source).encode(texts[:60])
        worst_abs, worst_cosine = _compare(rebuilt, np.array(embeddings.embed(texts[:60]), dtype=np.float32))
        assert worst_abs <= MAX_ABS_DIFFERENCE and worst_cosine >= MIN_COSINE

    @pytest.mark.slow
    def test_it_says_in_one_line_why_a_file_cannot_be_made(self, tmp_path):
        source = tmp_path / "weights"
        shutil.copytree(onnx_model.source_dir(), source)
        (source / "model.safetensors").write_bytes(b"not a safetensors file")
        with pytest.raises(onnx_model.ModelFileError) as raised:
            onnx_model.onnx_model_ensure(directory=tmp_path / "models", source=source)
        message = str(raised.value)
        assert "is missing, and converting it failed:" in message and "\n" not in message
        assert not (tmp_path / "models" / f"{onnx_model.MODEL_NAME}.json").exists()


SERVING = {
    "web": "import config.asgi",
    "worker": (
        "from config.celery import app\n"
        "import memories.tasks\n"
        "from celery.signals import worker_process_init\n"
        "worker_process_init.send(sender=None)"
    ),
}


@pytest.mark.parametrize("process", SERVING, ids=list(SERVING))
def test_it_embeds_in_a_serving_process_without_importing_torch(process):
    code = textwrap.dedent(
        """
        import os, sys
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        import django
        django.setup()
        {start}
        from memories import embeddings
        assert len(embeddings.embed(["is torch here?"])[0]) == embeddings.DIMENSIONS
        assert len(embeddings.embed_query("and now?")) == embeddings.DIMENSIONS
        heavy = sorted(
            name for name in sys.modules
            if name.split(".")[0] in ("torch", "sentence_transformers", "transformers")
        )
        print(" ".join(heavy[:5]) or "none")
        """
    ).format(start=SERVING[process])
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "none"

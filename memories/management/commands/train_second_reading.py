"""`manage.py train_second_reading`: fit the update engine's second reading on the written pairs."""

from __future__ import annotations

import collections
import json
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypedDict

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from memories import embeddings
from memories.pipeline import second_reading
from memories.pipeline.extract import FACT, extract
from memories.pipeline.supersede import RELATED, _cosine, frame_similarities
from memories.pipeline.update import Verdict, frame_of, judge

PAIRS = Path(settings.BASE_DIR) / "benchmarks" / "data" / "update_pairs"
# The earlier statement is said on one day, the later one three weeks after: a reference for the
# times they name, as the worker has the save's date.
_SAID = datetime(2026, 11, 1, 12, tzinfo=UTC)


class _Reading(TypedDict):
    # What the rules and the second reading are both given of a pair, beside its frames.
    similarity: float
    new_kind: str
    old_kind: str


def pair_rows(pairs: list[dict[str, str]]) -> tuple[list[list[float]], list[Verdict]]:
    """Each pair's features as the worker computes them for a new statement and one prior: the frames,
    the statements' kinds, the cosine of their embeddings and the rules' verdict."""
    texts = sorted({text for pair in pairs for text in (pair["old"], pair["new"])})
    vectors = dict(zip(texts, embeddings.embed(texts), strict=True))
    rows, verdicts = [], []
    for pair in pairs:
        old, new = frame_of(pair["old"]), frame_of(pair["new"])
        old_kind = _kind(pair["old"], _SAID)
        new_kind = _kind(pair["new"], _SAID + timedelta(days=21))
        similarity = _cosine(vectors[pair["new"]], vectors[pair["old"]])
        masked = frame_similarities(new, [old]) if similarity >= RELATED else {}
        reading = _Reading(similarity=similarity, new_kind=new_kind, old_kind=old_kind)
        verdict = judge(new, old, frame_similarity=masked.get(old.masked), **reading)
        rows.append(second_reading.pair_features(new, old, verdict=verdict, **reading))
        verdicts.append(verdict)
    return rows, verdicts


def _kind(text: str, reference: datetime) -> str:
    _, candidates = extract(text, reference=reference)
    return candidates[0].kind if candidates else FACT


def read_pairs(folder: Path = PAIRS) -> list[dict[str, str]]:
    return [
        json.loads(line)
        for path in sorted(folder.glob("*.jsonl"))
        for line in path.read_text().splitlines()
        if line.strip()
    ]


class Command(BaseCommand):
    help = (
        "Fit the update engine's second reading (memories/pipeline/second_reading.py) on the written "
        "pairs in benchmarks/data/update_pairs/ and write its weights to second_reading.json."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--out", default=str(second_reading.WEIGHTS), help="where to write the weights")
        parser.add_argument("--l2", type=float, default=1.0)
        parser.add_argument("--steps", type=int, default=500)

    def handle(self, *args: Any, **options: Any) -> None:
        pairs = read_pairs()
        rows, verdicts = pair_rows(pairs)
        labels = [pair["label"] for pair in pairs]
        reader = second_reading.fit(rows, labels, l2=options["l2"], steps=options["steps"])
        pairs_read = list(zip(rows, verdicts, labels, strict=True))
        rules = collections.Counter((str(verdict), label) for _, verdict, label in pairs_read)
        fitted = collections.Counter(
            (max(p, key=p.__getitem__), label)
            for p, label in ((reader.probabilities(row), label) for row, _, label in pairs_read)
        )
        Path(options["out"]).write_text(
            json.dumps(
                {
                    "about": "memories/pipeline/second_reading.py; manage.py train_second_reading",
                    "pairs": len(pairs),
                    "l2": options["l2"],
                    "steps": options["steps"],
                    **asdict(reader),
                },
                indent=1,
            )
            + "\n"
        )
        self.stdout.write(f"{len(pairs)} pairs; rules' verdict by label: {dict(sorted(rules.items()))}")
        self.stdout.write(f"fitted reading by label (on its own pairs): {dict(sorted(fitted.items()))}")

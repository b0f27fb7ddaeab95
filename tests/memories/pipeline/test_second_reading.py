"""The update engine's second reading (`memories.pipeline.second_reading`): a regression learned from
written pairs that may read a change where the rules read two facts, inside guards that keep a true
fact from being hidden.

Pure rules and the real embedding model for the similarity the worker would measure; the statements'
kinds read by the pipeline's own extraction, as the worker has them. No database.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command

from memories import embeddings
from memories.pipeline import second_reading
from memories.pipeline.extract import FACT, extract
from memories.pipeline.second_reading import read_pair
from memories.pipeline.supersede import RELATED, frame_similarities
from memories.pipeline.update import Verdict, frame_of, judge

ADD, UPDATE = Verdict.ADD, Verdict.UPDATE
_SAID = datetime(2026, 10, 5, 9, tzinfo=UTC)


def _kind(text: str, reference: datetime) -> str:
    _, candidates = extract(text, reference=reference)
    return candidates[0].kind if candidates else FACT


def _inputs(old: str, new: str) -> dict:
    old_vector, new_vector = embeddings.embed([old, new])
    similarity = sum(a * b for a, b in zip(old_vector, new_vector, strict=True)) / (
        math.sqrt(sum(a * a for a in old_vector)) * math.sqrt(sum(b * b for b in new_vector))
    )
    new_frame, old_frame = frame_of(new), frame_of(old)
    masked = frame_similarities(new_frame, [old_frame]) if similarity >= RELATED else {}
    return {
        "new": new_frame,
        "old": old_frame,
        "similarity": similarity,
        "new_kind": _kind(new, _SAID + timedelta(days=30)),
        "old_kind": _kind(old, _SAID),
        "frame_similarity": masked.get(old_frame.masked),
    }


def engine_verdict(old: str, new: str) -> Verdict:
    """What the worker decides for `new` against the prior `old` (rules, then the second reading)."""
    return read_pair(**_inputs(old, new))


def rules_verdict(old: str, new: str) -> Verdict:
    return judge(**_inputs(old, new))


# Changes the rules leave apart (each asserted below to be ADD by the rules alone), which the reading
# takes: a provider switched, a school changed, a training moved by someone else, a role left.
# Written for this test, not taken from the update suite nor from the training pairs.
READ_AS_CHANGES = [
    (
        "User's optician is Vision Express on King Street.",
        "User switched opticians and now goes to Specsavers.",
    ),
    ("My daughter Isla is in Year 4 at Oakfield School.", "Isla started at Brookside Academy this term."),
    ("User's physio appointments are on Tuesdays at 9am.", "The clinic moved my physio to Thursdays at 11."),
]


@pytest.mark.parametrize(("old", "new"), READ_AS_CHANGES)
def test_the_second_reading_takes_a_change_the_rules_leave_apart(old, new):
    assert rules_verdict(old, new) is ADD
    assert engine_verdict(old, new) is UPDATE


# What a wrong "update" would hide: each is close in meaning to the prior, and each guard of
# `reconsider` is what keeps it apart (a question, a plan, an addition, an event that changes nothing,
# a denial of something else, two relations, a statement with no value).
KEPT_APART = [
    ("User's optician is Vision Express on King Street.", "Should I switch opticians to Specsavers?"),
    ("My son Aaron goes to Millfield Primary.", "We're thinking of moving Aaron to St Bede's next year."),
    ("I have a cat called Miso.", "I also adopted a kitten called Yuzu."),
    ("I take the 8:10 bus to work.", "The 8:10 bus was late today, so I walked."),
    ("I play the cello in a quartet.", "I gave up the violin years ago."),
    ("I live in Dundee.", "I work at the Dundee port office."),
    ("My rent is £780 a month.", "I'm fed up with my rent."),
    # From the update-order sets' attack 55, where the reading first hid the person's values: a "now"
    # said beside a value of the prior, about something else (`_names_it`).
    (
        "Okafor retired, so my dentist is Doctor Lindqvist at the same practice.",
        "Bumped into Okafor at the market, he now plays bass in a jazz trio called Blue Hour.",
    ),
    (
        "Ich fahre inzwischen einen Opel Corsa als Auto, den Golf habe ich verkauft.",
        "Beim VW-Händler um die Ecke gibt es jetzt 20 Prozent Rabatt auf Zubehör.",
    ),
    (
        "Mein Trainer im Verein heißt Jörg, Training ist zweimal die Woche.",
        "Diese Woche habe ich jetzt drei Termine beim Zahnarzt, total nervig.",
    ),
]


@pytest.mark.parametrize(("old", "new"), KEPT_APART)
def test_the_second_reading_never_replaces_behind_its_guards(old, new):
    assert engine_verdict(old, new) is ADD


def test_the_second_reading_never_undoes_a_verdict_of_the_rules():
    # It only reads what the rules left as two facts: a change or a repeat they found stays.
    pairs = [
        ("My shoe size is 42.", "My shoe size is 43."),
        ("I live in Hull.", "I moved to York."),
        ("I'm allergic to peanuts.", "I have a peanut allergy."),
        ("My sister is a nurse.", "My sister is a nurse."),
    ]
    for old, new in pairs:
        ruled = rules_verdict(old, new)
        assert ruled is not ADD
        assert engine_verdict(old, new) is ruled


@pytest.mark.slow
def test_the_shipped_weights_are_what_the_written_pairs_fit(tmp_path):
    # The weights are a product of the pairs and the command, never edited by hand: fitting again from
    # zero on the pairs in the repository gives them back.
    out = tmp_path / "second_reading.json"
    call_command("train_second_reading", out=str(out))
    fitted = json.loads(out.read_text())
    shipped = json.loads(second_reading.WEIGHTS.read_text())
    assert fitted["pairs"] == shipped["pairs"]
    for key in ("mean", "scale", "bias"):
        assert fitted[key] == pytest.approx(shipped[key], abs=1e-6)
    for fitted_row, shipped_row in zip(fitted["weights"], shipped["weights"], strict=True):
        assert fitted_row == pytest.approx(shipped_row, abs=1e-6)

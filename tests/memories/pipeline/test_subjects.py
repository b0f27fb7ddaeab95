"""Who a statement is about, across statements: a person named once with the word for them ("my
friend Marco") and later by name alone ("Marco") is one subject to the update engine.

Pure rules (`memories.pipeline.update`) with the real embedding model for the similarity the
worker would measure.
"""

from __future__ import annotations

import math

import pytest

from memories import embeddings
from memories.pipeline.supersede import frame_similarities
from memories.pipeline.update import Verdict, frame_of, judge, same_subject


@pytest.mark.parametrize(
    ("first", "second", "same"),
    [
        ("user:friend:marco", "user:marco", True),
        ("user:marco", "user:son:marco", True),
        ("caroline:sister:anna", "caroline:anna", True),
        ("user", "user", True),
        # Two people no statement names ("She moved ...", "He moved ...") may be two.
        ("user:someone", "user:someone", False),
        # Two words for two people of one name, two names, another speaker's, the speaker herself.
        ("user:friend:sam", "user:son:sam", False),
        ("user:friend:maya", "user:leo", False),
        ("melanie:friend:marco", "caroline:marco", False),
        ("user", "user:sister", False),
        # A word for a person and a name: nothing says they are one.
        ("user:sister", "user:anna", False),
        ("user:sister", "user:sister:anna", False),
    ],
)
def test_a_person_named_with_or_without_the_word_for_them_is_one_subject(first, second, same):
    assert same_subject(first, second) is same
    assert same_subject(second, first) is same


def _verdict(old: str, new: str) -> Verdict:
    old_vector, new_vector = embeddings.embed([old, new])
    similarity = sum(a * b for a, b in zip(old_vector, new_vector, strict=True)) / (
        math.sqrt(sum(a * a for a in old_vector)) * math.sqrt(sum(b * b for b in new_vector))
    )
    new_frame, old_frame = frame_of(new), frame_of(old)
    frame_similarity = frame_similarities(new_frame, [old_frame]).get(old_frame.masked)
    return judge(
        new_frame,
        old_frame,
        similarity=similarity,
        new_kind="fact",
        old_kind="fact",
        frame_similarity=frame_similarity,
    )


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("My friend Marco drums for The Velvet Foxes.", "Marco drums for Paper Satellites now."),
        ("My sister Hannah lives in Leeds.", "Hannah moved to York."),
        ("My son Leo is 7.", "Leo is 8 now."),
        ("Tom lives in Chicago.", "My brother Tom lives in Austin now."),
        ("Meine Schwester Julia wohnt in Köln.", "Julia wohnt jetzt in Bonn."),
        ("My mum lives in Phoenix.", "Mum moved to Tucson."),
        ("My dad drives a VW Passat.", "Dad drives a Kia EV6 now."),
    ],
)
def test_a_change_of_a_person_named_alone_replaces_what_was_said_with_the_word_for_them(old, new):
    assert _verdict(old, new) is Verdict.UPDATE


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("My friend Sam lives in Leeds.", "My son Sam lives in York now."),
        ("My friend Maya lives in Rome.", "Leo lives in Oslo."),
        ("My sister lives in Leeds.", "Hannah moved to York."),
        # Someone else's move is no move of the speaker's: a relative called by the word for them, a
        # person said as "he" or "she", a name written with an accent the names list lacks.
        ("I live in London.", "Mum moved to Leeds."),
        ("I live in London.", "She moved to Leeds."),
        ("I work at Siemens.", "He's with Adecco now."),
        ("Vivo en Madrid.", "Lucía se ha mudado a Chamberí."),
    ],
)
def test_another_person_changes_nothing(old, new):
    assert _verdict(old, new) is Verdict.ADD


def test_the_name_after_the_word_for_a_person_is_part_of_who_in_every_language():
    assert frame_of("Meine Schwester Julia wohnt in Köln.").subject == "user:sister:julia"
    assert frame_of("My friend Dana's favourite restaurant is Luigi's.").subject == "user:friend:dana"
    # German capitalises its nouns: only a first name after the word for her is her name.
    assert frame_of("Meine Schwester Anwältin wohnt in Köln.").subject == "user:sister"
    assert frame_of("Meine Schwester wohnt in Köln.").subject == "user:sister"

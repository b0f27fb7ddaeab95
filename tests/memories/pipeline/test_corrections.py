"""Indirect corrections (issue 40): cues of each language, a rejected value in each language, a
correction with no subject of its own, and a correction spread over two sentences.

Pure rules (`memories.pipeline.update`), in phrasings that are not the update suite's; the worker's
part (a bare correction reaches the person's latest statement) is in `test_correction_reach.py`.
"""

from __future__ import annotations

import pytest

from memories.pipeline.language import split_speaker
from memories.pipeline.lexicon import persons
from memories.pipeline.supersede import _several_claims
from memories.pipeline.update import Verdict, asks_about_self, claims, frame_of, is_question, judge
from memories.retrieval.recall import asks_about


@pytest.mark.parametrize(
    "text",
    [
        "Hold on, the ferry leaves at 9:40.",
        "Never mind, the tasting is on Sunday.",
        "Warte, nein, das Training ist am Donnerstag.",
        "Ich habe mich vertan: der Kurs beginnt um 18 Uhr.",
        "Espera, no, la clase es el viernes.",
        "Me confundí, el partido empieza a las 20:00.",
        "Non, en fait, le cours est mardi.",
        "Autant pour moi, la réunion est à 11h.",
    ],
)
def test_it_reads_an_indirect_correction_in_every_language(text):
    assert frame_of(text).strong_cue


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("The gate is 14, not 41.", "41"),
        ("Der Flug geht um 7 Uhr, nicht um 9 Uhr.", "9"),
        ("La clase es el viernes, no el jueves.", "juev"),
        ("Le train part à 8h, pas à 9h.", "9h"),
    ],
)
def test_it_reads_the_rejected_value_in_every_language_and_it_is_no_denial(text, value):
    frame = frame_of(text)
    assert value in frame.rejected
    assert not frame.negated


@pytest.mark.parametrize(
    "label", ["Korrektur: es ist 10 Uhr.", "Corrección: es el lunes.", "Wait, no: it's 8.", "Btw: it's 8."]
)
def test_a_cue_before_a_colon_is_no_speaker(label):
    assert split_speaker(label)[0] == ""


def test_a_named_speaker_is_still_one():
    assert split_speaker("Priya: my gate is 14")[0] == "Priya"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The ferry leaves at 9:40.", "Sorry, I meant 10:15."),
        ("Das Training ist am Donnerstag.", "Moment, nein, es ist Freitag."),
        ("La clase es el viernes.", "Olvídalo, es el sábado."),
        ("Le cours est mardi.", "Attends, non, c'est mercredi."),
    ],
)
def test_a_bare_correction_replaces_the_latest_statement_only(old, new):
    new_frame, old_frame = frame_of(new), frame_of(old)
    assert new_frame.bare
    kwargs = {"similarity": 0.35, "new_kind": "fact", "old_kind": "fact"}
    assert judge(new_frame, old_frame, latest=True, **kwargs) is Verdict.UPDATE
    assert judge(new_frame, old_frame, latest=False, **kwargs) is Verdict.ADD


def test_a_bare_correction_of_another_type_replaces_nothing():
    kwargs = {"similarity": 0.35, "new_kind": "fact", "old_kind": "fact", "latest": True}
    assert judge(frame_of("Sorry, I meant Wednesday."), frame_of("My gate is 14."), **kwargs) is Verdict.ADD


def test_a_statement_naming_what_it_is_about_is_not_bare():
    assert not frame_of("Sorry, the ferry leaves at 10:15.").bare
    assert not frame_of("The ferry leaves at 10:15.").bare
    # A change verb says what changed, though the cue strips it from the frame.
    assert not frame_of("Désormais je commence à 9h30.").bare


def test_a_correction_over_two_sentences_is_one_claim():
    assert not claims("That was wrong.")
    assert not claims("Wait, no.")
    assert claims("It starts at 6pm.")
    assert not _several_claims("That was wrong. The tasting starts at 6pm.")
    assert _several_claims("I moved to Porto. The tasting starts at 6pm.")


@pytest.mark.parametrize(
    ("question", "first", "second"),
    [
        ("Where do I live?", True, False),
        ("What did you suggest for dinner?", False, True),
        ("Wo wohne ich?", True, False),
        ("Wo wohnst du?", False, True),
        ("¿Dónde vivo yo?", True, False),
        ("Où est-ce que tu habites?", False, True),
        ("What did Caroline paint?", False, False),
    ],
)
def test_the_persons_of_a_question_come_from_each_languages_lexicon(question, first, second):
    # One home for the speaker's and the addressee's words: recall (asks_about) and the answerer
    # (asks_about_self) both read them there.
    assert persons(question) == (first, second)
    assert asks_about(question) == (first, second)
    assert asks_about_self(question) is first


@pytest.mark.parametrize(
    "asked",
    [
        "Should I move my standup to 9:30 now?",
        "Should I move my standup to 9:30 now?!",
        "(Should I move my standup to 9:30 now?)",
        "Should I move my standup to 9:30 now? 😅",
    ],
)
def test_a_question_replaces_nothing_however_it_ends(asked):
    # One reading of "a question" (`update.is_question`), the engine's and recall's.
    assert is_question(asked)
    kwargs = {"similarity": 0.8, "new_kind": "fact", "old_kind": "fact", "latest": True}
    assert judge(frame_of(asked), frame_of("My standup is at 10:00."), **kwargs) is Verdict.ADD
    assert judge(frame_of("My standup is at 9:30 now."), frame_of("My standup is at 10:00."), **kwargs) is (
        Verdict.UPDATE
    )

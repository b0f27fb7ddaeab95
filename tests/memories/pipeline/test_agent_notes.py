"""An assistant's note about "the user" is read as the person's own words (`in_own_words`), so that
"User moved to Munich." and "I live in Berlin." are one subject, one slot and one frame to the update
engine; and nothing else is rewritten."""

from __future__ import annotations

import pytest

from memories.pipeline.extract import slot_of
from memories.pipeline.language import in_own_words
from memories.pipeline.update import frame_of


@pytest.mark.parametrize(
    ("note", "own"),
    [
        ("User lives in Berlin.", "I live in Berlin."),
        ("The user lives in Berlin.", "I live in Berlin."),
        ("User no longer eats meat.", "I no longer eat meat."),
        ("User is vegetarian.", "I am vegetarian."),
        ("User has two cats and a dog.", "I have two cats and a dog."),
        ("User doesn't drink alcohol.", "I don't drink alcohol."),
        ("User currently studies Spanish.", "I currently study Spanish."),
        ("User went to Rome in 2015.", "I went to Rome in 2015."),
        ("The user's sister Ana is a nurse.", "My sister Ana is a nurse."),
        ("User's moving to Leeds in May.", "I'm moving to Leeds in May."),
        ("User's been vegan for years.", "I've been vegan for years."),
        ("User's wedding is in June.", "My wedding is in June."),
        ("User mentioned they moved to Munich last month.", "I moved to Munich last month."),
        ("User said their sister lives in Oslo.", "My sister lives in Oslo."),
        ("User mentioned that Ana moved to Porto.", "Ana moved to Porto."),
        ("User corrected that the flight is at 9, not 7.", "Correction: the flight is at 9, not 7."),
        ("Ana is the user's sister.", "Ana is my sister."),
        (
            "User is allergic to peanuts; they carry an EpiPen.",
            "I am allergic to peanuts; I carry an EpiPen.",
        ),
        (
            "User works at Google as an SRE. User's manager is Priya.",
            "I work at Google as an SRE. My manager is Priya.",
        ),
    ],
)
def test_a_note_about_the_user_reads_in_the_first_person(note: str, own: str) -> None:
    assert in_own_words(note) == own


@pytest.mark.parametrize(
    "text",
    [
        "I live in Berlin.",
        "User authentication uses JWT.",  # a thing named with "user", no note about the person
        "User sessions expire after an hour.",
        "Usually I run before work.",
        "User wohnt in Berlin.",  # another language: its own rules read it
    ],
)
def test_other_text_is_left_as_it_is(text: str) -> None:
    assert in_own_words(text) is text


def test_the_note_and_the_persons_words_are_one_subject_slot_and_frame() -> None:
    note, own = frame_of("User lives in Berlin."), frame_of("I live in Berlin.")
    assert note.subject == own.subject == "user"
    assert note.masked == own.masked
    assert slot_of("User moved to Munich.") == ("user:lives_in", "munich")
    assert frame_of("The user's sister Ana is a nurse.").subject == "user:sister:ana"


def test_a_turn_of_a_speaker_is_not_rewritten() -> None:
    # "User:" is a role: what follows is already the person's own words.
    assert frame_of("User: My sister lives in Oslo.").subject == frame_of("My sister lives in Oslo.").subject

"""When a statement says it starts to hold later ("Starting in March", "ab Mai"): the lexicon's start
cues, read in four languages (memories.pipeline.extract.scheduled_start); and where a joiner without a
comma opens a statement of its own (memories.pipeline.segment)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memories.pipeline.extract import extract
from memories.pipeline.lexicon import slot_words

REFERENCE = datetime(2026, 12, 6, 12, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "starts"),
    [
        ("Starting in March I'll be working at Acme.", "2027-03-01"),
        ("Starting Monday my manager will be Luis.", "2026-12-07"),
        ("Ab Mai wohne ich in Hamburg.", "2027-05-01"),
        ("Ab nächstem Monat arbeite ich bei Bosch.", "2027-01-01"),
        ("A partir de septiembre trabajaré en Indra.", "2027-09-01"),
        ("A partir del próximo mes vivo en Sevilla.", "2027-01-01"),
        ("À partir d'octobre, j'habiterai à Nantes.", "2027-10-01"),
        ("À partir du mois prochain, je travaille chez Total.", "2027-01-01"),
    ],
)
def test_a_start_to_come_is_when_the_statement_holds_from(text, starts):
    _, (candidate,) = extract(text, reference=REFERENCE)
    assert candidate.valid_from is not None and candidate.valid_from.date().isoformat() == starts


@pytest.mark.parametrize(
    "text",
    [
        "I work at Acme since March.",  # a start that has passed: "since", not a start to come
        "Ab und zu gehe ich schwimmen.",  # "now and then", not "from"
        "Dentist on Friday.",  # a plan is due, it does not start to hold
        "I moved here from Berlin.",
    ],
)
def test_no_start_to_come(text):
    _, (candidate,) = extract(text, reference=REFERENCE)
    assert candidate.valid_from is None or candidate.valid_from <= REFERENCE


@pytest.mark.parametrize(
    ("text", "statements"),
    [
        # A joiner without a comma opens a statement before a possessive, a noun and a copula.
        ("The building was sold and our landlord is now Ms. Ito.", 2),
        ("Das Haus wurde verkauft und unser Vermieter ist jetzt Herr Ito.", 2),
        ("I bought a house and my commute is now 10 minutes.", 2),
        # Not two nouns of one subject, nor one object of two nouns.
        ("My car and my bike are blue.", 1),
        ("I love my mom and my dad.", 1),
    ],
)
def test_a_joiner_before_a_possessive_subject_opens_a_statement(text, statements):
    _, candidates = extract(text, reference=REFERENCE)
    assert len(candidates) == statements, [c.content for c in candidates]


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("Where do I live?", "moved"),
        ("Who is my boss?", "report"),
        ("Do I have kids?", "daughter"),
        ("Wo wohne ich?", "umgezogen"),
    ],
)
def test_a_first_person_slot_question_brings_the_words_its_statements_are_said_with(question, said):
    assert said in slot_words(question)


@pytest.mark.parametrize(
    "question", ["Where does Caroline live?", "What is my favourite colour?", "Where did I buy my bike?"]
)
def test_no_slot_words_for_someone_else_or_no_slot(question):
    assert slot_words(question) == []

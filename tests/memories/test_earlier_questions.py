"""Questions about an earlier state (`recall.asks_then`), by the lexicons' `earlier` words in four
languages, and the questions that name an earlier thing on the way without asking about it. Pure
reading, in phrasings of our own (the blind set is benchmarks/data/question_kinds.json)."""

from __future__ import annotations

import pytest

from memories.retrieval.recall import DEFAULT_KNOBS, _slots_held, asks_then


@pytest.mark.parametrize(
    "question",
    [
        "Where did I park my van before the renovation?",
        "Which gym did I go to before I moved?",
        "What was my phone plan before?",
        "What did I pay for electricity back when we lived in Leeds?",
        "Who was my dentist until last year?",
        "What was my previous address?",
        "What did I score at my first assessment?",
        "How much did I weigh when I started the programme?",
        "What did my brother use to collect?",
        "Wo habe ich früher gearbeitet?",
        "Wie viel kostete die Miete vor dem Umzug?",
        "¿Qué coche tenía antes?",
        "¿Cuál era mi horario anterior?",
        "Où est-ce que je garais mon vélo au début ?",
        "Quel était mon ancien numéro ?",
    ],
)
def test_an_earlier_state_is_read_in_every_language(question):
    assert asks_then(question), question


@pytest.mark.parametrize(
    "question",
    [
        "Where does my former boss work now?",  # a person named by a former role, asked about now
        "What did we say in our previous conversation about tents?",  # the conversation
        "How many days before the trip did I renew my passport?",  # days between two events
        "What did I do before the meeting?",  # a time before an event
        "Who was the first speaker at the conference?",  # the first of a series
        "Where do I keep my passport these days?",
        "Wo arbeite ich jetzt?",
        "¿Dónde vivo ahora?",
        "Où est-ce que je travaille maintenant ?",
    ],
)
def test_an_earlier_thing_named_on_the_way_is_no_earlier_state(question):
    assert not asks_then(question), question


@pytest.mark.parametrize(
    ("question", "held"),
    [
        ("Where do I live?", {"user:lives_in"}),
        ("What company do I work for?", {"user:works_at"}),
        ("Where did I live before the move?", set()),  # an earlier state: not what holds now
        ("Where did I work at first?", set()),
        ("Where does my older sister live?", set()),  # about someone else
    ],
)
def test_the_slot_held_now_answers_only_a_question_about_now_and_the_person(question, held):
    assert _slots_held(question, DEFAULT_KNOBS, then=asks_then(question)) == held

"""An attack on stop 52's readings by a helper who did not build them: slot_of's "I'm (now) a <role>
at <Name>" as `works_at`, and recall's slot holders first (`_slots_held`, `slot_holders_first`) with
its SQL reading of a save's speaker that ignores labels ("Correction:", "Update:").

What holds is a plain test; what the code gets wrong today is marked `xfail(strict=True)` with the
reason, so a fix turns it into a pass that must then lose its mark. The update engine's own attack
is batch 52b of the update suite (tests/memories/update_cases_40.py).

The attack showed the role reading (slot_of's pattern and the update engine's employer rule) hid
true facts: both were taken out again the same day (docs/decisions.md, "A job said as a role at an
employer: built, attacked, taken out"). The tests of what they got wrong now pass and lost their
marks; the tests of what they got right are marked as what is missing.
"""

from __future__ import annotations

import pytest

from memories.models import Memory
from memories.pipeline.extract import slot_of
from tests.helpers import pat_client
from tests.memories.test_newcomer_walk import _first
from tests.memories.test_recall import _save

# --- slot_of: a role at a name ---------------------------------------------------------------------


_ROLE_READING_OUT = (
    "the role reading was taken out after this attack (stop 52): a change of job said as a role at an "
    "employer is not read"
)


@pytest.mark.xfail(strict=True, reason=_ROLE_READING_OUT)
def test_it_reads_a_change_of_job_said_as_a_role_at_a_name():
    assert slot_of("I'm now a data engineer at Solvia.") == ("user:works_at", "solvia")
    assert slot_of("Caroline: I'm a nurse at Kaiser.") == ("caroline:works_at", "kaiser")
    assert slot_of("Correction: I'm now a nurse at Kaiser.") == ("user:works_at", "kaiser")


@pytest.mark.parametrize(
    "text",
    [
        "I'm a teacher at 9.",
        "I'm a regular at Blue Bottle.",
        "I'm a nurse at the hospital.",
        "I'm a founder at heart.",
        "I'm no longer a nurse at Kaiser.",
        "I'm a patient at Kaiser.",
        "I'm a huge fan of a chef at Noma.",
    ],
)
def test_it_reads_no_employer_where_none_is_named_or_held(text):
    assert slot_of(text) == ("", "")


@pytest.mark.parametrize(
    "text",
    [
        "I'm also a tutor at Kumon.",  # a second job
        "I also work at Kumon on Saturdays.",  # "also" says an addition: not a slot of one value
        "I also live in Lisbon part of the year.",
        "I'm a former nurse at Kaiser.",
        "I'm a volunteer coach at Riverside FC.",
        "I'm a consultant for Acme this quarter.",  # a client
        "I'm a cashier at Christmas.",  # a feast
        "I'm a tutor for Emma on Thursdays.",  # a person taught
    ],
)
def test_it_fills_no_employer_slot_for_a_role_that_is_not_the_job_held(text):
    assert slot_of(text)[0] not in ("user:works_at", "user:lives_in")


@pytest.mark.xfail(strict=True, reason="_VALUE stops at the first '.', so every 'St. ...' employer is 'st'")
def test_it_tells_two_employers_named_after_saints_apart():
    assert slot_of("I work at St. Mary's Hospital.") != slot_of("I work at St. Luke's.")


@pytest.mark.parametrize(
    ("text", "employer"),
    [
        pytest.param(
            "I'm a senior staff software engineer at Solvia.",
            "solvia",
            marks=pytest.mark.xfail(strict=True, reason="at most two words before the role"),
        ),
        pytest.param(
            "I'm now an engineer at eBay.",
            "ebay",
            marks=pytest.mark.xfail(strict=True, reason="the employer must start with a capital"),
        ),
        pytest.param(
            "I'm an intern at Google for the summer.",
            "google",
            marks=pytest.mark.xfail(strict=True, reason=_ROLE_READING_OUT),
        ),
    ],
)
def test_it_reads_the_employer_of_a_longer_title_or_an_odd_name(text, employer):
    assert slot_of(text) == ("user:works_at", employer)


# --- recall: the person's slot holders first -----------------------------------------------------------


def _wrong(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, reason=reason)


# (what the person saved, in order; the question; a word the first answer must hold). The pairs
# differ in one thing: a label the SQL knows or not, a question about oneself or the sister.
QUESTIONS = [
    pytest.param(
        ("Update: I moved to Leipzig last spring.", "I lived in Dresden for six years."),
        "Where do I live?",
        "Leipzig",
        id="english-label",
    ),
    pytest.param(
        ("Quick update: I moved to Leipzig last spring.", "I lived in Dresden for six years."),
        "Where do I live?",
        "Leipzig",
        # Recall's SQL read "Quick update" as the save's speaker until stop 56; it now reads a
        # speaker as split_speaker does (a role or capitalised words), so the move is the person's.
        id="two-word-label",
    ),
    # The move is said last, so it comes first among the person's answers if it is the person's.
    pytest.param(
        ("Ich habe sechs Jahre in Dresden gewohnt.", "Update: Ich wohne jetzt in Leipzig."),
        "Wo wohne ich?",
        "Leipzig",
        id="german-english-label",
    ),
    pytest.param(
        ("Ich habe sechs Jahre in Dresden gewohnt.", "Korrektur: Ich wohne jetzt in Leipzig."),
        "Wo wohne ich?",
        "Leipzig",
        id="german-label",
        marks=_wrong(
            "recall's SQL drops English labels only (LABEL_WORDS); split_speaker also drops a cue "
            "('Korrektur'), so SQL reads a speaker where the pipeline reads the person"
        ),
    ),
    pytest.param(
        ("I work at Freightline as a logistics analyst.", "I moved to Leipzig last spring."),
        "Where am I living now?",
        "Leipzig",
        id="living",
        marks=_wrong(
            "slots_asked_in reads 'living' as the job slot ('for a living'): the question asks where one "
            "works; wrong with slot_holders_first on and off"
        ),
    ),
    pytest.param(
        ("I moved to Leipzig last spring.", "My sister Jana lives in Bonn."),
        "Where do I live?",
        "Leipzig",
        id="own-home",
    ),
    pytest.param(
        ("I moved to Leipzig last spring.", "My sister Jana lives in Bonn."),
        "Where does my sister live?",
        "Bonn",
        # Mended after the attack: a question that names another person asks no slot of the person's.
        id="sisters-home",
    ),
    pytest.param(
        ("I moved to Leipzig last spring.", "Before that I lived in Dresden for six years."),
        "Where did I live before I moved to Leipzig?",
        "Dresden",
        id="earlier-home",
        marks=_wrong(
            "a question about an earlier home that names the later one: the move ranks first, with "
            "slot_holders_first on and off"
        ),
    ),
    pytest.param(
        ("I work at Google as a software engineer.", "I'm also a volunteer coach at Riverside FC."),
        "Where do I work?",
        "Google",
        id="volunteer-role",
    ),
]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("celery_worker")
@pytest.mark.parametrize(("notes", "question", "answer"), QUESTIONS)
def test_it_answers_a_short_everyday_question_with_what_holds(alice, notes, question, answer):
    client = pat_client(alice)
    for note in notes:
        _save(client, note)
    assert answer in _first(client, question)


# --- the employer rule: a job of someone else (found after batch 52b's blind run) -----------------
# The employer rule (`_new_employer`, taken out) read a pronoun or "my older sister" as the speaker
# and asked no similarity, so these closed "I work at Google"; without it they do not.
OTHERS_JOBS = [
    pytest.param("He works at Microsoft.", id="he"),
    pytest.param("She works at Kaiser now.", id="she"),
    pytest.param("My older sister works at Kaiser.", id="older-sister"),
    pytest.param("My sister works at Kaiser.", id="sister"),
]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("celery_worker")
@pytest.mark.parametrize("later", OTHERS_JOBS)
def test_it_keeps_my_job_when_someone_else_works_elsewhere(alice, later):
    client = pat_client(alice)
    (mine,) = _save(client, "I work at Google.")
    _save(client, later)
    assert Memory.objects.get(id=mine).superseded_at is None

"""A compound statement split into its facts keeps the person's words (issue 40, the outside test).

A split may carry the sentence's subject to its second fact ("I live in X and work at Y" -> "I work
at Y"), but only in the sentence's own language: a statement must never hold a word the person did
not say from another language. And a verb-initial clause after "y" / "und" / "et" (languages that
drop the subject) is a fact of its own, so that ending one fact does not end the other.
"""

from __future__ import annotations

import re

import pytest

from memories.pipeline.lexicon import detect, languages, lexicon
from memories.pipeline.segment import segment

_WORD_RE = re.compile(r"[\w]+(?:['\u2019])?", re.UNICODE)

# Compound statements in every supported language, with and without a spoken subject.
COMPOUNDS = [
    "I live in Leeds and work at a bakery.",
    "We moved to Oslo and joined a choir there.",
    "Ich wohne in Leipzig und arbeite bei einer Versicherung.",
    "Ich lebe in Graz und arbeite als Lehrerin.",
    "Wir wohnen in Bonn und arbeiten bei der Post.",
    "Ich lese gern Krimis und spiele Schach im Verein.",
    "Vivo en Sevilla y trabajo en un hotel.",
    "Nado en la piscina y estudio con una profesora de piano.",
    "Corro por las mañanas y toco el violín.",
    "J'habite à Nantes et travaille dans une librairie.",
    "Je vis à Lille et travaille pour une banque.",
    "Nous habitons à Caen et travaillons à la mairie.",
]


def _foreign_pronouns(code: str) -> set[str]:
    """The other languages' words for the speaker that this language does not share."""
    own = lexicon(code).self_words
    return {w for other in languages() if other != code for w in lexicon(other).self_words} - own


def _words(text: str) -> set[str]:
    return {w.lower().rstrip("'\u2019") for w in _WORD_RE.findall(text)}


@pytest.mark.parametrize("text", COMPOUNDS)
def test_a_split_statement_holds_no_pronoun_of_another_language(text):
    code = detect(text)
    said = _words(text)
    foreign = _foreign_pronouns(code)
    for piece in segment(text):
        added = _words(piece) - said
        assert not added & foreign, (text, piece, added & foreign)


@pytest.mark.parametrize("text", COMPOUNDS)
def test_a_split_statement_adds_at_most_the_sentences_own_subject(text):
    own = lexicon(detect(text)).self_words
    said = _words(text)
    pieces = segment(text)
    assert len(pieces) == 2, pieces
    for piece in pieces:
        # Every word is the person's, or their own subject carried over ("j'" said, "je" carried).
        assert _words(piece) - said <= own, (text, piece)


@pytest.mark.parametrize(
    ("text", "second"),
    [
        ("Juego al tenis y pinto los domingos.", "pinto los domingos."),
        ("Estudio alemán y cocino para mis amigos.", "cocino para mis amigos."),
        ("Je cours le matin et joue du piano le soir.", "Je joue du piano le soir."),
        ("Ich trinke Tee und backe am Wochenende Brot.", "Ich backe am Wochenende Brot."),
    ],
)
def test_a_verb_initial_clause_after_and_is_a_statement_of_its_own(text, second):
    assert segment(text)[-1] == second


@pytest.mark.parametrize(
    "text",
    [
        "Me gustan el té y el café.",
        "Compro pan y queso fresco.",
        "Ich mag Kaffee und Kuchen mit Sahne.",
        "J'aime le thé et le café.",
        "I like tea and biscuits with jam.",
        "Hablo inglés y francés.",
    ],
)
def test_two_objects_of_one_verb_stay_one_statement(text):
    assert segment(text) == [text]

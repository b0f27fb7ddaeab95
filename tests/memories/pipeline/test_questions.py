"""What a question asks about, by each language's lexicon (issue 40, section 0): the relation it asks
for, named ("Where do I live?") or not ("Which city am I in?", "What company am I with?")."""

from __future__ import annotations

import pytest

from memories.pipeline.lexicon import relations_asked
from memories.pipeline.update import frame_of


@pytest.mark.parametrize(
    ("question", "relation"),
    [
        ("Where do I live?", "home"),
        ("Which city am I in?", "home"),
        ("What company am I with?", "work"),
        ("Where do I work?", "work"),
        ("Wo wohne ich?", "home"),
        ("In welcher Stadt lebe ich?", "home"),
        ("¿En qué empresa trabajo?", "work"),
        ("Dans quelle ville est-ce que j'habite?", "home"),
    ],
)
def test_it_reads_the_relation_a_question_asks_about(question, relation):
    assert relation in relations_asked(question)


@pytest.mark.parametrize(
    ("statement", "relation"),
    [
        ("I moved to Porto last month", "home"),
        ("I switched over to Wayne Enterprises last spring, I joined in April", "work"),
        ("Ich bin nach Köln gezogen.", "home"),
    ],
)
def test_a_statement_names_the_relation_a_question_asks_for_whatever_its_words(statement, relation):
    assert relation in frame_of(statement).relations


def test_a_question_about_something_else_asks_for_no_relation():
    assert relations_asked("What did Caroline paint?") == frozenset()

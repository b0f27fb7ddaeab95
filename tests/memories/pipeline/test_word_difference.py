"""update.word_difference, written for speed, keeps its rule: the words of one side with no word of their
family (_same_word: the same word, or two words of five letters or more, one the other's start) on
the other side."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memories.pipeline.update import word_difference

# Few letters, so that equal words, prefixes and near misses around five letters are common.
WORDS = st.frozensets(st.text(alphabet="abcde", min_size=1, max_size=8), max_size=8)


def _family(a: str, b: str) -> bool:
    return a == b or (min(len(a), len(b)) >= 5 and (a.startswith(b) or b.startswith(a)))


@settings(max_examples=2000, deadline=None)
@given(WORDS, WORDS)
def test_it_keeps_the_words_with_no_family_on_the_other_side(left, right):
    assert word_difference(left, right) == {word for word in left if not any(_family(word, o) for o in right)}


def test_it_pairs_the_stems_of_one_family():
    # "allerg" (allergic) and "allergi" (allergy) are one family; "cat" and "cats", "car" and
    # "carpet" are not (a word under five letters has no family but itself).
    assert word_difference(frozenset({"allerg", "peanut", "cat"}), frozenset({"allergi", "cats"})) == {
        "peanut",
        "cat",
    }
    assert word_difference(frozenset({"car"}), frozenset({"carpet"})) == {"car"}

"""A job said as an occupation at an employer ("I'm now a data engineer at Solvia"), the rule of batch
52a: pure rules (`memories.pipeline.update`), in phrasings that are not the update suite's.

The two statements of a change of employer are far apart in meaning when the roles differ, so the
rule asks the shape instead of the similarity: both put the same subject at a named employer, the
employers differ, and the earlier one says nothing else but its values.
"""

from __future__ import annotations

import pytest

from memories.pipeline.update import Verdict, frame_of, judge

# Below RELATED (0.45): what the meaning of such a pair often is.
FAR = 0.32


def _judged(old: str, new: str) -> Verdict:
    return judge(frame_of(new), frame_of(old), similarity=FAR, new_kind="fact", old_kind="fact")


@pytest.mark.parametrize(
    ("text", "employer"),
    [
        ("I'm a pharmacist at Walgreens.", {"walgreen"}),
        ("I work for Contoso.", {"contoso"}),
        ("My cousin is an electrician at Vattenfall now.", {"vattenfal"}),
        ("I'm a nurse at St. Mary's Hospital.", {"st", "mari", "hospit"}),
        ("Ich bin Buchhalterin bei Lidl.", {"lidl"}),
        ("Soy enfermera en Sanitas.", {"sanit"}),
        ("Je suis serveuse chez Paul.", {"paul"}),
    ],
)
def test_an_occupation_or_a_verb_of_work_at_a_named_employer_names_it(text, employer):
    frame = frame_of(text)
    assert frame.employer == employer
    assert "rel:work" in frame.words


@pytest.mark.parametrize(
    "text",
    [
        "I'm a regular at Tartine.",  # no occupation
        "I'm a member at Equinox.",
        "I work at home on Mondays.",  # no name after the preposition
        "I work with Rust.",  # not a preposition of an employer
        "I was a pharmacist at Walgreens.",  # the past
        "Ich war Buchhalterin bei Lidl.",
        "Antes era enfermera en Sanitas.",
        "J'étais serveuse chez Paul.",
    ],
)
def test_no_employer_without_an_occupation_a_name_or_the_present(text):
    assert not frame_of(text).employer


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I work at Contoso.", "I'm now a pharmacist at Walgreens."),
        ("I'm a cashier at Aldi.", "These days I'm a barista at Costa."),
        ("My cousin works for Vattenfall.", "My cousin is an electrician at Ørsted now."),
        ("Ich arbeite bei Lidl.", "Ich bin jetzt Buchhalterin bei Rewe."),
        ("Trabajo en Sanitas.", "Ahora soy enfermera en Quirón."),
        ("Je travaille chez Paul.", "Je suis maintenant serveuse chez Ladurée."),
    ],
)
def test_another_named_employer_replaces_the_earlier_one_whatever_the_meaning(old, new):
    assert _judged(old, new) is Verdict.UPDATE


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I work at Contoso.", "I'm a regular at Tartine."),
        ("I work at Contoso.", "My brother is a pharmacist at Walgreens."),  # another subject
        ("I work at Contoso.", "I also work at Walgreens on Sundays."),  # an addition
        ("I work at Contoso.", "I was a pharmacist at Walgreens."),  # the past
        ("I work with Rust.", "I'm a developer at Stripe."),  # the earlier one names no employer
        ("I work at Contoso and coach at the Rovers.", "I'm a pharmacist at Walgreens."),  # says more
        ("I'm a cashier at Aldi.", "I'm a cashier at Aldi."),  # the same employer
    ],
)
def test_nothing_else_is_read_as_a_change_of_employer(old, new):
    assert _judged(old, new) is not Verdict.UPDATE

"""A statement that confirms a value, or names none, never replaces it (issue 40, the outside test).

Pure rules (`memories.pipeline.update`): the similarity given is what the embedding model gives such
pairs (0.5 to 0.7, measured on the update suite's pairs) or higher, so the guard, not a low
similarity, is what keeps the prior current.
"""

from __future__ import annotations

import pytest

from memories.pipeline.update import Verdict, frame_of, judge


@pytest.mark.parametrize(
    "text",
    [
        "My phone plan costs the same as before.",
        "Our mortgage payment hasn't changed.",
        "The price stayed the same.",
        "Mein Gehalt bleibt unverändert.",
        "Die Kita-Gebühr hat sich nicht geändert.",
        "Mi sueldo se mantiene igual.",
        "La cuota del gimnasio no ha cambiado.",
        "Mon abonnement reste inchangé.",
        "Le prix n'a pas changé.",
    ],
)
def test_it_reads_a_statement_of_continuity_in_every_language(text):
    assert frame_of(text).continuity


@pytest.mark.parametrize(
    "text",
    [
        "My rent went up to $1,950.",
        "Mein Gehalt ist auf 4200 Euro gestiegen.",
        "Mi sueldo subió a 2100 euros.",
        "Mon loyer a augmenté à 900 euros.",
        "I'm the same age as my cousin.",
    ],
)
def test_a_change_or_a_comparison_is_no_continuity(text):
    assert not frame_of(text).continuity


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("My rent is $1,800 a month.", "The rent is unchanged."),
        ("My salary is 62k a year.", "My salary has not changed."),
        ("Mein Gehalt beträgt 3900 Euro.", "Mein Gehalt bleibt gleich."),
        ("Mi sueldo es de 1900 euros.", "Mi sueldo sigue igual."),
        ("Mon salaire est de 2800 euros.", "Mon salaire reste le même."),
    ],
)
@pytest.mark.parametrize("similarity", [0.55, 0.7, 0.9])
def test_continuity_confirms_and_never_replaces(old, new, similarity):
    verdict = judge(frame_of(new), frame_of(old), similarity=similarity, new_kind="fact", old_kind="fact")
    assert verdict is Verdict.SAME


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("My rent is $1,800 a month.", "My rent is fine."),
        ("My car is a Volvo.", "My car is old."),
        ("Meine Miete beträgt 950 Euro.", "Meine Miete ist okay."),
    ],
)
@pytest.mark.parametrize("similarity", [0.65, 0.85])
def test_a_statement_without_a_value_never_replaces_one_with_a_value(old, new, similarity):
    verdict = judge(frame_of(new), frame_of(old), similarity=similarity, new_kind="fact", old_kind="fact")
    assert verdict is not Verdict.UPDATE


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I live in Lisbon.", "I moved."),
        ("I work at Google.", "I don't work at Google anymore."),
        ("My rent is $1,800 a month.", "My rent went up to $1,950."),
    ],
)
def test_a_change_without_the_old_value_still_ends_it(old, new):
    verdict = judge(frame_of(new), frame_of(old), similarity=0.7, new_kind="fact", old_kind="fact")
    assert verdict is not Verdict.ADD

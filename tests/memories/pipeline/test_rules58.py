"""Rules of the update engine found by batch 58a of the update suite (written blind, stop 58), each a
true fact the engine hid: another qualified attribute of one relation ("my work phone" / "my personal
phone"), a move replacing a statement that says what the person does ("I'm a physiotherapist in
Cork"), an episode sharing only a time with a routine ("The 7:52 was cancelled"), a relative's thing
said with "of" ("El coche de mi marido"). Beside each, the change the rule must still let through.

Pure rules with the real embedding model for the similarity the worker would measure (as
`test_subjects.py`), no database.
"""

from __future__ import annotations

import pytest

from memories.pipeline.update import Verdict, frame_of
from tests.memories.pipeline.test_subjects import _verdict

ADD, UPDATE = Verdict.ADD, Verdict.UPDATE


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        # Two qualified attributes of one relation: both hold.
        ("My personal phone is a Pixel 7.", "My work phone is an iPhone 14.", ADD),
        ("My work email is ana@firm.com.", "My personal email is ana@mail.com.", ADD),
        ("My personal phone is a Pixel 7.", "My personal phone is a Pixel 9 now.", UPDATE),
        # A move changes where one lives, not what one does or trains for.
        ("I'm a physiotherapist in Cork.", "I've moved from Cork to Galway.", ADD),
        ("I'm training for the Dublin marathon.", "I've moved from Cork to Galway.", ADD),
        ("I live in Cork.", "I've moved from Cork to Galway.", UPDATE),
        ("I'm based in Cork.", "I've moved from Cork to Galway.", UPDATE),
        # A shared time alone is no shared subject.
        ("I take the 7:52 train to work.", "The 7:52 was cancelled so I got the bus.", ADD),
        ("Our team meeting is at 9:30.", "Our team meeting moved to 10:00.", UPDATE),
        # A relative's thing, said with "of".
        ("Mi coche es un Seat Ibiza.", "El coche de mi marido es un Toyota Corolla.", ADD),
        ("Ma voiture est une Clio.", "La voiture de mon mari est une Peugeot 208.", ADD),
        ("Mi coche es un Seat Ibiza.", "Ahora mi coche es un Toyota Corolla.", UPDATE),
    ],
)
def test_the_verdict(old: str, new: str, expected: Verdict) -> None:
    assert _verdict(old, new) is expected


def test_a_relatives_thing_said_with_of_is_the_relatives() -> None:
    assert frame_of("El coche de mi marido es un Toyota Corolla.").subject == "user:husband"
    assert frame_of("La voiture de mon mari est une Peugeot.").subject == "user:husband"
    # "bei meiner Mutter" (at my mother's) is where the speaker lives: no "of" before the possessive.
    assert frame_of("Ich wohne bei meiner Mutter in Köln.").subject == "user"

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

from memories.pipeline.language import has_past_grammar
from memories.pipeline.update import Verdict, frame_of
from memories.pipeline.values import values_of
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
        # Changes the engine missed, each read by a general rule.
        ("My rent is £950 a month.", "Rent's £1,020 since the renewal.", UPDATE),  # "Rent's"
        ("I earn €3,400 net a month.", "After the raise my net pay is €3,750 a month.", UPDATE),
        ("Mi hermano Javier vive en Sevilla.", "Mi hermano Javier se mudó a Málaga el mes pasado.", UPDATE),
        ("I take 50 mg of sertraline every morning.", "My doctor raised my sertraline to 100 mg.", UPDATE),
        (
            "Mum's birthday is on the 14th of May.",
            "Dad reminded me Mum's birthday is the 4th of May, not the 14th.",
            UPDATE,
        ),
        ("My parking spot is B12.", "They reassigned me, my parking spot is now C4.", UPDATE),
        ("My number is 555-0101.", "You can reach me at 555-0199 now.", UPDATE),
        # ... and what they must not reach.
        ("My mum lives in Leeds.", "My brother moved my mum into a care home in York.", ADD),
        ("My parking spot is B12.", "My brother's parking spot is now C4.", ADD),
        ("I earn €3,400 net a month.", "My partner's net pay is €3,750 a month.", ADD),
        # A role at a named place, said as what holds now, is where the person works; a role that is
        # no job there, or one said without "now", is not.
        ("I work at Freightline as a logistics analyst.", "I'm now a data engineer at Solvia.", UPDATE),
        ("I work at Freightline.", "I'm now a volunteer coach at Riverside FC.", ADD),
        ("I work at Freightline.", "I'm now a regular at The Crown on Fridays.", ADD),
        ("I work at Freightline.", "My sister is now a nurse at Kaiser.", ADD),
        # Repeats read as repeats.
        ("I have two cats.", "I've got two cats.", Verdict.SAME),
        ("I take the 8:15 train.", "I take the 8:15 train every weekday.", Verdict.SAME),
    ],
)
def test_the_verdict(old: str, new: str, expected: Verdict) -> None:
    assert _verdict(old, new) is expected


def test_a_relatives_thing_said_with_of_is_the_relatives() -> None:
    assert frame_of("El coche de mi marido es un Toyota Corolla.").subject == "user:husband"
    assert frame_of("La voiture de mon mari est une Peugeot.").subject == "user:husband"
    # "bei meiner Mutter" (at my mother's) is where the speaker lives: no "of" before the possessive.
    assert frame_of("Ich wohne bei meiner Mutter in Köln.").subject == "user"


def test_a_time_said_with_its_part_of_day() -> None:
    assert [v.norm for v in values_of("I go to sleep at about 11 at night.")] == ["23:00"]
    assert [v.norm for v in values_of("I get up at 6.30 in the morning.")] == ["06:30"]
    assert [v.norm for v in values_of("Pickup is 4 o'clock in the afternoon.")] == ["16:00"]


def test_have_got_is_a_state_not_an_event() -> None:
    assert not has_past_grammar("I've got two cats.")
    assert has_past_grammar("I got a new bike yesterday.")

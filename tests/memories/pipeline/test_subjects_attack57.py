"""Attack on three rules of the update engine's subject (`memories.pipeline.update`): a person named
with the word for them and by name alone is one subject (`same_subject`), a word for a relative said
as a name is that relative ("Mum moved ..."), and "He ..."/"She ..." is someone unnamed (`SOMEONE`).

Each row is (old, new, the right verdict). Must-not-replace rows are pairs where the rules may make a
true fact hidden (`update` where `add` is right); should-replace rows are changes the rules should
now let through. The rows the rules get wrong are marked `xfail(strict=True)`: they are the findings,
not expected verdicts to change. Eighteen rows were findings when the file was written and pass since
the rules were mended the same day (two unnamed people are two; a surname or a name after a title
makes a full name; "Mum and I" is the speaker; names are folded in English too; "Grandad", "Gran";
a parent's familiar name in German, Spanish, French: "Mama", "Papá", "Maman"). Two more pass since
stop 58 (a word's "'s" is dropped before it is read: "Marco's band"; "My grandmother moved").

Pure rules with the real embedding model for the similarity the worker would measure (as
`test_subjects.py`), no database.
"""

from __future__ import annotations

import pytest

from memories.pipeline.update import Verdict
from tests.memories.pipeline.test_subjects import _verdict

ADD, UPDATE = Verdict.ADD, Verdict.UPDATE


def _fails(old: str, new: str, expected: Verdict, reason: str):
    return pytest.param(old, new, expected, marks=pytest.mark.xfail(strict=True, reason=reason))


MUST_NOT_REPLACE = [
    # --- English ---
    # Trap: "She" and "He" are two unnamed people, but both are the one key user:someone.
    (
        "She moved to Leeds.",
        "He moved to York.",
        ADD,
    ),
    # Trap: a woman's age replaced by a man's, both "someone".
    (
        "He is 34.",
        "She is 36 now.",
        ADD,
    ),
    # Trap: another unnamed person after "my sister" (a different key): stays apart.
    ("My sister lives in Leeds.", "He moved to York.", ADD),
    # Trap: a famous namesake; only the first name is read, the surname dropped.
    (
        "My boss Tom lives in Chicago.",
        "Tom Hanks lives in Los Angeles.",
        ADD,
    ),
    # Trap: a historical namesake with a surname.
    (
        "My friend Marco lives in Rome.",
        "Marco Polo lived in Venice.",
        ADD,
    ),
    # Trap: two words for one name stay two people (the rule's own exception).
    ("My friend Marco drums for The Velvet Foxes.", "My cousin Marco drums for Paper Satellites now.", ADD),
    # Trap: a title, not the speaker's mother ("Mother Teresa").
    (
        "My mother was born in 1950.",
        "Mother Teresa was born in 1910.",
        ADD,
    ),
    # Trap: a painter's name ("Grandma Moses"), not the speaker's grandmother.
    (
        "My grandmother lives in Ohio.",
        "Grandma Moses lived in Vermont.",
        ADD,
    ),
    # Trap: "Father Christmas" is no father of the speaker's.
    ("My dad lives in Leeds.", "Father Christmas lives at the North Pole.", ADD),
    # Trap: a kin word inside a company name ("Papa John's").
    ("My dad works at Tesco.", "Papa John's is hiring in York now.", ADD),
    # Trap: a kin word inside a business name ("Mama Mia").
    ("My mum lives in Leeds.", "Mama Mia lives in York now.", ADD),
    # Trap: a name that is also a place; the person Florence moved, the speaker did not.
    _fails(
        "I live in Florence.",
        "Florence moved to Rome.",
        ADD,
        "'Florence' is not a known first name, so her move is read as the speaker's",
    ),
    # Trap: a person named, then the speaker's own "my" in an apposition: about Tom, not the speaker.
    ("I work at Tesco.", "Tom, my boss, works at Aldi now.", ADD),
    # Trap: "he said" reports; the speaker's job is not changed by it.
    ("I work at Siemens.", "He said I work at Adecco now.", ADD),
    # Trap: two relatives in a compound are not the speaker.
    ("I live in London.", "Mum and Dad moved to Leeds.", ADD),
    # --- German ---
    # Trap: "Mama" said as a name in German is the mother, not the speaker.
    (
        "Ich wohne in Berlin.",
        "Mama wohnt jetzt in Hamburg.",
        ADD,
    ),
    # Trap: German "Er" at the start is someone else.
    _fails(
        "Ich arbeite bei Siemens.",
        "Er arbeitet jetzt bei Adecco.",
        ADD,
        "the he/she rule is English only: German 'Er' is read as the speaker",
    ),
    # Trap: German "Sie" (she) at the start is someone else.
    _fails(
        "Ich wohne in Köln.",
        "Sie wohnt jetzt in Bonn.",
        ADD,
        "the he/she rule is English only: German 'Sie wohnt' is read as the speaker",
    ),
    # Trap: a namesake with a surname in German; low similarity keeps it apart.
    ("Meine Schwester Julia wohnt in Köln.", "Julia Roberts wohnt jetzt in Malibu.", ADD),
    # --- Spanish ---
    # Trap: Spanish "Papá" said as a name.
    (
        "Vivo en Madrid.",
        "Papá vive ahora en Valencia.",
        ADD,
    ),
    # Trap: Spanish "Él" at the start is someone else.
    _fails(
        "Vivo en Madrid.",
        "Él vive ahora en Valencia.",
        ADD,
        "the he/she rule is English only: Spanish 'Él' is read as the speaker",
    ),
    # Trap: "Ella" (she) at the start; passes only because "Ella" is in the first-names list.
    ("Vivo en Madrid.", "Ella vive ahora en Toledo.", ADD),
    # Trap: a first name that is also a brand; missing from the names list, so read as the speaker.
    _fails(
        "Trabajo en Seat.",
        "Mercedes trabaja ahora en Audi.",
        ADD,
        "'Mercedes' is not in the first-names list, so her job is read as the speaker's",
    ),
    # Trap: one name, two words for two people in Spanish stay two.
    ("Mi hermana Lucía vive en Sevilla.", "Mi prima Lucía vive ahora en Granada.", ADD),
    # --- French ---
    # Trap: French "Maman" said as a name.
    (
        "J'habite à Paris.",
        "Maman habite maintenant à Lyon.",
        ADD,
    ),
    # Trap: French "Il" at the start is someone else.
    _fails(
        "Je travaille chez Renault.",
        "Il travaille maintenant chez Peugeot.",
        ADD,
        "the he/she rule is English only: French 'Il' is read as the speaker",
    ),
    # Trap: French "Elle" at the start is someone else.
    _fails(
        "J'habite à Paris.",
        "Elle habite maintenant à Lyon.",
        ADD,
        "the he/she rule is English only: French 'Elle' is read as the speaker",
    ),
    # Trap: a brother named, then a sister unnamed: two people.
    ("Mon frère Louis habite à Paris.", "Ma sœur habite maintenant à Lyon.", ADD),
    # Trap: a first name that is also a noun ("pierre"): read as a person, rightly.
    ("Je vis à Lyon.", "Pierre vit maintenant à Nantes.", ADD),
]


SHOULD_REPLACE = [
    # --- English ---
    # Trap: an accented name with the word for him, then alone.
    ("My friend José lives in Madrid.", "José lives in Lisbon now.", UPDATE),
    ("My friend Chloé lives in Leeds.", "Chloé moved to York.", UPDATE),
    # Trap: the same name written once with its accent, once without, in English.
    (
        "My sister Lucía lives in Seville.",
        "Lucia lives in Granada now.",
        UPDATE,
    ),
    (
        "My friend Zoë lives in Leeds.",
        "Zoe moved to York.",
        UPDATE,
    ),
    # Trap: "Mum" after "my mother".
    ("My mother lives in Phoenix.", "Mum moved to Tucson.", UPDATE),
    # Trap: "Mom" after "my mom".
    ("My mom works at Target.", "Mom works at Costco now.", UPDATE),
    # Trap: "my mom" after "Mom": the reverse order.
    _fails(
        "Mom works at Target.",
        "My mom works at Costco now.",
        UPDATE,
        "'my mom works' reads 'mom' as a qualifier of the relation (like 'my office number'), "
        "so the frames differ; the reverse order passes",
    ),
    # Trap: "my grandmother" after "Grandma".
    ("Grandma lives in Ohio.", "My grandmother moved to Florida.", UPDATE),
    # Trap: a possessive of the name alone ("Marco's band"). A finding when written; passes since
    # stop 58 (a word's "'s" is dropped before it is read, so "marco" leaves the frame words).
    ("My friend Marco's band is The Velvet Foxes.", "Marco's band is Paper Satellites now.", UPDATE),
    # Trap: a nickname after the full name.
    _fails(
        "My friend Robert lives in Leeds.",
        "Rob moved to York.",
        UPDATE,
        "no nicknames: user:rob is not user:friend:robert",
    ),
    # Trap: the speaker in a compound subject ("Mum and I") moved.
    (
        "I live in London.",
        "Mum and I live in Leeds now.",
        UPDATE,
    ),
    (
        "I live in London.",
        "Mum and I moved to Leeds.",
        UPDATE,
    ),
    # Trap: "She" for a boat, a thing of the speaker's.
    _fails(
        "My boat is moored in Brighton.",
        "She's moored in Falmouth now.",
        UPDATE,
        "'She' for a boat is user:someone, never the speaker's boat",
    ),
    # Trap: "He's" opening a lead clause before the speaker's own "I".
    _fails(
        "I work at Siemens.",
        "He's right, I'm at Adecco now.",
        UPDATE,
        "'He's right, I'm ...' is read as user:someone; only ', I' right after the first word "
        "hands it back to the speaker",
    ),
    # Trap: a kin word the list lacks ("Grandad", one d).
    (
        "My grandfather lives in Leeds.",
        "Grandad moved to York.",
        UPDATE,
    ),
    # Trap: a name said with the word for her, then alone, that the names list lacks.
    _fails(
        "My daughter April lives in Leeds.",
        "April moved to York.",
        UPDATE,
        "'April' alone is a common word (the month), not a known person, so it is read as the speaker",
    ),
    _fails(
        "My friend Dana's favourite restaurant is Luigi's.",
        "Dana's favourite restaurant is Nando's now.",
        UPDATE,
        "'Dana' alone is not a known person (any name after 'my friend' is), so it is the speaker",
    ),
    # Trap: a name that is also a place, said by the speaker about where she lives.
    ("I live in Milan.", "Florence is where I live now.", UPDATE),
    # Trap: the rule's own example, in the progressive.
    ("My friend Marco drums for The Velvet Foxes.", "Marco is drumming for Paper Satellites now.", UPDATE),
    # --- German ---
    ("Mein Freund Jonas arbeitet bei Siemens.", "Jonas arbeitet jetzt bei Bosch.", UPDATE),
    # Trap: "Mama" after "meine Mutter".
    (
        "Meine Mutter wohnt in Köln.",
        "Mama wohnt jetzt in Bonn.",
        UPDATE,
    ),
    # Trap: an accented German name missing from the names list.
    _fails(
        "Mein Bruder Jürgen wohnt in Köln.",
        "Jürgen wohnt jetzt in Bonn.",
        UPDATE,
        "'Jürgen' (folded 'jurgen') is not in the names list: 'Mein Bruder Jürgen' is user:brother "
        "and 'Jürgen' alone the speaker",
    ),
    # --- Spanish ---
    # Trap: the brief's own example, accent in both.
    ("Mi hermana Lucía vive en Sevilla.", "Lucía vive ahora en Granada.", UPDATE),
    # Trap: "Mamá" after "mi madre".
    (
        "Mi madre vive en Sevilla.",
        "Mamá vive ahora en Cádiz.",
        UPDATE,
    ),
    # Trap: an accented Spanish name missing from the names list.
    _fails(
        "Mi amigo Andrés vive en Bogotá.",
        "Andrés vive ahora en Medellín.",
        UPDATE,
        "'Andrés' is not in the names list: user:friend and then the speaker",
    ),
    # Trap: the same sister in Spanish, then in English.
    (
        "Mi hermana Lucía vive en Sevilla.",
        "My sister Lucía lives in Granada now.",
        UPDATE,
    ),
    # Trap: a colour that is also a first name ("rosa" = pink) opening the statement.
    _fails(
        "Mi color favorito es el azul.",
        "Rosa es ahora mi color favorito.",
        UPDATE,
        "'Rosa' (pink) is read as a person named Rosa, so the speaker's favourite is not changed",
    ),
    # --- French ---
    ("Ma sœur Chloé habite à Paris.", "Chloé habite maintenant à Lyon.", UPDATE),
    # Trap: "Maman" after "ma mère".
    (
        "Ma mère habite à Paris.",
        "Maman habite maintenant à Lyon.",
        UPDATE,
    ),
    # Trap: common French names missing from the names list.
    _fails(
        "Mon ami Marc travaille chez Renault.",
        "Marc travaille maintenant chez Peugeot.",
        UPDATE,
        "'Marc' is not in the names list: user:friend and then the speaker",
    ),
    _fails(
        "Mon frère François habite à Paris.",
        "François habite maintenant à Lyon.",
        UPDATE,
        "'François' is not in the names list: user:brother and then the speaker",
    ),
]


@pytest.mark.parametrize(("old", "new", "expected"), MUST_NOT_REPLACE)
def test_must_not_replace(old, new, expected):
    assert _verdict(old, new) is expected


@pytest.mark.parametrize(("old", "new", "expected"), SHOULD_REPLACE)
def test_should_replace(old, new, expected):
    assert _verdict(old, new) is expected

"""The typed value extractor, the lexicons and the note's statements: pure functions, no database."""

from __future__ import annotations

import pytest

from memories.pipeline.lexicon import detect, languages
from memories.pipeline.segment import segment, segment_spans
from memories.pipeline.update import frame_of
from memories.pipeline.values import masked, values_of


def typed(text: str) -> list[tuple[str, str]]:
    return [(value.type, value.norm) for value in values_of(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My salary went up to 92k.", [("money", "92000")]),
        ("The landlord raised our rent to $1,550.", [("money", "1550")]),
        ("Mein Gehalt beträgt 60.000 Euro.", [("money", "60000")]),
        ("Mon salaire est de 40 000 euros.", [("money", "40000")]),
        ("I'm down to 78 kg now.", [("quantity", "78 kg")]),
        ("Standup is now at 9:30.", [("time", "09:30")]),
        ("My flight lands at 6pm", [("time", "18:00")]),
        ("Das Meeting ist um 11 Uhr.", [("time", "11:00")]),
        ("Piano lessons are on Mondays from now on.", [("weekday", "en:mond")]),
        ("La clase de yoga es los jueves.", [("weekday", "es:juev")]),
        ("My email is ann@old.com.", [("email", "ann@old.com")]),
        ("My website moved to https://annlee.io.", [("url", "annlee.io")]),
        ("You can reach me at 555-0199 now.", [("phone", "5550199")]),
        ("Mon numéro est le 06 12 34 56 78.", [("phone", "0612345678")]),
        ("My dentist is Dr. Okafor.", [("name", "dr. okafor")]),
        ("I sold the Volvo last week.", [("name", "volvo")]),
        ("Ich bin nach München gezogen.", [("place", "münchen")]),
        ("My sister's birthday is May 13.", [("date", "may 13")]),
        ("I have nothing to add.", []),
        # "one" standing for a noun after a determiner is no number; the number stays one.
        ("Should we keep it in an easy access account or a fixed one?", []),
        ("The back one is bald.", []),
        ("Which one should I buy?", []),
        ("I have one cat.", [("number", "1")]),
        ("Is one lesson a week enough?", [("number", "1")]),
        # Numbers said in words past twelve, and units of energy, points, degrees.
        ("Sixteen in total.", [("number", "16")]),
        ("We're up to forty members.", [("number", "40")]),
        ("Ya somos veinte en el grupo.", [("number", "20")]),
        ("Our panels made 41 kWh on Sunday.", [("quantity", "41 kwh"), ("weekday", "en:sund")]),
        ("She scored 92 points.", [("quantity", "92 point")]),
    ],
)
def test_it_types_the_values_of_a_statement(text, expected):
    assert typed(text) == expected


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("Should we keep the deposit in an easy access account or a fixed one?", set()),
        ("The other one is cheaper.", set()),
        ("I adopted one more dog, so that's three.", {"1", "3"}),
        ("One of my housemates is moving out.", {"1"}),
    ],
)
def test_the_update_engine_reads_one_as_the_values_do(text, values):
    # The engine's frame and the typed values read "one" alike (`values.pronoun_one`).
    assert {v for v in frame_of(text).values if v.isdigit()} == values


def test_the_frame_is_the_statement_with_its_values_masked():
    assert masked("I earn 85k a year.") == "I earn <money> a year."
    assert masked("I earn 85k a year.") == masked("I earn 90k a year.")


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Ich wohne in Hamburg.", "de"),
        ("Me mudé a Valencia.", "es"),
        ("Bajé a 75 kilos.", "es"),
        ("J'habite à Lyon.", "fr"),
        ("I live in Berlin.", "en"),
        ("Standup is at 10:00.", "en"),
    ],
)
def test_it_tells_the_language_of_a_statement(text, language):
    assert detect(text) == language


def test_each_language_with_a_lexicon_is_listed_english_first():
    assert languages() == ["en", "de", "es", "fr"]


@pytest.mark.parametrize(
    ("note", "statements"),
    [
        (
            "I live in Lisbon and work as a product designer at Fieldnote.",
            ["I live in Lisbon", "I work as a product designer at Fieldnote."],
        ),
        ("J'habite à Lyon et travaille chez Renault.", ["J'habite à Lyon", "Je travaille chez Renault."]),
        ("I like tea and coffee.", ["I like tea and coffee."]),
        (
            "I moved to Porto last month; the commute to Fieldnote is now by train.",
            ["I moved to Porto last month", "the commute to Fieldnote is now by train."],
        ),
        ("Olga got promoted, so my manager is Ben now.", ["Olga got promoted", "my manager is Ben now."]),
        (
            "Back from the coast! Btw my new number is 555-0199. The recital is on Friday.",
            ["Back from the coast!", "My new number is 555-0199.", "The recital is on Friday."],
        ),
        # An opener that only says a statement begins is dropped; one that says "in addition" stays.
        ("Oh and my dentist is Dr. Park.", ["My dentist is Dr. Park."]),
        ("Übrigens, ich wohne jetzt in Köln.", ["Ich wohne jetzt in Köln."]),
        ("Por cierto, mi número nuevo es 612 345 678.", ["Mi número nuevo es 612 345 678."]),
        ("Au fait, je travaille chez Renault maintenant.", ["Je travaille chez Renault maintenant."]),
        ("Also, I have a cat named Miso.", ["Also, I have a cat named Miso."]),
        # A sentence that leans on the one before stays with it.
        (
            "I went to the store and bought milk. It was hot.",
            ["I went to the store and bought milk. It was hot."],
        ),
    ],
)
def test_a_note_splits_into_its_statements(note, statements):
    assert segment(note) == statements


def test_a_dropped_opener_leaves_the_span_on_the_statement_and_the_source_whole():
    note = "Back from the coast! Btw my new number is 555-0199."
    piece = segment_spans(note)[1]
    assert piece.text == "My new number is 555-0199."
    assert note[piece.start : piece.end] == "my new number is 555-0199."

"""Entity rules: people, organisations, products, places, concepts, dates and amounts."""

from __future__ import annotations

import pytest

from memories.pipeline.entities import extract_entities


def types_of(text: str) -> dict[str, str]:
    return dict(extract_entities(text))


class TestPeople:
    def test_it_makes_conversation_speakers_persons(self):
        text = "Caroline: I went to the support group.\nMelanie: That sounds great!"
        assert extract_entities(text) == [("Caroline", "Person"), ("Melanie", "Person")]

    def test_it_does_not_make_chat_roles_or_labels_persons(self):
        assert extract_entities("User: I like tea\nAssistant: Noted.") == []
        assert extract_entities("Note: buy milk") == []

    @pytest.mark.parametrize(
        ("text", "name"),
        [
            ("I had lunch with my sister Priyanka.", "Priyanka"),
            ("My best friend Zara is visiting.", "Zara"),
            ("I met Sarah for coffee.", "Sarah"),
            ("Yesterday Alice called.", "Alice"),
            ("Zed said the build is green.", "Zed"),  # sentence start, but a verb of saying follows
            ("Dr. Okafor is my doctor.", "Okafor"),
            ("Hey Mel, how are you?", "Mel"),
            ("Call Anna tomorrow.", "Anna"),
            ("Met John at the station.", "John"),
        ],
    )
    def test_it_finds_persons(self, text, name):
        assert types_of(text).get(name) == "Person"

    def test_it_keeps_full_names_together(self):
        assert types_of("Sarah Johnson and Mark Lee came over.") == {
            "Sarah Johnson": "Person",
            "Mark Lee": "Person",
        }

    def test_it_strips_the_possessive(self):
        assert extract_entities("Caroline's mom loves gardening.") == [("Caroline", "Person")]


class TestOrganizations:
    @pytest.mark.parametrize(
        ("text", "name"),
        [
            ("I work at Initech.", "Initech"),
            ("She works for Globex these days.", "Globex"),
            ("I joined Hooli last year.", "Hooli"),
            ("He was hired by Umbrella.", "Umbrella"),
            ("We bought shares in Acme Corp.", "Acme Corp"),
            ("I studied at the University of Toronto.", "University of Toronto"),
            ("Bank of America raised its fees.", "Bank of America"),
            ("Our investor is Sequoia Capital.", "Sequoia Capital"),
            ("Widgets GmbH shipped it.", "Widgets GmbH"),
        ],
    )
    def test_it_finds_organizations(self, text, name):
        assert types_of(text).get(name) == "Organization"


class TestPlaces:
    @pytest.mark.parametrize(
        ("text", "name"),
        [
            ("I moved to Lisbon.", "Lisbon"),
            ("We flew to Reykjavik.", "Reykjavik"),
            ("I'm from Brazil.", "Brazil"),
            ("Berlin is lovely in spring.", "Berlin"),  # known city, even at sentence start
            ("Yesterday we walked around New York City.", "New York City"),
            ("She visited Kyoto.", "Kyoto"),
        ],
    )
    def test_it_finds_locations(self, text, name):
        assert types_of(text).get(name) == "Location"


class TestProducts:
    def test_it_finds_products_by_cue_and_keeps_model_numbers(self):
        assert types_of("I bought my new iPhone 15 Pro last week.").get("iPhone 15 Pro") == "Product"
        assert types_of("I drive a Tesla Model 3.").get("Tesla Model 3") == "Product"
        assert types_of("I love the Notion app.").get("Notion") == "Product"


class TestDatesAndAmounts:
    @pytest.mark.parametrize(
        ("text", "amount"),
        [
            ("It cost $1,200.", "$1,200"),
            ("Lunch was €30.", "€30"),
            ("I paid 30 dollars.", "30 dollars"),
            ("The raise is 5k a year.", "5k"),
            ("Rent is £950.50 now.", "£950.50"),
            ("It sold for $2.5 million.", "$2.5 million"),
        ],
    )
    def test_it_finds_amounts(self, text, amount):
        assert types_of(text).get(amount) == "Amount"

    def test_a_5k_race_is_not_money(self):
        assert extract_entities("I ran a 5k race.") == []

    def test_it_finds_explicit_dates_but_not_relative_ones(self):
        assert extract_entities("We met on 5 March 2024 and again yesterday, then 2024-04-01.") == [
            ("5 March 2024", "Date"),
            ("2024-04-01", "Date"),
        ]


class TestWhatIsNotAnEntity:
    @pytest.mark.parametrize(
        "text",
        [
            "The weather was nice.",
            "I went home.",
            "We are going out.",
            "Yesterday was long.",
            "On Monday it rained.",
            "Mondays are tough.",
            "In May I was busy.",
            "Thanks! Sure, sounds good. Okay.",
            "Life is good.",
            "I'm happy. It's fine. Don't worry.",
            "## My Weekly Review\nnothing much happened",
            "see https://Example.com or mail Bob@Example.com",
        ],
    )
    def test_it_ignores_pronouns_openers_weekdays_months_and_stop_words(self, text):
        assert extract_entities(text) == []


class TestDedupeAndOrder:
    def test_it_dedupes_case_insensitively_keeping_the_first_form_in_order(self):
        text = "I met Anna in Paris. Later ANNA and anna went to paris again. Then Rome."
        assert extract_entities(text) == [("Anna", "Person"), ("Paris", "Location"), ("Rome", "Location")]

    def test_a_later_cue_can_type_an_uncued_first_mention(self):
        assert extract_entities("Zorblax is great. I work at Zorblax.") == [("Zorblax", "Organization")]

    def test_it_only_uses_the_allowed_types(self):
        text = (
            "Caroline: I bought a new Kindle for $90 on 2024-01-02, met Tom at Acme Corp in Paris, "
            "and read about GDPR."
        )
        allowed = {"Person", "Organization", "Product", "Location", "Concept", "Date", "Amount"}
        found = extract_entities(text)
        assert {kind for _, kind in found} <= allowed
        assert ("GDPR", "Concept") in found


class TestSentenceInitialNames:
    def test_it_drops_an_uncued_word_that_only_starts_sentences(self):
        assert extract_entities("Zorblax shipped late.") == []
        assert extract_entities("Apples are sweet. Apples are red.") == []

    def test_it_keeps_it_when_the_text_capitalises_it_mid_sentence(self):
        assert extract_entities("Zorblax shipped late. Everyone blames Zorblax.") == [("Zorblax", "Concept")]

    def test_it_keeps_it_when_the_space_already_knows_the_name(self):
        assert extract_entities("Zorblax shipped late.", known={"zorblax"}) == [("Zorblax", "Concept")]
        # `known` holds normalized names: a possessive is no other name.
        assert extract_entities("Zorblax's office is nice.", known={"zorblax"}) == [("Zorblax", "Concept")]

    def test_a_known_name_never_makes_a_stop_word_a_name(self):
        assert extract_entities("The weather was nice. Monday too.", known={"the", "monday"}) == []

    def test_a_lower_case_mention_is_no_evidence(self):
        assert extract_entities("Zorblax shipped late. I hate zorblax.") == []

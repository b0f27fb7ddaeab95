"""The built-in extraction rules the worker runs on every saved text. Pure functions: no database."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from memories.pipeline.dedupe import normalize_for_fingerprint
from memories.pipeline.extract import Candidate, classify, extract, extract_tags, slot_of
from memories.pipeline.segment import segment, segment_spans
from memories.pipeline.timeparse import resolve_times

BERLIN = ZoneInfo("Europe/Berlin")
# A Wednesday afternoon.
REF = datetime(2023, 5, 10, 15, 0, tzinfo=BERLIN)


def noon(year: int, month: int, day: int) -> datetime:
    return datetime(year, month, day, 12, 0, tzinfo=BERLIN)


def sentences(count: int, start: int = 0) -> str:
    return " ".join(f"Sentence {i} says something modest about the day." for i in range(start, start + count))


class TestSegment:
    def test_it_keeps_a_short_note_whole_and_trimmed(self):
        assert segment("  I like green tea.\nAnd long walks.  \n") == ["I like green tea.\nAnd long walks."]

    def test_it_returns_nothing_for_blank_text(self):
        assert segment("") == []
        assert segment(" \n\t\n ") == []

    def test_it_splits_a_conversation_into_turns_keeping_the_speaker(self):
        text = "Alice: I went to Rome.\nBob: Nice! When?\nMary Jane: Last week, with me."
        assert segment(text) == [
            "Alice: I went to Rome.",
            "Bob: Nice! When?",
            "Mary Jane: Last week, with me.",
        ]

    def test_continuation_lines_belong_to_the_previous_turn(self):
        text = "Alice: I went to Rome.\nIt was hot.\n\nBob: Nice!"
        assert segment(text) == ["Alice: I went to Rome.\nIt was hot.", "Bob: Nice!"]

    def test_a_single_turn_is_a_conversation_too(self):
        assert segment("Caroline: I moved to Berlin") == ["Caroline: I moved to Berlin"]

    def test_a_title_with_a_colon_does_not_make_a_document_a_conversation(self):
        text = "Chapter One: The Move\n\n" + sentences(6) + "\n\n" + sentences(6, 6)
        pieces = segment(text)
        # A title is the context of what follows, not a statement, and not a speaker either.
        assert pieces[0] == "Sentence 0 says something modest about the day."
        assert not any(piece.startswith("Chapter One") for piece in pieces)

    def test_text_before_the_first_turn_is_its_own_segment(self):
        text = "Chat with the team about the offsite\nAlice: I booked the venue.\nBob: Great."
        assert segment(text) == [
            "Chat with the team about the offsite",
            "Alice: I booked the venue.",
            "Bob: Great.",
        ]

    def test_labels_are_not_speakers(self):
        # Two lines, two statements; neither label is a speaker.
        assert segment("Note: buy milk\nReminder: call the bank") == [
            "Note: buy milk",
            "Reminder: call the bank",
        ]

    def test_a_long_turn_is_chunked_and_every_chunk_keeps_the_speaker(self):
        text = "Alice: " + sentences(40) + "\nBob: ok"
        pieces = segment(text)
        assert len(pieces) > 2
        assert all(piece.startswith("Alice: ") for piece in pieces[:-1])
        assert pieces[-1] == "Bob: ok"
        assert all(len(piece) <= 800 + len("Alice: ") for piece in pieces)

    def test_a_note_splits_into_one_statement_per_sentence_never_across_paragraphs(self):
        paragraphs = [sentences(3, i * 3) for i in range(4)]
        text = "\n\n".join(paragraphs)
        assert segment(text) == [f"Sentence {i} says something modest about the day." for i in range(12)]

    def test_a_four_paragraph_note_gives_self_contained_statements_without_overlap(self):
        text = (
            "I prefer morning meetings before 11:00.\n\n"
            "Yesterday I had dinner with Marco. He told me he is moving to Porto.\n\n"
            "My sister Ana lives in Lisbon. She is a nurse.\n\n"
            "Bob works at Acme. My employer Acme is based in Lyon."
        )
        pieces = segment_spans(text)
        assert [p.text for p in pieces] == [
            "I prefer morning meetings before 11:00.",
            # A sentence opening with a pronoun keeps the sentence it leans on.
            "Yesterday I had dinner with Marco. He told me he is moving to Porto.",
            "My sister Ana lives in Lisbon. She is a nurse.",
            "Bob works at Acme.",
            "My employer Acme is based in Lyon.",
        ]
        assert all(text[p.start : p.end] == p.text for p in pieces)
        assert all(a.end <= b.start for a, b in itertools.pairwise(pieces))

    def test_a_list_item_is_a_statement_with_the_line_that_introduces_it(self):
        text = "Shopping list:\n- milk\n- eggs\n\n# Trip\n\n* passport"
        pieces = segment_spans(text)
        assert [p.text for p in pieces] == ["Shopping list: milk", "Shopping list: eggs", "Trip: passport"]
        assert [text[p.start : p.end] for p in pieces] == ["milk", "eggs", "passport"]

    def test_spans_point_into_text_with_windows_line_ends(self):
        text = "I live in Paris.\r\nI work at Acme."
        assert [(p.text, text[p.start : p.end]) for p in segment_spans(text)] == [
            ("I live in Paris.", "I live in Paris."),
            ("I work at Acme.", "I work at Acme."),
        ]

    def test_a_conversation_turn_span_is_what_the_speaker_said(self):
        text = "Alice: I went to Rome.\nBob: Nice!"
        assert [(p.text, text[p.start : p.end]) for p in segment_spans(text)] == [
            ("Alice: I went to Rome.", "I went to Rome."),
            ("Bob: Nice!", "Nice!"),
        ]

    def test_a_long_sentence_splits_into_even_chunks_between_words(self):
        paragraph = ", ".join(f"clause {i} says something modest about the day" for i in range(60)) + "."
        pieces = segment(paragraph)
        assert len(pieces) >= 4
        assert all(0 < len(piece) <= 800 for piece in pieces)
        assert " ".join(pieces) == paragraph

    def test_it_does_not_split_after_abbreviations_or_initials(self):
        paragraph = ("Dr. Smith met J. K. Rowling at 5 p.m. on the terrace, e.g. near the bar. " * 14).strip()
        for piece in segment(paragraph):
            assert piece.startswith("Dr. Smith")

    def test_a_run_on_text_without_sentence_ends_splits_between_words(self):
        text = "word " * 1000
        pieces = segment(text)
        assert all(0 < len(piece) <= 800 for piece in pieces)
        assert all(set(piece.split()) == {"word"} for piece in pieces)

    def test_a_heading_is_no_statement_of_its_own(self):
        text = "# Travel\n\n" + sentences(2) + "\n## Food\nWe ate pastel de nata."
        assert segment(text) == [
            "Sentence 0 says something modest about the day.",
            "Sentence 1 says something modest about the day.",
            "We ate pastel de nata.",
        ]

    def test_it_drops_segments_without_words(self):
        text = sentences(5) + "\n\n---\n\n***\n\n" + sentences(5, 5)
        assert all(piece not in ("---", "***") for piece in segment(text))
        assert len(segment(text)) == 10


CLASSIFY_TABLE = [
    # Standing statements: preferences, attributes, relationships.
    ("I like green tea.", "fact"),
    ("My favourite colour is blue.", "fact"),
    ("I live in Berlin.", "fact"),
    ("I work at Google as an engineer.", "fact"),
    ("My sister is a nurse.", "fact"),
    ("Anna is allergic to peanuts.", "fact"),
    ("I have two cats.", "fact"),
    ("I love going to the beach.", "fact"),  # "going to" without "be" is not a plan
    ("I've been vegetarian since 2015.", "fact"),  # "since" dates a fact, not an event
    ("I have lived in Lisbon for five years.", "fact"),
    ("My birthday is on March 5.", "fact"),
    ("I'm tired today.", "fact"),
    ("Caroline: Thanks! What are you going to do next?", "fact"),  # a question about the other person
    # Things that happened.
    ("I went to Paris yesterday.", "episode"),
    ("We visited the Louvre last week.", "episode"),
    ("I met Sarah for coffee.", "episode"),
    ("I bought a new laptop.", "episode"),
    ("I finished the report.", "episode"),
    ("We started the renovation three weeks ago.", "episode"),
    ("I had pizza for dinner.", "episode"),
    ("The meeting was on 2023-05-02.", "episode"),
    ("Caroline: I went to a LGBTQ support group yesterday and it was so powerful.", "episode"),
    ("I didn't go to the party.", "episode"),
    ("I should have called him.", "episode"),
    ("I used to play the piano.", "episode"),
    # Plans, intents and expected events.
    ("I'm going to Japan next month.", "foresight"),
    ("I will call mom tomorrow.", "foresight"),
    ("Remind me to buy milk.", "foresight"),
    ("The report is due Friday.", "foresight"),
    ("Deadline for the grant: 2023-06-01", "foresight"),
    ("I plan to learn Spanish.", "foresight"),
    ("We're planning a trip to Iceland.", "foresight"),
    ("I want to run a marathon.", "foresight"),
    ("I hope to visit Kyoto someday.", "foresight"),
    ("I intend to quit sugar.", "foresight"),
    ("Dinner with Anna tonight.", "foresight"),
    ("Dentist appointment on 2023-05-20.", "foresight"),
    ("I booked flights for next month.", "foresight"),  # the trip matters more than the booking
    ("Bob: I'm moving to Denver next week!", "foresight"),
    ("I went hiking. What are you going to do this weekend?", "episode"),
    ("The kids go back to school in two weeks.", "foresight"),
]


class TestClassify:
    @pytest.mark.parametrize(("text", "kind"), CLASSIFY_TABLE)
    def test_it_classifies_everyday_sentences(self, text, kind):
        times = resolve_times(text, reference=REF)
        assert classify(text, reference=REF, times=times) == kind

    def test_the_table_is_varied_enough(self):
        assert len(CLASSIFY_TABLE) >= 25
        assert {kind for _, kind in CLASSIFY_TABLE} == {"fact", "episode", "foresight"}

    @pytest.mark.parametrize(
        "text", ["The recycling goes out on Tuesday evenings.", "I play chess Sunday mornings."]
    )
    def test_a_weekday_that_recurs_is_a_standing_fact_whatever_day_it_is_said(self, text):
        # Said on each day of one week: the kind must not depend on which day it was.
        for offset in range(7):
            reference = REF + timedelta(days=offset)
            times = resolve_times(text, reference=reference)
            assert classify(text, reference=reference, times=times) == "fact", reference.strftime("%A")

    def test_a_resolved_time_alone_decides_when_the_grammar_is_silent(self):
        text = "Rome trip"
        assert classify(text, reference=REF, times=[("x", noon(2023, 6, 1))]) == "foresight"
        assert classify(text, reference=REF, times=[("x", noon(2023, 4, 1))]) == "episode"
        assert classify(text, reference=REF, times=[]) == "fact"


class TestTags:
    def test_it_collects_hashtags_lower_cased_unique_in_order(self):
        assert extract_tags("Loved #Travel in #Rome! #travel #food_lovers #day-2") == [
            "travel",
            "rome",
            "food_lovers",
            "day-2",
        ]

    def test_it_reads_a_trailing_tags_line(self):
        assert extract_tags("Dinner at Luigi's #food\nTags: Italian, date night; #Rome") == [
            "food",
            "italian",
            "date-night",
            "rome",
        ]
        assert extract_tags("tags: work ideas") == ["work", "ideas"]

    def test_it_ignores_what_only_looks_like_a_hashtag(self):
        text = "# Heading\nI use C# and see page#anchor, &#39; and #1 priority, item #42."
        assert extract_tags(text) == []

    def test_it_skips_tags_over_100_characters(self):
        assert extract_tags("#" + "a" * 101 + " #ok") == ["ok"]
        assert extract_tags("#" + "a" * 100) == ["a" * 100]

    def test_a_tags_line_in_the_middle_is_just_text(self):
        assert extract_tags("tags: a, b\nmore text") == []


class TestSlots:
    @pytest.mark.parametrize(
        ("text", "slot", "value"),
        [
            ("I live in Paris.", "user:lives_in", "paris"),
            ("I moved to Berlin.", "user:lives_in", "berlin"),
            ("I'm based in Lisbon now", "user:lives_in", "lisbon"),
            ("I relocated to New York City last year", "user:lives_in", "new york city"),
            ("I live in Berlin with my wife", "user:lives_in", "berlin"),
            ("I have lived in Porto for 5 years", "user:lives_in", "porto"),
            ("I work at Google.", "user:works_at", "google"),
            ("I work for the Guardian as an editor", "user:works_at", "guardian"),
            ("I joined Stripe in March", "user:works_at", "stripe"),
            ("I started a new job at Acme Corp!", "user:works_at", "acme corp"),
            ("My name is Caroline.", "user:name", "caroline"),
            ("my name is john smith", "user:name", "john smith"),
            ("Call me Ishmael.", "user:name", "ishmael"),
            ("I am 34 years old.", "user:age", "34"),
            ("I'm 34", "user:age", "34"),
            ("I just turned 40!", "user:age", "40"),
            ("My favourite colour is blue.", "user:favorite:color", "blue"),
            ("My favorite color is Green!", "user:favorite:color", "green"),
            ("Blue is my favorite color", "user:favorite:color", "blue"),
            ("my favorite food is sushi, obviously", "user:favorite:food", "sushi"),
            ("I'm married.", "user:relationship_status", "married"),
            ("I'm single now", "user:relationship_status", "single"),
            ("We got engaged last week!", "user:relationship_status", "engaged"),
            ("I'm vegetarian.", "user:diet", "vegetarian"),
            ("I am a vegan", "user:diet", "vegan"),
            ("i live in paris", "user:lives_in", "paris"),
            ("Caroline: I moved to Berlin", "caroline:lives_in", "berlin"),
            ("User: I live in Rome", "user:lives_in", "rome"),
            ("Mary Jane: I'm vegan", "mary jane:diet", "vegan"),
            ("Melanie moved to Denver last month.", "melanie:lives_in", "denver"),
        ],
    )
    def test_it_finds_single_valued_facts(self, text, slot, value):
        assert slot_of(text) == (slot, value)

    @pytest.mark.parametrize(
        "text",
        [
            "I like Paris.",
            "I joined a gym.",
            "I work from home.",
            "call me tomorrow",
            "Call me Monday",
            "I'm 5 minutes away",
            "I'm not married",
            "I'm getting married in June",
            "I'm not vegan",
            "I don't live in Paris anymore",
            "I'm moving to Berlin next month",
            "She lives in Rome",
            "My sister lives in Rome",
            "",
        ],
    )
    def test_it_returns_nothing_for_other_statements(self, text):
        assert slot_of(text) == ("", "")

    def test_a_newer_value_shares_the_slot_of_the_older_one(self):
        old_slot, old_value = slot_of("I live in Paris.")
        new_slot, new_value = slot_of("I moved to Berlin!")
        assert old_slot == new_slot == "user:lives_in"
        assert (old_value, new_value) == ("paris", "berlin")

    def test_the_first_slot_in_the_text_wins(self):
        assert slot_of("I moved to Berlin and joined Siemens.") == ("user:lives_in", "berlin")


class TestFingerprint:
    def test_it_ignores_case_punctuation_and_spacing(self):
        variants = ["I live in Paris.", "i live in paris", "  I LIVE   in Paris!!! ", "I live in Paris…"]
        assert {normalize_for_fingerprint(v) for v in variants} == {"i live in paris"}

    def test_it_applies_nfkc_and_apostrophes_do_not_split_words(self):
        # Full-width "I", a curly apostrophe and the "fi" ligature, written as escapes to stay visible.
        assert normalize_for_fingerprint("\uff29 don\u2019t like \ufb01sh") == normalize_for_fingerprint(
            "I dont like fish"
        )
        assert normalize_for_fingerprint("Paris,France") == normalize_for_fingerprint("Paris, France")

    def test_it_keeps_what_changes_the_meaning(self):
        assert normalize_for_fingerprint("I paid $5") != normalize_for_fingerprint("I paid 5")
        assert normalize_for_fingerprint("I like tea") != normalize_for_fingerprint("I like coffee")


class TestExtract:
    def test_it_extracts_a_fact_valid_from_the_reference(self):
        effective, [candidate] = extract("I like green tea. #drinks", reference=REF)
        assert effective == REF
        # "#drinks" is too short to stand alone: it stays with the sentence it tags.
        assert candidate == Candidate(
            content="I like green tea. #drinks",
            kind="fact",
            valid_from=REF,
            stated_at=REF,
            tags=["drinks"],
            span_start=0,
            span_end=25,
        )

    def test_a_fact_with_since_is_valid_from_then(self):
        _, [candidate] = extract("I've been vegetarian since 2015.", reference=REF)
        assert candidate.kind == "fact"
        assert candidate.valid_from == noon(2015, 1, 1)
        assert (candidate.slot, candidate.slot_value) == ("user:diet", "vegetarian")

    def test_an_episode_occurred_at_its_past_time_or_else_the_reference(self):
        _, [went] = extract("I went to Rome with Anna yesterday.", reference=REF)
        assert (went.kind, went.occurred_at) == ("episode", noon(2023, 5, 9))
        assert went.valid_from is None and went.due_at is None
        assert went.entities == [("Rome", "Location"), ("Anna", "Person")]
        _, [met] = extract("I met Sarah for coffee.", reference=REF)
        assert (met.kind, met.occurred_at) == ("episode", REF)

    def test_a_foresight_is_due_at_its_future_time_or_none(self):
        _, [trip] = extract("I'm flying to Tokyo next Friday.", reference=REF)
        assert (trip.kind, trip.due_at) == ("foresight", noon(2023, 5, 12))
        assert trip.occurred_at is None and trip.valid_from is None
        _, [wish] = extract("I want to learn Spanish.", reference=REF)
        assert (wish.kind, wish.due_at) == ("foresight", None)
        _, [today] = extract("I'll call the bank today.", reference=REF)
        assert today.due_at == REF  # same day counts as due, not as missed

    def test_a_stated_date_replaces_the_reference(self):
        text = "On 8 May 2023: I visited the museum yesterday. I'll go back next week."
        effective, [visit, plan] = extract(text, reference=REF)
        assert effective == noon(2023, 5, 8)
        assert (visit.content, visit.kind, visit.occurred_at) == (
            "I visited the museum yesterday.",
            "episode",
            noon(2023, 5, 7),
        )
        assert (plan.content, plan.kind, plan.due_at) == (
            "I'll go back next week.",
            "foresight",
            noon(2023, 5, 15),
        )
        assert text[visit.span_start : visit.span_end] == visit.content

    def test_it_reads_a_locomo_session(self):
        text = (
            "1:56 pm on 8 May, 2023:\n"
            "Caroline: Hey Mel! I went to a LGBTQ support group yesterday and it was so powerful.\n"
            "Melanie: That's awesome, Caroline! I'm going to take the kids camping next weekend.\n"
            "Caroline: I moved to Berlin last year, you know. #life"
        )
        effective, candidates = extract(text, reference=REF)
        assert effective == datetime(2023, 5, 8, 13, 56, tzinfo=BERLIN)
        assert [c.kind for c in candidates] == ["episode", "foresight", "episode"]
        support, camping, moved = candidates
        assert support.occurred_at == noon(2023, 5, 7)
        assert support.entities[0] == ("Caroline", "Person") and ("Mel", "Person") in support.entities
        assert camping.content.startswith("Melanie: ")
        assert camping.due_at == noon(2023, 5, 13)
        assert camping.entities[:2] == [("Melanie", "Person"), ("Caroline", "Person")]
        assert moved.occurred_at == noon(2022, 5, 8)
        assert (moved.slot, moved.slot_value, moved.tags) == ("caroline:lives_in", "berlin", ["life"])

    def test_a_trailing_tags_line_tags_every_segment_and_leaves_the_content(self):
        text = "Alice: I went to Rome.\nBob: I stayed home.\ntags: travel, Summer 2023"
        _, candidates = extract(text, reference=REF)
        assert [c.content for c in candidates] == ["Alice: I went to Rome.", "Bob: I stayed home."]
        assert all(c.tags == ["travel", "summer-2023"] for c in candidates)

    def test_a_dated_paragraph_uses_its_own_date(self):
        text = (
            "2023-04-01: We painted the kitchen.\n\n"
            + sentences(8)
            + "\n\n2023-04-02: We went to Ikea yesterday."
        )
        _, candidates = extract(text, reference=REF)
        assert candidates[0].occurred_at == noon(2023, 4, 1)
        assert candidates[-1].occurred_at == noon(2023, 4, 1)  # "yesterday" of 2 April

    def test_it_keeps_every_datetime_aware_in_the_reference_zone(self):
        reference = datetime(2023, 5, 10, 9, 0, tzinfo=ZoneInfo("America/New_York"))
        text = "[2023-05-08T22:00:00Z] I met Tom yesterday and will see him next week. I live in NYC."
        effective, candidates = extract(text, reference=reference)
        assert effective.tzinfo is reference.tzinfo
        for candidate in candidates:
            for moment in (candidate.occurred_at, candidate.valid_from, candidate.due_at):
                assert moment is None or moment.tzinfo is reference.tzinfo

    def test_it_refuses_a_naive_reference(self):
        with pytest.raises(ValueError):
            extract("I like tea", reference=datetime(2023, 5, 10))

    def test_it_is_deterministic(self):
        text = "Alice: I moved to Berlin last year.\nBob: I'll visit you next month! #trip"
        assert extract(text, reference=REF) == extract(text, reference=REF)

    def test_it_returns_nothing_for_empty_text(self):
        assert extract("   ", reference=REF) == (REF, [])

    def test_it_handles_a_100000_character_text(self):
        turns = [
            "Alice: I went to Paris yesterday and met Bob at the Louvre for $30.",
            "Bob: We will go to Rome next week with Carol. #travel",
            "Alice: My favourite colour is blue and I work at Acme Corp.",
        ]
        conversation = ("\n".join(turns) + "\n") * 600
        prose = (sentences(10) + "\n\n") * 300
        for text in (conversation[:100_000], prose[:100_000], "word " * 20_000):
            assert len(text) >= 100_000
            _, candidates = extract(text, reference=REF)
            assert candidates
            assert all(candidate.content for candidate in candidates)

    def test_relative_clock_values_are_day_granular(self):
        _, [candidate] = extract("I went to the gym yesterday.", reference=REF)
        assert candidate.occurred_at is not None
        assert REF - candidate.occurred_at == timedelta(days=1, hours=3)

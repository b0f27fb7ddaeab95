"""Time rules: the date a text states about itself and the dates it mentions. No database needed."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from memories.pipeline.timeparse import explicit_dates, leading_date, mentions_time, resolve_times

BERLIN = ZoneInfo("Europe/Berlin")
# A Wednesday afternoon.
REF = datetime(2023, 5, 10, 15, 0, tzinfo=BERLIN)


def day_of(text: str, reference: datetime = REF) -> date:
    found = resolve_times(text, reference=reference)
    assert len(found) == 1, found
    return found[0][1].date()


class TestLeadingDate:
    @pytest.mark.parametrize(
        "text",
        [
            "On 8 May 2023: we went hiking",
            "On May 8, 2023, we went hiking",
            "8 May 2023 - we went hiking",
            "2023-05-08: we went hiking",
            "[2023-05-08] we went hiking",
            "On Monday, 8 May 2023: we went hiking",
            "8th of May 2023 | we went hiking",
        ],
    )
    def test_it_recognises_the_stated_date_and_strips_it(self, text):
        stated, rest = leading_date(text, reference=REF)
        assert stated == datetime(2023, 5, 8, 12, 0, tzinfo=BERLIN)
        assert rest == "we went hiking"

    def test_it_reads_the_locomo_form_with_a_clock_time(self):
        stated, rest = leading_date("1:56 pm on 8 May, 2023:\nCaroline: Hey Mel!", reference=REF)
        assert stated == datetime(2023, 5, 8, 13, 56, tzinfo=BERLIN)
        assert rest == "Caroline: Hey Mel!"

    def test_it_reads_12_am_as_midnight(self):
        stated, _ = leading_date("12:30 am on 9 June, 2022: hi", reference=REF)
        assert stated == datetime(2022, 6, 9, 0, 30, tzinfo=BERLIN)

    def test_it_uses_midday_without_a_clock_time_so_utc_keeps_the_day(self):
        tokyo = datetime(2023, 5, 10, 9, 0, tzinfo=ZoneInfo("Asia/Tokyo"))
        stated, _ = leading_date("2023-05-08: x", reference=tokyo)
        assert stated is not None
        assert stated.tzinfo == tokyo.tzinfo
        assert stated.astimezone(UTC).date() == date(2023, 5, 8)

    def test_it_converts_an_iso_timestamp_with_an_offset_to_the_reference_zone(self):
        stated, rest = leading_date("[2023-05-08T10:00:00Z] deployed", reference=REF)
        assert stated == datetime(2023, 5, 8, 12, 0, tzinfo=BERLIN)
        assert rest == "deployed"

    def test_it_takes_a_date_on_a_line_of_its_own(self):
        stated, rest = leading_date("8 May 2023\nWe went hiking", reference=REF)
        assert stated is not None and stated.date() == date(2023, 5, 8)
        assert rest == "We went hiking"

    @pytest.mark.parametrize(
        "text",
        [
            "On 8 May 2023 we went hiking",  # the date belongs to the sentence
            "We went hiking on 8 May 2023:",
            "2023-02-30: impossible",
            "Hello there",
            "",
        ],
    )
    def test_it_leaves_other_texts_alone(self, text):
        assert leading_date(text, reference=REF) == (None, text)

    def test_it_refuses_a_naive_reference(self):
        with pytest.raises(ValueError):
            leading_date("2023-05-08: x", reference=datetime(2023, 5, 10))


class TestExplicitDates:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("It was on 2024-03-05.", date(2024, 3, 5)),
            ("It was on 5 March 2024.", date(2024, 3, 5)),
            ("It was on the 5th of March, 2024.", date(2024, 3, 5)),
            ("It was on March 5, 2024.", date(2024, 3, 5)),
            ("It was on Mar 5th 2024.", date(2024, 3, 5)),
            ("It happened in March 2025.", date(2025, 3, 1)),
            ("The launch is in March 2025.", date(2025, 3, 1)),
            ("We met in 2019.", date(2019, 1, 1)),
        ],
    )
    def test_it_resolves_written_out_dates(self, text, expected):
        assert day_of(text) == expected

    def test_it_resolves_at_midday_in_the_reference_zone(self):
        [(phrase, moment)] = resolve_times("on 2024-03-05", reference=REF)
        assert phrase == "2024-03-05"
        assert moment == datetime(2024, 3, 5, 12, 0, tzinfo=BERLIN)

    def test_it_places_a_yearless_date_by_tense(self):
        assert day_of("We met on March 5.") == date(2023, 3, 5)
        # Neither past nor future: the nearest March 5 (two months ago rather than ten months ahead).
        assert day_of("The concert is on March 5.") == date(2023, 3, 5)
        assert day_of("I will fly out on March 5.") == date(2024, 3, 5)
        assert day_of("We met on June 3.") == date(2022, 6, 3)
        assert day_of("The concert is on June 3.") == date(2023, 6, 3)

    def test_it_places_a_bare_month_by_tense(self):
        assert day_of("We went to Japan in March.") == date(2023, 3, 1)
        assert day_of("I will go to Japan in March.") == date(2024, 3, 1)
        assert day_of("We went to Japan in June.") == date(2022, 6, 1)
        assert day_of("I will go to Japan in June.") == date(2023, 6, 1)
        assert day_of("Tax returns are in June.") == date(2023, 6, 1)

    def test_it_reads_last_and_next_with_a_month(self):
        assert day_of("last March") == date(2023, 3, 1)
        assert day_of("next March") == date(2024, 3, 1)
        assert day_of("last June") == date(2022, 6, 1)

    def test_it_does_not_take_may_the_verb_for_the_month(self):
        assert resolve_times("This may be a problem.", reference=REF) == []
        assert day_of("We married in May.") == date(2023, 5, 1)

    def test_it_skips_impossible_dates(self):
        assert resolve_times("on 31 February 2024", reference=REF) == []


class TestRelativeDays:
    @pytest.mark.parametrize(
        ("text", "offset"),
        [
            ("yesterday", -1),
            ("the day before yesterday", -2),
            ("day before yesterday", -2),
            ("tomorrow", 1),
            ("the day after tomorrow", 2),
            ("last week", -7),
            ("next week", 7),
            ("3 days ago", -3),
            ("a week ago", -7),
            ("two weeks ago", -14),
            ("twelve days ago", -12),
            ("a couple of days ago", -2),
            ("in 3 days", 3),
            ("in two weeks", 14),
            ("in a week", 7),
            ("10 days from now", 10),
            ("a fortnight ago", -14),
        ],
    )
    def test_it_shifts_days(self, text, offset):
        assert day_of(text) == REF.date() + timedelta(days=offset)

    def test_today_is_the_reference_itself(self):
        assert resolve_times("today", reference=REF) == [("today", REF)]

    def test_tonight_is_the_evening_of_the_reference_day(self):
        assert resolve_times("tonight", reference=REF) == [
            ("tonight", datetime(2023, 5, 10, 20, tzinfo=BERLIN))
        ]

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("last month", date(2023, 4, 10)),
            ("next month", date(2023, 6, 10)),
            ("last year", date(2022, 5, 10)),
            ("next year", date(2024, 5, 10)),
            ("3 months ago", date(2023, 2, 10)),
            ("in 2 months", date(2023, 7, 10)),
            ("two years ago", date(2021, 5, 10)),
            ("in 2 years", date(2025, 5, 10)),
        ],
    )
    def test_it_shifts_calendar_months_and_years(self, text, expected):
        assert day_of(text) == expected

    def test_it_clamps_the_day_when_shifting_months(self):
        march_31 = datetime(2023, 3, 31, 10, tzinfo=BERLIN)
        assert day_of("last month", march_31) == date(2023, 2, 28)
        assert day_of("next month", march_31) == date(2023, 4, 30)
        leap_day = datetime(2024, 2, 29, 10, tzinfo=BERLIN)
        assert day_of("next year", leap_day) == date(2025, 2, 28)


class TestWeekdays:
    # REF is Wednesday 10 May 2023.
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("last Friday", date(2023, 5, 5)),
            ("last Wednesday", date(2023, 5, 3)),  # strictly before the reference
            ("last Tuesday", date(2023, 5, 9)),
            ("next Friday", date(2023, 5, 12)),  # the first Friday strictly after
            ("next Wednesday", date(2023, 5, 17)),
            ("next Monday", date(2023, 5, 15)),
            ("this Friday", date(2023, 5, 12)),
            ("this coming Sunday", date(2023, 5, 14)),
            ("I'll see her on Friday.", date(2023, 5, 12)),
            ("I saw her on Friday.", date(2023, 5, 5)),
            ("We went out on Monday.", date(2023, 5, 8)),
            ("Yoga is on Monday.", date(2023, 5, 15)),
        ],
    )
    def test_it_resolves_weekdays(self, text, expected):
        assert day_of(text) == expected

    def test_it_matches_whole_words_only(self):
        assert resolve_times("Mondays are hard; Fridayness is a mood.", reference=REF) == []
        assert resolve_times("Sundaybrunch club", reference=REF) == []

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("Last Fri I took the kids to a pottery workshop.", date(2023, 5, 5)),
            ("I joined a new activist group last Tues.", date(2023, 5, 9)),
            ("see you next Thurs", date(2023, 5, 11)),
            ("I will play the match this Sat", date(2023, 5, 13)),
            ("We moved in on Mon.", date(2023, 5, 8)),
        ],
    )
    def test_it_reads_abbreviated_weekdays_after_a_word_that_makes_them_one(self, text, expected):
        assert day_of(text) == expected

    def test_an_abbreviated_weekday_alone_is_not_a_day(self):
        assert resolve_times("Sun is out, Sat by the fire, Wed at noon.", reference=REF) == []

    def test_it_is_case_insensitive(self):
        assert day_of("NEXT FRIDAY") == date(2023, 5, 12)
        assert day_of("Yesterday") == date(2023, 5, 9)

    @pytest.mark.parametrize(
        ("reference", "last", "this", "next"),
        [
            # Wednesday: the weekend just gone, the coming one, and the coming one again (like "next Friday").
            (REF, date(2023, 5, 6), date(2023, 5, 13), date(2023, 5, 13)),
            # Saturday: this weekend is today.
            (
                datetime(2023, 5, 13, 10, tzinfo=BERLIN),
                date(2023, 5, 6),
                date(2023, 5, 13),
                date(2023, 5, 20),
            ),
            # Sunday: still this weekend, which started yesterday.
            (
                datetime(2023, 5, 14, 10, tzinfo=BERLIN),
                date(2023, 5, 6),
                date(2023, 5, 13),
                date(2023, 5, 20),
            ),
        ],
    )
    def test_it_resolves_weekends_to_their_saturday(self, reference, last, this, next):
        found = resolve_times("last weekend, this weekend, next weekend", reference=reference)
        assert [moment.date() for _, moment in found] == [last, this, next]


class TestMentions:
    def test_it_returns_mentions_in_document_order(self):
        text = "Tomorrow I fly out; yesterday I packed; on 2023-06-01 I return."
        found = resolve_times(text, reference=REF)
        assert [phrase for phrase, _ in found] == ["Tomorrow", "yesterday", "2023-06-01"]

    def test_it_prefers_the_longest_overlapping_mention(self):
        found = resolve_times("on Friday, 5 March 2021", reference=REF)
        assert [(phrase, moment.date()) for phrase, moment in found] == [
            ("on Friday, 5 March 2021", date(2021, 3, 5))
        ]

    def test_all_results_are_aware_and_in_the_reference_zone(self):
        text = "2024-03-05T23:30:00+00:00, yesterday, in March, next Friday, 3 weeks ago, last weekend"
        found = resolve_times(text, reference=REF)
        assert len(found) == 6
        assert all(moment.tzinfo is BERLIN for _, moment in found)
        assert found[0][1] == datetime(2024, 3, 6, 0, 30, tzinfo=BERLIN)

    def test_it_finds_nothing_in_plain_text(self):
        assert resolve_times("I like green tea and long walks.", reference=REF) == []

    def test_explicit_dates_leave_out_prepositions_and_relative_phrases(self):
        spans = explicit_dates("Since 5 March 2024 and yesterday, until May 2025, on 2024-01-02.")
        assert [phrase for _, _, phrase in spans] == ["5 March 2024", "May 2025", "2024-01-02"]


class TestMentionsTime:
    """`mentions_time`: the text places what it says in time, resolvable or not."""

    @pytest.mark.parametrize(
        "text",
        [
            "Lost my job as a banker yesterday, so I'm gonna start my own business.",
            "I went to a transgender conference this month.",
            "Last Fri I finally took my kids to a pottery workshop.",
            "I've known these friends for 4 years, since I moved from my home country.",
            "Seven years now, and I've finally found my real muses.",
            "He was part of our family for 10 years.",
            "Max and I had a blast on our camping trip last summer.",
            "We went camping two weekends ago.",
            "I took a creative writing class recently.",
            "I ran into an old friend the other day.",
            "My grandma gave it to me when I was young.",
            "We spent Christmas at my parents' place over the holidays.",
            "I tried surfing for the first time!",
            "I moved to Lisbon in 2019.",
            "The exam is on 5 March.",
        ],
    )
    def test_it_finds_a_time_in_what_people_say(self, text):
        assert mentions_time(text)

    @pytest.mark.parametrize(
        "text",
        [
            "I love pottery; it is like therapy for me.",
            "My favourite colour is green.",
            "Sun is out and the sea is warm.",
            "She is 30 years old and lives in Porto.",
            "We sold 2019 tickets.",
            "On 8 May 2023: I adore my dog.",
            "1:56 pm on 8 May, 2023: Caroline: the support group was powerful.",
        ],
    )
    def test_it_finds_none_where_nothing_is_placed_in_time(self, text):
        # A leading date is when the text was written, not a time it names.
        assert not mentions_time(text)

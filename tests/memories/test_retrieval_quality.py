"""Retrieval internals on rows built with the ORM and the real embedding model.

End-to-end behaviour is in test_recall.py; these pin down the parts that are hard to reach
through the API: filtered HNSW scans that must not come back short, the text side's OR and IDF,
the query parsing, and that a recall costs the same few statements however many hits it returns.
"""

from __future__ import annotations

import math
import random
import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memories import embeddings
from memories.models import Entity, Memory, Source
from memories.pipeline.lexicon import value_asked
from memories.pipeline.update import frame_of
from memories.retrieval.recall import (
    DEFAULT_KNOBS,
    Knobs,
    RecallRequest,
    _names_in,
    _referents,
    asks_about,
    asks_now,
    asks_own,
    asks_present,
    asks_then,
    asks_when,
    holds_kind,
    matched_words,
    memory_recall,
    only_asks,
    query_names,
    query_periods,
    query_words,
    states_about,
)
from memories.services.spaces import space_create_default
from tests.helpers import link

pytestmark = pytest.mark.django_db


def _memories(owner, texts: list[str], **fields) -> list[Memory]:
    space = space_create_default(owner=owner)
    rows = []
    for text, vector in zip(texts, embeddings.embed(texts), strict=True):
        rows.append(
            Memory.objects.create(
                owner=owner, space=space, kind="fact", content=text, embedding=vector, **fields
            )
        )
    return rows


# The filter tests ask whether a filtered recall comes back short, not whether its hits are
# relevant: the relevance floor is off there, so every memory that passes the filter is a candidate.
NO_FLOOR = replace(DEFAULT_KNOBS, semantic_floor=-1.0)


def _recall(owner, query: str, knobs: Knobs = DEFAULT_KNOBS, **options) -> list[str]:
    space = space_create_default(owner=owner)
    request = RecallRequest(query=query, **options)
    result = memory_recall(owner=owner, space=space, request=request, knobs=knobs)
    return [hit.memory.content for hit in result.hits]


def _jitter(vector: list[float], rng: random.Random, scale: float = 0.02) -> list[float]:
    noisy = [x + rng.gauss(0, scale) for x in vector]
    norm = math.sqrt(sum(x * x for x in noisy))
    return [x / norm for x in noisy]


class TestFilteredVectorSearch:
    def test_a_selective_filter_does_not_come_back_short_on_the_hnsw_index(self, alice, bob):
        # Bob has 600 memories right next to the query; Alice has three farther away. A plain
        # HNSW scan would visit only Bob's rows (ef_search of them) and drop them all in the
        # owner filter; the iterative scan keeps going until Alice's rows are found.
        rng = random.Random(3)  # noqa: S311 - reproducible test data
        (near,) = embeddings.embed(["weekend plans for the garden and the vegetable beds"])
        bob_space = space_create_default(owner=bob)
        Memory.objects.bulk_create(
            Memory(
                owner=bob, space=bob_space, kind="fact", content=f"bob note {i}", embedding=_jitter(near, rng)
            )
            for i in range(600)
        )
        mine = _memories(
            alice, ["I water the tomatoes on Sundays.", "The shed needs a new roof.", "Buy seeds."]
        )
        with connection.cursor() as cursor:
            # Make the planner take the HNSW index even on this small table: no other index to
            # use, sequential scans priced out. (The test's transaction rolls all of it back.)
            cursor.execute(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'memories_memory'"
                " AND indexname NOT IN ('memory_embedding_hnsw', 'memories_memory_pkey')"
            )
            for (name,) in cursor.fetchall():
                cursor.execute(f'DROP INDEX "{name}"')
            cursor.execute("ANALYZE memories_memory")
            cursor.execute("SET LOCAL enable_seqscan = off")
        found = _recall(alice, "weekend plans for the garden", NO_FLOOR, top_k=10)
        assert sorted(found) == sorted(m.content for m in mine)

    def test_filters_apply_inside_the_query_not_after_it(self, alice):
        _memories(alice, [f"A note about topic {i}" for i in range(40)])
        (tagged,) = _memories(alice, ["The boiler service is due in October."], tags=["house"])
        assert _recall(alice, "note about topic", NO_FLOOR, tags=["house"], top_k=50) == [tagged.content]
        assert _recall(alice, "note about topic", NO_FLOOR, kinds=["episode"], top_k=50) == []


class TestTextSide:
    def test_a_memory_matching_one_of_several_words_is_found(self, alice):
        _memories(alice, ["I enjoy long walks.", "The weather was nice.", "Quarterly tax filing done."])
        assert _recall(alice, "zucchini tax spreadsheet", top_k=1) == ["Quarterly tax filing done."]

    def test_a_rare_word_outweighs_a_common_one(self, alice):
        common = [f"Meeting notes from the Monday meeting number {i}." for i in range(30)]
        _memories(alice, [*common, "Kubernetes upgrade planned."])
        assert _recall(alice, "meeting about kubernetes", top_k=1) == ["Kubernetes upgrade planned."]

    def test_in_a_space_bigger_than_the_sample_the_sample_is_not_the_oldest_saves(self, alice):
        # 1,000 memories, a sample of 100: the 20 that name Zephyr were saved first. Counted in the
        # oldest 100 saves the name is in 20 % of the space and picks no candidates (too common to
        # scan in a big space); in a uniform sample (the first ids; ids are spread here so exactly
        # 2 of the 20 fall among the first 100) it is in 2 %, rare enough to pick its memories.
        space = space_create_default(owner=alice)
        rng = random.Random(3)  # noqa: S311 - reproducible test data
        base = embeddings.embed(["Notes about the garden and the weather."])[0]
        zephyr_slots = set(range(25, 1000, 50))
        other_slots = iter(sorted(set(range(1000)) - zephyr_slots))
        rows = []
        for slot in sorted(zephyr_slots):
            rows.append((slot, f"Zephyr fixed the gate, part {slot}."))
        for i in range(980):
            rows.append((next(other_slots), f"The garden needed water on day {i}."))
        for slot, text in rows:  # the Zephyr rows first: the oldest saves
            Memory.objects.create(
                id=uuid.UUID(int=(slot + 1) << 64),
                owner=alice,
                space=space,
                kind="fact",
                content=text,
                embedding=_jitter(base, rng, scale=0.05),
            )
        knobs = replace(DEFAULT_KNOBS, df_sample=100, vector_pool=1)
        found = _recall(alice, "What did Zephyr fix?", knobs=knobs, top_k=20)
        assert sum("Zephyr" in text for text in found) == 20


class TestBoosts:
    def test_a_named_period_lifts_memories_from_that_period(self, alice):
        may, june = _memories(alice, ["Dentist check-up went fine.", "Dentist check-up went well."])
        Memory.objects.filter(id=may.id).update(occurred_at=datetime(2023, 5, 10, tzinfo=UTC))
        Memory.objects.filter(id=june.id).update(occurred_at=datetime(2023, 6, 10, tzinfo=UTC))
        assert _recall(alice, "dentist check-up in May 2023", top_k=1) == [may.content]
        assert _recall(alice, "dentist check-up in June 2023", top_k=1) == [june.content]

    def test_a_memory_said_by_the_person_the_query_names_comes_first(self, alice):
        _memories(alice, ["Maria: John loves kayaking on the lake.", "John: I love kayaking on the lake."])
        assert _recall(alice, "What does John love?", top_k=1) == ["John: I love kayaking on the lake."]

    def test_the_next_saved_memory_of_the_session_inherits_context(self, alice):
        space = space_create_default(owner=alice)
        start = datetime(2024, 3, 1, 12, tzinfo=UTC)
        texts = [
            "Maria: How often do you go to the gym with your family?",
            "John: Three times a week, it keeps us on track.",
            "Maria: The bakery downtown sells sourdough.",
            "John: My cousin moved to Canada.",
        ]
        for i, (text, vector) in enumerate(zip(texts, embeddings.embed(texts), strict=True)):
            moment = start + timedelta(seconds=10 * i)
            source = Source.objects.create(
                owner=alice, space=space, origin="rest", content=text, content_hash="-", recorded_at=moment
            )
            Memory.objects.create(
                owner=alice, space=space, source=source, kind="fact", content=text, embedding=vector
            )
        found = _recall(alice, "How often does John go to the gym with his family?", top_k=2)
        assert found == [texts[0], texts[1]]

    def test_an_answer_a_few_turns_after_the_matching_question_still_inherits_context(self, alice):
        import uuid

        space = space_create_default(owner=alice)
        start = datetime(2024, 3, 1, 12, tzinfo=UTC)
        session = uuid.uuid4()
        texts = [
            "Maria: What did you name the new puppy, John?",
            "John: Ha, guess!",
            "Maria: No idea, tell me.",
            "John: Biscuit, after my grandma's recipe.",
            "Maria: The bakery downtown sells sourdough.",
            "John: My cousin moved to Canada.",
            "Maria: The weather has been rainy.",
            "John: I repainted the fence.",
            "Maria: The train was late again.",
        ]
        for i, (text, vector) in enumerate(zip(texts, embeddings.embed(texts), strict=True)):
            source = Source.objects.create(
                owner=alice,
                space=space,
                origin="rest",
                content=text,
                content_hash="-",
                session_id=session,
                recorded_at=start + timedelta(seconds=10 * i),
            )
            Memory.objects.create(
                owner=alice, space=space, source=source, kind="fact", content=text, embedding=vector
            )
        query = "What did he name the new puppy?"
        assert texts[3] in _recall(alice, query, top_k=5)
        assert texts[3] not in _recall(alice, query, knobs=replace(DEFAULT_KNOBS, context_decay=0.0), top_k=5)

    def test_a_question_asking_when_prefers_the_memory_that_dates_itself(self, alice):
        undated, dated = _memories(
            alice,
            [
                "Melanie: The pottery class is like therapy for me.",
                "Melanie: Signed up for pottery yesterday.",
            ],
        )
        # The flag the worker sets from the content (timeparse.mentions_time), whatever the kind.
        Memory.objects.filter(id=dated.id).update(names_time=True)
        knobs = replace(DEFAULT_KNOBS, dated_boost=1.0)
        query = "When did Melanie go to the pottery class?"
        assert _recall(alice, query, knobs=replace(knobs, dated_boost=0.0), top_k=1) == [undated.content]
        assert _recall(alice, query, knobs=knobs, top_k=1) == [dated.content]
        # A question that does not ask for a time is ranked as before.
        assert _recall(alice, "Melanie pottery class therapy", knobs=knobs, top_k=1) == [undated.content]

    def test_expansion_follows_entities_named_in_the_query(self, alice):
        space = space_create_default(owner=alice)
        (linked,) = _memories(alice, ["Her birthday is on the 3rd of March."])
        _memories(alice, ["The birthday cake recipe needs eggs.", "Birthday parties are tiring."])
        ingrid = Entity.objects.create(
            owner=alice, space=space, name="Ingrid", normalized_name="ingrid", type="Person"
        )
        link(linked, ingrid)
        assert _recall(alice, "When is Ingrid's birthday?", top_k=1, expand_entities=True) == [linked.content]


def _saves(owner, turns: list[list[str]]) -> list[list[Memory]]:
    """One save (a Source holding the statements joined) per inner list, each statement a memory of
    it, as the worker stores a long turn split into statements."""
    space = space_create_default(owner=owner)
    start = datetime(2024, 3, 1, 12, tzinfo=UTC)
    saved = []
    for i, statements in enumerate(turns):
        source = Source.objects.create(
            owner=owner,
            space=space,
            origin="rest",
            content=" ".join(statements),
            content_hash="-",
            recorded_at=start + timedelta(days=i),
        )
        saved.append(
            [
                Memory.objects.create(
                    owner=owner, space=space, source=source, kind="fact", content=text, embedding=vector
                )
                for text, vector in zip(statements, embeddings.embed(statements), strict=True)
            ]
        )
    return saved


class TestWhoAndWhichSave:
    def test_a_first_person_question_prefers_what_the_person_said(self, alice):
        (theirs,), (mine,) = _saves(
            alice,
            [["Caroline: We finally moved into the new flat in Lisbon."], ["We moved to a flat in Porto."]],
        )
        query = "Where do I live after we moved into the new flat?"
        off = replace(DEFAULT_KNOBS, own_boost=0.0)
        assert _recall(alice, query, knobs=off, top_k=1) == [theirs.content]
        assert _recall(alice, query, knobs=replace(DEFAULT_KNOBS, own_boost=0.5), top_k=1) == [mine.content]

    def test_a_second_person_question_prefers_what_the_assistant_said_in_every_statement(self, alice):
        # The assistant's turn is split: its second statement has no "Assistant:" of its own, and is
        # still the assistant's (the speaker is read off the save).
        _said, (_opening, answer), (asked,) = _saves(
            alice,
            [
                ["User: Any ideas for a weekend in Lisbon?"],
                ["Assistant: Here are some ideas.", "A tram ride on line 28 through Alfama is a classic."],
                ["User: I recommend the tram ride for Alfama to everyone."],
            ],
        )
        query = "Which tram ride did you recommend for Alfama?"
        off = replace(DEFAULT_KNOBS, own_boost=0.0)
        on = replace(DEFAULT_KNOBS, own_boost=0.5)
        assert _recall(alice, query, knobs=off, top_k=1) == [asked.content]
        assert _recall(alice, query, knobs=on, top_k=1) == [answer.content]

    def test_a_long_save_does_not_fill_the_top_with_its_statements(self, alice):
        (first, second, third), (other,) = _saves(
            alice,
            [
                [
                    "Sourdough needs a starter fed with flour and water.",
                    "Sourdough bread rises slowly with a starter.",
                    "A sourdough starter is flour and water left to ferment.",
                ],
                ["Rye bread is dense and keeps for a week."],
            ],
        )
        query = "How do I make sourdough bread with a starter?"
        off = _recall(alice, query, knobs=replace(DEFAULT_KNOBS, sibling_share=1.0), top_k=4)
        assert off.index(other.content) == 3
        on = _recall(alice, query, knobs=replace(DEFAULT_KNOBS, sibling_share=0.25), top_k=4)
        assert on.index(other.content) < 3
        # Nothing is dropped: the other statements of the save still come, behind.
        assert set(on) == {first.content, second.content, third.content, other.content}

    def test_a_question_about_now_prefers_the_newer_statement(self, alice):
        (older,), (newer,) = _saves(
            alice,
            [
                ["I keep my old sneakers in the hallway closet."],
                ["Moved the sneakers to a box under the bed."],
            ],
        )
        # The recency rule alone: "Moved the sneakers ..." says a change, which `newest_said_change`
        # puts first for both questions (TestNewestChangeFirst).
        on = replace(DEFAULT_KNOBS, recency_boost=1.0, newest_said_change=False)
        now = "Where do I currently keep my old sneakers?"
        assert _recall(alice, now, knobs=replace(on, recency_boost=0.0), top_k=1) == [older.content]
        assert _recall(alice, now, knobs=on, top_k=1) == [newer.content]
        # A question that does not ask about now is ranked as before.
        assert _recall(alice, "Where do I keep my old sneakers?", knobs=on, top_k=1) == [older.content]

    def test_a_restated_claim_ranks_its_newer_statement_first_and_the_older_when_asked_then(self, alice):
        # The same claim with a new value, said in a later save: "how long" asks for what holds now,
        # "at first" for the earlier state. Neither question names "now" (the recency rule).
        (older,), (_other,), (newer,) = _saves(
            alice,
            [
                ["I have been using my Fitbit Charge 3 for 6 months now."],
                ["My Fitbit tracks my steps every day."],
                ["I just realized I have been using my Fitbit Charge 3 for 9 months now."],
            ],
        )
        on = replace(DEFAULT_KNOBS, restated_share=0.5, recency_boost=0.0, newest_said_share=0.0)
        off = replace(on, restated_share=1.0)
        query = "How long have I been using my Fitbit Charge 3?"
        assert _recall(alice, query, knobs=off, top_k=1) == [older.content]
        assert _recall(alice, query, knobs=on, top_k=1) == [newer.content]
        earlier = "How long had I been using my Fitbit Charge 3 at first?"
        assert _recall(alice, earlier, knobs=on, top_k=1) == [older.content]

    def test_a_claim_not_said_again_is_not_restated(self, alice):
        # Two saves on one topic that say different things are not one claim restated.
        (first,), (_second,) = _saves(
            alice, [["I keep my bike in the garage."], ["I bought a new helmet for cycling."]]
        )
        on = replace(DEFAULT_KNOBS, restated_share=0.5, recency_boost=0.0)
        off = replace(on, restated_share=1.0)
        query = "Where do I keep my bike?"
        assert _recall(alice, query, knobs=on) == _recall(alice, query, knobs=off)
        assert _recall(alice, query, knobs=on, top_k=1) == [first.content]

    def test_a_request_for_advice_finds_the_persons_words_not_every_thanks_for_advice(self, alice):
        # The person's own turns that only share the request's frame ("advice", "tips") with the
        # question come before the turn it is about when the frame's words count as text.
        (_thanks,), (_tips,), (baking,) = _saves(
            alice,
            [
                ["User: Thanks for the advice! I'll keep those tips in mind for my model ship."],
                ["User: That's great advice on gym bags, thanks."],
                ["User: I've been experimenting with turbinado sugar in my baking lately."],
            ],
        )
        query = "My chocolate chip cookies need something extra. Any advice?"
        framed = replace(DEFAULT_KNOBS, drop_request_frame=False)
        assert _recall(alice, query, knobs=framed, top_k=1) != [baking.content]
        unframed = replace(DEFAULT_KNOBS, drop_request_frame=True)
        assert _recall(alice, query, knobs=unframed, top_k=1) == [baking.content]

    def test_a_named_period_finds_what_was_said_in_it(self, alice):
        may, june = _memories(
            alice, ["The dentist said my teeth look fine.", "The dentist said my teeth look great."]
        )
        # Statements with no world time of their own, said on two dates.
        Memory.objects.filter(id=may.id).update(stated_at=datetime(2023, 5, 10, tzinfo=UTC))
        Memory.objects.filter(id=june.id).update(stated_at=datetime(2023, 6, 10, tzinfo=UTC))
        query = "What did the dentist say in May 2023?"
        on = replace(DEFAULT_KNOBS, period_said=True, time_boost=0.5)
        assert _recall(alice, query, knobs=on, top_k=1) == [may.content]
        assert _recall(alice, "What did the dentist say in June 2023?", knobs=on, top_k=1) == [june.content]

    def test_the_persons_own_floor_still_finds_nothing_for_an_off_topic_question(self, alice):
        _saves(alice, [["I moved to Berlin last year."], ["I report to Dana."], ["Peanuts make me sick."]])
        for query in ("What is my kubernetes pod eviction policy?", "What's my zzqx flibbertigibbet?"):
            assert _recall(alice, query, top_k=5) == [], query
        # ... while a question in other words than the note (cosine 0.22) finds it under the lower floor.
        query = "Who is my manager?"
        no_slots = replace(DEFAULT_KNOBS, slot_weight=0.0)
        assert _recall(alice, query, knobs=replace(no_slots, own_floor=0.3)) == []
        assert _recall(alice, query, knobs=no_slots, top_k=1) == ["I report to Dana."]
        # The slot's words find it whatever the floor: "report" is how a boss is often said.
        assert _recall(alice, query, knobs=replace(DEFAULT_KNOBS, own_floor=0.3), top_k=1) == [
            "I report to Dana."
        ]

    def test_a_newcomers_slot_questions_find_the_current_holder_first(self, alice):
        # Issue 40 section 0's notes, as the update engine leaves them: the old home superseded by
        # the move, the job said beside it current. Recall must put the holder first whatever the
        # words (the move shares none with "Where do I live?", cosine 0.32; the girlfriend none with
        # "partner", 0.25); whether the answerer then states it is answer.py's relevance test.
        (old_home,), (moved,), (commute,), (job,), (partner,), *_crowd = _saves(
            alice,
            [
                ["I live in Lisbon"],
                ["I moved to Porto last month"],
                ["the commute to Fieldnote is now by train."],
                ["I work as a product designer at Fieldnote."],
                ["My girlfriend Ana is a nurse."],
                ["User: Can you suggest a good pasta recipe?"],
                ["Assistant: A simple carbonara needs eggs, pecorino and guanciale."],
                ["Caroline: I went to the LGBTQ support group yesterday."],
            ],
        )
        Memory.objects.filter(id=old_home.id).update(superseded_at=datetime(2024, 3, 2, 12, tzinfo=UTC))
        for query, holder in (
            ("Where do I live?", moved),
            ("Which city am I in?", moved),
            ("Where do I work?", job),
            ("What is my job?", job),
            ("Who is my partner?", partner),
        ):
            assert _recall(alice, query, top_k=1) == [holder.content], query
        assert commute.content not in _recall(alice, "Who is my partner?")

    def test_who_a_question_is_about(self):
        assert asks_about("Where do I live?") == (True, False)
        assert asks_about("What's my sister's name?") == (True, False)
        assert asks_about("What did you suggest for dinner?") == (False, True)
        assert asks_about("Can you remind me what you said?") == (True, True)
        assert asks_about("What did Caroline paint?") == (False, False)
        # A request made to the agent is not a question about what it said: these are about the
        # person's taste and plans.
        assert asks_about("Can you recommend a show or movie for me to watch tonight?") == (True, False)
        assert asks_about("I want to buy a NAS. What do you think?") == (True, False)
        assert asks_about("Do you think it might be my living room?") == (True, False)
        # ... while one about the conversation with it is, request or not.
        assert asks_about("Can you remind me of the restaurant you recommended?") == (True, True)
        assert asks_about("I was wondering if you could remind me of the brand.") == (True, True)
        # "our" is the person's first person too (the lexicon's persons: we, us, our).
        assert asks_about("Going back to our previous chat: which venue was last?") == (True, True)

    def test_questions_about_now_are_told_apart(self):
        for query in (
            "Where do I currently keep my sneakers?",
            "How many have I added so far?",
            "Do I still run?",
        ):
            assert asks_now(query), query
        for query in ("Where did I keep my sneakers at first?", "When did Caroline paint the sunrise?"):
            assert not asks_now(query), query

    def test_questions_in_the_present_tense_are_told_apart(self):
        for query in (
            "How many plants do I have on the balcony?",
            "How long have I been learning the cello?",
            "What's the name of the dentist I see?",
            "Which gym am I a member of?",
            "How many books are on my shelf?",
            "Does my sister live in Leeds?",
        ):
            assert asks_present(query), query
        for query in (
            "When did I last see the dentist?",
            "How many plants did I have before the move?",
            "What was my first car?",
            "How many books were on my shelf at first?",
            "Where do I initially keep my bike?",  # an earlier state, whatever the tense
            "Tell me a joke",  # no tense at all
        ):
            assert not asks_present(query), query

    def test_questions_about_an_earlier_state_are_told_apart(self):
        for query in (
            "Where do I initially keep my old sneakers?",
            "Where did I keep my sneakers at first?",
            "How many baseballs did I add in the first three months?",
            "What did I use to drive?",
            "How many did I catch on the earlier trip?",
            # "First", "original" in a question in the past tense, but for "the first ...".
            "Which gym was I a member of first?",
            "How much did the removal company first quote us?",
            "What was my friend Leah's original due date?",
            "Wie hieß unser erster Babysitter?",
            "¿Cuál fue mi primer coche?",
            "Quelle était ma première voiture ?",
        ):
            assert asks_then(query), query
        for query in (
            "Where do I currently keep my sneakers?",
            "What was the first issue with my car?",
            "What do I use to clean my shoes?",
            # A first in a series of events, not the first value of something that changed.
            "What was the first thing I bought at the market?",
            "Which gym am I a member of now?",
            "When is the first match of the season?",
        ):
            assert not asks_then(query), query


OFF = replace(DEFAULT_KNOBS, newest_said_share=0.0)
# "Newest said first" as it was before `newest_said_change`.
WITHOUT_CHANGE = replace(DEFAULT_KNOBS, newest_said_change=False)


# A value said plainly, then weeks later a new one said in passing inside a longer message: on meaning
# the plain statement ranks first.
_COINS_THEN = "I have 37 pre-1920 American coins in my collection."
_COINS_NOW = (
    "User: I'm looking to learn more about error coins with misprinted dates. By the way, I just added a"
    " 1915-S Barber quarter to my collection of pre-1920 American coins, so that makes 38. Can you tell"
    " me which misprints are worth the most?"
)
_COINS_FILLER = ["My sister collects stamps from Norway.", "Coin shows are held in the town hall in May."]


class TestNewestSaidFirst:
    def test_the_persons_newest_answer_takes_the_first_place_an_answer_held(self, alice):
        _saves(alice, [[_COINS_THEN], [_COINS_FILLER[0]], [_COINS_NOW], [_COINS_FILLER[1]]])
        query = "How many pre-1920 American coins do I have in my collection?"
        off = _recall(alice, query, knobs=OFF)
        assert off.index(_COINS_THEN) < off.index(_COINS_NOW)
        on = _recall(alice, query)
        assert on.index(_COINS_NOW) == off.index(_COINS_THEN)
        assert on.index(_COINS_THEN) == off.index(_COINS_NOW)
        # Only the two answers traded places: every other hit is where it was.
        assert [c for c in on if c not in (_COINS_THEN, _COINS_NOW)] == [
            c for c in off if c not in (_COINS_THEN, _COINS_NOW)
        ]
        # A short recall puts first what a long one does.
        assert _recall(alice, query, top_k=1) == [_COINS_NOW]
        # The scores still fall from first to last, for a caller that sorts by them.
        request = RecallRequest(query=query)
        hits = memory_recall(owner=alice, space=space_create_default(owner=alice), request=request).hits
        scores = [hit.score for hit in hits]
        assert scores == sorted(scores, reverse=True)

    def test_the_statements_of_one_conversation_keep_their_ranked_order(self, alice):
        # One save's two statements were said together: neither is an update of the other.
        ((plain, passing),) = _saves(alice, [[_COINS_THEN, _COINS_NOW]])
        for memory in (plain, passing):
            memory.stated_at = datetime(2024, 3, 1, 12, tzinfo=UTC)
            memory.save(update_fields=["stated_at"])
        query = "How many pre-1920 American coins do I have in my collection?"
        assert _recall(alice, query) == _recall(alice, query, knobs=OFF)

    def test_a_question_about_the_earlier_state_puts_the_oldest_answer_first(self, alice):
        # Said the other way round: the older value in passing, the newer plainly.
        older = (
            "User: Can you recommend a good album for coins? By the way, I had 12 pre-1920 American"
            " coins in my collection back then, mostly Lincoln cents. What size should the pages be?"
        )
        newer = "I have 37 pre-1920 American coins in my collection."
        _saves(alice, [[older], [_COINS_FILLER[0]], [newer]])
        first = "How many pre-1920 American coins did I have in my collection at first?"
        assert _recall(alice, first, knobs=OFF, top_k=1) == [newer]
        assert _recall(alice, first, top_k=1) == [older]
        assert _recall(alice, "How many pre-1920 American coins do I have in my collection?", top_k=1) == [
            newer
        ]

    def test_a_short_question_needs_only_its_noun_not_its_quantity_words(self, alice):
        # "How many" asks for the value; the statement that gives it says "a third bike".
        old = "I own two bikes, a road bike and a gravel bike."
        new = (
            "User: My neighbour sold me his old commuter, so that's a third bike in the hallway now."
            " Anyway, how do I true a wheel that wobbles?"
        )
        _saves(alice, [[old], [_COINS_FILLER[0]], [new]])
        query = "How many bikes do I own?"
        assert _recall(alice, query, knobs=OFF, top_k=1) == [old]
        strict = replace(DEFAULT_KNOBS, newest_said_words=2, newest_said_frame=False)
        assert _recall(alice, query, knobs=strict, top_k=1) == [old]
        assert _recall(alice, query, top_k=1) == [new]

    def test_what_an_apostrophe_leaves_is_no_word_of_the_question(self, alice):
        # "What's" gave the question a word "s", which every "it's" and "Geoff's" held: a later turn
        # naming only the sofa counted as an answer and went first.
        old = "We pay £68 a month for the corner sofa."
        chat = "User: It's a lovely sofa, it's so comfy and it's Geoff's favourite seat."
        _saves(alice, [[old], [_COINS_FILLER[0]], [chat]])
        query = "What's the monthly payment on our sofa?"
        assert _recall(alice, query, top_k=1) == [old]
        assert matched_words(chat, query_words(query)) == ["sofa"]

    def test_history_keeps_its_place_below_what_holds(self, alice):
        # A newer answer that no longer holds (the person took it back) is history, not the answer.
        ((then,), _filler, (now,)) = _saves(alice, [[_COINS_THEN], [_COINS_FILLER[0]], [_COINS_NOW]])
        now.superseded_at = timezone.now()
        now.superseded_by = then
        now.save(update_fields=["superseded_at", "superseded_by"])
        query = "How many pre-1920 American coins do I have in my collection?"
        assert _recall(alice, query, include_history=True) == _recall(
            alice, query, knobs=OFF, include_history=True
        )
        assert _recall(alice, query, include_history=True, top_k=1) == [_COINS_THEN]

    def test_what_someone_else_said_is_not_reordered(self, alice):
        # Two people in a chat saying alike things is a conversation, not an update of the person's.
        _saves(alice, [["Caroline: " + _COINS_THEN], [_COINS_FILLER[0]], ["Caroline: " + _COINS_NOW[6:]]])
        query = "How many pre-1920 American coins does Caroline have in her collection?"
        assert _recall(alice, query) == _recall(alice, query, knobs=OFF)

    def test_a_pinned_answer_keeps_its_place(self, alice):
        ((then,), _filler, _now) = _saves(alice, [[_COINS_THEN], [_COINS_FILLER[0]], [_COINS_NOW]])
        then.pinned = True
        then.save(update_fields=["pinned"])
        assert _recall(alice, "How many pre-1920 American coins do I have in my collection?", top_k=1) == [
            _COINS_THEN
        ]

    def test_a_named_period_orders_the_answers_said_in_it_and_no_other(self, alice):
        ((then,), (filler,), (now,)) = _saves(alice, [[_COINS_THEN], [_COINS_FILLER[0]], [_COINS_NOW]])
        for memory, day in ((then, 4), (filler, 10), (now, 25)):
            memory.stated_at = datetime(2024, 3, day, 12, tzinfo=UTC)
            memory.save(update_fields=["stated_at"])
        at = datetime(2024, 5, 20, 12, tzinfo=UTC)
        # Both answers were said in March: the newer first, as for a question that names no period.
        in_march = "How many pre-1920 American coins did I have in my collection in March 2024?"
        assert _recall(alice, in_march, at=at, top_k=1) == [_COINS_NOW]
        # Said on 25 March, the newer is not an answer about 5 March: the answers keep their order.
        day = "How many pre-1920 American coins did I have in my collection on 5 March 2024?"
        assert _recall(alice, day, at=at) == _recall(alice, day, knobs=OFF, at=at)


# A value said plainly, then a new one said in other words: the new statement shares one word of the
# question ("plants") and says a change ("now"), so it is no answer by words.
_PLANTS_THEN = "I have 12 plants on my balcony."
_PLANTS_NOW = (
    "User: The storm last night knocked two pots over the railing, so I'm down to ten plants now."
    " How do I weigh the others down?"
)
_PLANTS_QUERY = "How many plants do I have on my balcony?"


class TestNewestChangeFirst:
    """`Knobs.newest_said_change`: the person's newest statement that says a change of what the
    question asks about goes just above the answers, when it was said after all of them."""

    def test_a_change_said_in_other_words_goes_just_above_the_answers(self, alice):
        _saves(alice, [[_PLANTS_THEN], [_COINS_FILLER[0]], [_PLANTS_NOW], [_COINS_FILLER[1]]])
        off = _recall(alice, _PLANTS_QUERY, knobs=WITHOUT_CHANGE)
        assert off.index(_PLANTS_THEN) < off.index(_PLANTS_NOW)
        on = _recall(alice, _PLANTS_QUERY)
        # The change moved up to the answer's place; everything else kept its order below it.
        expected = [c for c in off if c != _PLANTS_NOW]
        expected.insert(off.index(_PLANTS_THEN), _PLANTS_NOW)
        assert on == expected
        assert _recall(alice, _PLANTS_QUERY, top_k=1) == [_PLANTS_NOW]

    def test_a_later_mention_that_says_no_change_stays_where_it_ranked(self, alice):
        mention = "User: Which plants like shade? My balcony gets little sun in the afternoon."
        _saves(alice, [[_PLANTS_THEN], [_COINS_FILLER[0]], [mention]])
        assert _recall(alice, _PLANTS_QUERY) == _recall(alice, _PLANTS_QUERY, knobs=WITHOUT_CHANGE)
        assert _recall(alice, _PLANTS_QUERY, top_k=1) == [_PLANTS_THEN]

    def test_a_change_said_before_the_newest_answer_does_not_move(self, alice):
        # The change came first and the plain statement after it: the plain one holds now.
        _saves(alice, [[_PLANTS_NOW], [_COINS_FILLER[0]], [_PLANTS_THEN]])
        assert _recall(alice, _PLANTS_QUERY, top_k=1) == [_PLANTS_THEN]

    def test_a_question_about_the_earlier_state_is_not_moved(self, alice):
        _saves(alice, [[_PLANTS_THEN], [_COINS_FILLER[0]], [_PLANTS_NOW]])
        first = "How many plants did I have on my balcony at first?"
        assert _recall(alice, first, top_k=1) == [_PLANTS_THEN]

    def test_the_cue_is_not_the_shared_word(self, alice):
        # "current" is the question's and "currently" a cue: that alone makes no change of the rate.
        then = "My current hourly rate for illustration work is 45 euros."
        later = "User: I'm currently reading a novel about a lighthouse keeper. Is it any good?"
        _saves(alice, [[then], [_COINS_FILLER[0]], [later]])
        query = "What is my current hourly rate?"
        assert _recall(alice, query) == _recall(alice, query, knobs=WITHOUT_CHANGE)

    def test_a_change_in_another_language(self, alice):
        then = "Ich habe 12 Pflanzen auf meinem Balkon."
        now = (
            "User: Der Sturm hat zwei Töpfe umgeworfen, jetzt sind es nur noch zehn Pflanzen."
            " Wie beschwere ich die anderen?"
        )
        _saves(alice, [[then], [_COINS_FILLER[0]], [now]])
        query = "Wie viele Pflanzen habe ich auf meinem Balkon?"
        assert _recall(alice, query, knobs=WITHOUT_CHANGE, top_k=1) == [then]
        assert _recall(alice, query, top_k=1) == [now]

    @pytest.mark.parametrize(
        "decoy",
        [
            # A wish or a plan, a question, a negated change: no change of what holds.
            "User: I'm thinking of switching all my plants to self-watering pots next year.",
            "User: If we moved to a bigger flat, I would get 20 more plants.",
            "User: I haven't sold any of my 12 plants.",
            "User: Since June my 12 plants have stayed the same.",
            "User: Should I move the plants indoors now that it is getting cold? It hit 3 degrees.",
            "User: I haven't changed anything about my 12 plants since June.",
            "User: I don't water the plants every day now, only twice a week.",
            # Someone else's change, for a question about the person's own.
            "User: My sister just moved her 30 plants into her new greenhouse in Leeds.",
            # A change with no value: the count still holds.
            "User: I changed the soil in my plants now that spring is here.",
        ],
    )
    def test_a_later_mention_that_changes_no_value_of_the_persons_stays_below(self, alice, decoy):
        _saves(alice, [[_PLANTS_THEN], [_COINS_FILLER[0]], [decoy]])
        assert _recall(alice, _PLANTS_QUERY) == _recall(alice, _PLANTS_QUERY, knobs=WITHOUT_CHANGE)
        assert _recall(alice, _PLANTS_QUERY, top_k=1) == [_PLANTS_THEN]

    def test_the_change_may_name_its_subject_in_the_sentence_before(self, alice):
        then = "My friend Priya works as a nurse at St Mary's hospital."
        now = (
            "User: Had lunch with Priya on Sunday, she looked so relaxed. She switched to Kingston"
            " Clinic in March and loves the shorter shifts. Anyway, can you suggest a good podcast?"
        )
        _saves(alice, [[then], [_COINS_FILLER[0]], [now]])
        query = "Where does Priya work?"
        assert _recall(alice, query, knobs=WITHOUT_CHANGE, top_k=1) == [then]
        assert _recall(alice, query, top_k=1) == [now]

    def test_an_ending_is_a_change_without_a_new_value(self, alice):
        then = "My dad works at the post office in Kendal, he's been a counter clerk there for years."
        now = (
            "User: Big family news this weekend. Dad finally handed in his notice and he's retired as of"
            " Friday, so there was a little do at the pub. Any ideas for a retirement present?"
        )
        _saves(alice, [[then], [_COINS_FILLER[0]], [now]])
        query = "Is my dad still working at the post office?"
        assert _recall(alice, query, knobs=WITHOUT_CHANGE, top_k=1) == [then]
        assert _recall(alice, query, top_k=1) == [now]

    def test_a_word_of_the_languages_grammar_is_no_shared_word(self, alice):
        then = "Ich habe 12 Pflanzen auf meinem Balkon."
        later = "User: Ich habe jetzt einen neuen Job in Berlin."
        _saves(alice, [[then], [_COINS_FILLER[0]], [later]])
        query = "Wie viele Pflanzen habe ich auf meinem Balkon?"
        assert _recall(alice, query) == _recall(alice, query, knobs=WITHOUT_CHANGE)

    def test_what_someone_else_said_is_not_moved(self, alice):
        _saves(alice, [["Caroline: " + _PLANTS_THEN], [_COINS_FILLER[0]], ["Caroline: " + _PLANTS_NOW[6:]]])
        query = "How many plants does Caroline have on her balcony?"
        assert _recall(alice, query) == _recall(alice, query, knobs=WITHOUT_CHANGE)


# A value said plainly; a later turn names the topic and states nothing new; the new value comes in
# a turn that shares no word of the question and says the change in its own words.
_SHELTER_THEN = "I volunteer at the animal shelter one afternoon a week."
_SHELTER_MENTION = (
    "User: The kittens at the animal shelter are adorable and one of them follows me around. How young"
    " can they be adopted?"
)
_SHELTER_NOW = (
    "User: Long week. They were short of helpers for walking the rescue dogs, so I've taken on"
    " Thursdays as well. Two afternoons a week now."
)
_SHELTER_QUERY = "How often do I volunteer at the animal shelter?"
WITHOUT_MEANING = replace(DEFAULT_KNOBS, change_by_meaning=0.0)


class TestChangeByMeaning:
    """`Knobs.change_by_meaning`: a later turn of the person's that says a change in words other
    than the question's counts as the change when it is close in meaning to an answer, was said
    after it, and no answer says a change already."""

    def test_a_change_in_other_words_close_to_the_answer_goes_first(self, alice):
        _saves(alice, [[_SHELTER_THEN], [_COINS_FILLER[0]], [_SHELTER_NOW], [_SHELTER_MENTION]])
        # Without it, the newest answer by words (the kittens) leads: it names the topic, says nothing.
        assert _recall(alice, _SHELTER_QUERY, knobs=WITHOUT_MEANING, top_k=1) != [_SHELTER_NOW]
        assert _recall(alice, _SHELTER_QUERY, top_k=1) == [_SHELTER_NOW]

    def test_a_change_said_before_the_answer_does_not_move(self, alice):
        _saves(alice, [[_SHELTER_NOW[6:]], [_COINS_FILLER[0]], [_SHELTER_THEN]])
        assert _recall(alice, _SHELTER_QUERY, top_k=1) == [_SHELTER_THEN]

    def test_a_question_about_the_earlier_state_is_not_moved(self, alice):
        _saves(alice, [[_SHELTER_THEN], [_COINS_FILLER[0]], [_SHELTER_NOW]])
        query = "How often did I volunteer at the animal shelter at first?"
        assert _recall(alice, query, top_k=1) == [_SHELTER_THEN]

    @pytest.mark.parametrize(
        "later",
        [
            # Close in meaning, but no change with a value: a plan, a question, a negated change.
            "User: I'm thinking of taking on a second afternoon with the rescue dogs next year.",
            "User: Should I take on a second afternoon walking the rescue dogs now that it's spring?",
            "User: I haven't taken on any more afternoons with the rescue dogs.",
            # Someone else's change, for a question about the person's own.
            "User: My sister now walks rescue dogs two afternoons a week in Leeds.",
        ],
    )
    def test_a_close_turn_that_says_no_change_of_the_persons_stays_where_it_ranked(self, alice, later):
        _saves(alice, [[_SHELTER_THEN], [_COINS_FILLER[0]], [later]])
        assert _recall(alice, _SHELTER_QUERY) == _recall(alice, _SHELTER_QUERY, knobs=WITHOUT_MEANING)
        assert _recall(alice, _SHELTER_QUERY, top_k=1) == [_SHELTER_THEN]

    def test_when_an_answer_says_a_change_the_newest_value_is_among_the_answers(self, alice):
        # The answers by words hold a change already: a later change of something else close in
        # meaning ("the rescue centre now ...") is not taken for one.
        newer = "User: The animal shelter was short of help, so I volunteer there two afternoons now."
        other = "User: The rescue centre now walks its dogs on Sundays too, with 4 new kennels."
        _saves(alice, [[_SHELTER_THEN], [_COINS_FILLER[0]], [newer], [other]])
        assert _recall(alice, _SHELTER_QUERY, top_k=1) == [newer]

    def test_a_change_of_something_else_that_shares_no_word_with_the_answer_stays(self, alice):
        # Close in meaning to "I volunteer at the animal shelter ...", and a change with a value, but
        # of the place's dogs and kennels: nothing of the answer's is named in it.
        other = "User: The rescue centre now walks its dogs on Sundays too, with 4 new kennels."
        _saves(alice, [[_SHELTER_THEN], [_COINS_FILLER[0]], [other]])
        assert _recall(alice, _SHELTER_QUERY, top_k=1) == [_SHELTER_THEN]


# A value said plainly, then weeks later the person asks about the topic and states nothing: the
# question shares the question's words and was said last.
_EPISODES_THEN = (
    "My friend Dele and I have a podcast about old horror films, we just published our ninth episode."
)
_EPISODES_ASKED = "User: Do podcast episodes do better if they're under an hour?"
_EPISODES_QUERY = "How many episodes of our podcast are out?"
WITHOUT_ASKING = replace(DEFAULT_KNOBS, asking_below=False)


class TestAskingBelow:
    """`Knobs.asking_below`: the person's turns that only ask go below what was stated."""

    def test_a_later_question_about_the_topic_goes_below_the_statement(self, alice):
        _saves(alice, [[_EPISODES_THEN], [_COINS_FILLER[0]], [_EPISODES_ASKED], [_COINS_FILLER[1]]])
        off = _recall(alice, _EPISODES_QUERY, knobs=WITHOUT_ASKING)
        # Without the rule the question, said last and sharing the words, is the newest "answer".
        assert off[0] == _EPISODES_ASKED
        on = _recall(alice, _EPISODES_QUERY)
        assert on[0] == _EPISODES_THEN
        # It is still found, at the end of the window; the others keep their order.
        assert on[-1] == _EPISODES_ASKED
        assert on[:-1] == [c for c in off if c != _EPISODES_ASKED]
        request = RecallRequest(query=_EPISODES_QUERY)
        hits = memory_recall(owner=alice, space=space_create_default(owner=alice), request=request).hits
        scores = [hit.score for hit in hits]
        assert scores == sorted(scores, reverse=True)

    @pytest.mark.parametrize(
        "said",
        [
            "User: We just put out our tenth podcast episode. Do episodes do better when they're short?",
            # A new value told inside a question is a statement too.
            "User: Now that our podcast is at 12 episodes, should we put the episodes on YouTube?",
        ],
    )
    def test_a_question_with_a_statement_in_it_stays(self, alice, said):
        _saves(alice, [[_EPISODES_THEN], [_COINS_FILLER[0]], [said]])
        assert _recall(alice, _EPISODES_QUERY) == _recall(alice, _EPISODES_QUERY, knobs=WITHOUT_ASKING)
        assert _recall(alice, _EPISODES_QUERY, top_k=1) == [said]

    @pytest.mark.parametrize(
        "query",
        [
            "What did I ask about podcast episodes?",
            "Which question did I have about our podcast episodes?",
            "What did you tell me about the length of podcast episodes?",
            "Remind me what we said about podcast episodes.",
        ],
    )
    def test_a_question_about_what_was_asked_keeps_the_order(self, alice, query):
        _saves(alice, [[_EPISODES_THEN], [_COINS_FILLER[0]], [_EPISODES_ASKED]])
        assert _recall(alice, query) == _recall(alice, query, knobs=WITHOUT_ASKING)

    def test_someone_elses_question_is_not_moved(self, alice):
        # In a chat of two people, a question of the other's is not the person's.
        asked = "Assistant: Do podcast episodes do better if they're under an hour?"
        later = "User: I listen to two audio dramas a week on the train."
        _saves(alice, [[_EPISODES_THEN], [_COINS_FILLER[0]], [asked], [later]])
        off = _recall(alice, _EPISODES_QUERY, knobs=WITHOUT_ASKING)
        # Something ranks below it, so a move would show.
        assert off.index(asked) < off.index(later)
        assert _recall(alice, _EPISODES_QUERY) == off

    def test_which_turns_only_ask(self):
        for text in (
            "User: Do podcast episodes do better if they're under an hour?",
            "Thanks! Is melatonin safe to take every night?",
            "Quick question: when should the baby be weighed again?",
            "User: ¿Cuántas veces a la semana debería regar las plantas?",
            "Wie oft sollte ich die Pflanzen gießen? Danke!",
            "Should we keep the deposit in an easy access account, is that mad?!",
            "Morning. (Any tips for learning the alto part?)",
        ):
            assert only_asks(text), text
        for text in (
            "User: We just put out our tenth episode. Any tips?",
            "I take melatonin every night.",
            "Thanks!",
            "Ich gieße die Pflanzen zweimal pro Woche. Ist das genug?",
            # A value told inside a question: a number, a place, a name.
            "Can you suggest a gift for my wife, who just turned 40?",
            "¿Qué le regalo a mi hermana ahora que vive en Sevilla?",
            "Est-ce normal de payer autant maintenant que je gagne 2 700 euros par mois ?",
        ):
            assert not only_asks(text), text


class TestAskingOwnValues:
    """`Knobs.asking_own_values`: a question whose only values are the question's own tells
    nothing new of it."""

    _THEN = "My daughter Mia studies marine biology at the university in Bristol."
    _ASKED = "User: How often should I visit my daughter at university?"
    _QUERY = "Where is my daughter at university?"

    def test_a_question_that_only_names_the_topic_goes_below(self, alice):
        _saves(alice, [[self._THEN], [_COINS_FILLER[0]], [self._ASKED]])
        # Off by default since the attack (docs/retrieval.md, "Update order, seventh round").
        knobs = replace(DEFAULT_KNOBS, asking_own_values=True)
        # "my daughter" is a value to the update engine: without the rule the question stays, and
        # said last it is the newest answer.
        assert _recall(alice, self._QUERY, top_k=1) == [self._ASKED]
        assert _recall(alice, self._QUERY, knobs=knobs, top_k=1) == [self._THEN]

    def test_which_values_are_the_questions_own(self):
        topic = frame_of(self._QUERY).values
        assert only_asks(self._ASKED, topic)
        assert not only_asks(self._ASKED)
        # A value the question does not hold is told: a number, a name, another person.
        for told in (
            "User: How often should I visit my daughter now that she's 19?",
            "User: Should I visit my daughter in Exeter or wait for her to come home?",
            "User: Can my son visit my daughter at university?",
        ):
            assert not only_asks(told, topic), told


# A thing said by its name, then a change that names it again and what replaced it, in other words
# than the question's.
_BIKE_THEN = "I ride a Triumph Bonneville motorbike at the weekends."
_BIKE_NOW = "User: Sold the Triumph last month, it's a Ducati Scrambler now. Any tips for the first service?"
_BIKE_QUERY = "Which motorbike do I ride?"
# Off by default since the attack (docs/retrieval.md, "Update order, seventh round"); its mechanism
# is tested with it on.
# The referent route alone: without `change_by_meaning`, which finds some of the same changes by
# their closeness to the answer.
WITH_REFERENT = replace(DEFAULT_KNOBS, change_by_referent=True, change_by_meaning=0.0)


class TestChangeByReferent:
    """`Knobs.change_by_referent`: a later change that names what an earlier answer named is about
    the question too."""

    @pytest.mark.parametrize(
        ("then", "now", "query"),
        [
            (_BIKE_THEN, _BIKE_NOW, _BIKE_QUERY),
            # A correction that names the value it replaces.
            (
                "My book club meets on Tuesday evenings in the back room of the library.",
                "User: Turns out I had the day wrong, we meet Thursdays, not Tuesdays.",
                "Which evening is my book club?",
            ),
            # The one who holds the value, named in the answer and again in the change.
            (
                "Mein Sohn Jonas spielt Fußball beim FC Nordstern, zweimal die Woche.",
                "User: Jonas ist jetzt beim SV Lindenau, das Training ist viel näher. Was packe ich ihm ein?",
                "In welchem Verein spielt mein Sohn Fußball?",
            ),
        ],
    )
    def test_a_change_that_names_an_earlier_answers_name_goes_above_it(self, alice, then, now, query):
        _saves(alice, [[then], [_COINS_FILLER[0]], [now], [_COINS_FILLER[1]]])
        assert _recall(alice, query, knobs=WITHOUT_MEANING, top_k=1) == [then]
        assert _recall(alice, query, knobs=WITH_REFERENT, top_k=1) == [now]

    @pytest.mark.parametrize(
        "later",
        [
            # It names the old value and nothing besides: no new value.
            "User: The Triumph needs new tyres now, the back one is bald.",
            # A plan, a question: no change of what holds.
            "User: I'm thinking of selling the Triumph and getting a Ducati next year.",
            "User: Should I sell the Triumph now that a Ducati Scrambler is on offer?",
            # A name the answer did not say.
            "User: My brother switched to a Ducati Monster now.",
        ],
    )
    def test_a_later_mention_of_the_name_that_changes_nothing_stays_below(self, alice, later):
        _saves(alice, [[_BIKE_THEN], [_COINS_FILLER[0]], [later]])
        assert _recall(alice, _BIKE_QUERY, knobs=WITH_REFERENT) == _recall(alice, _BIKE_QUERY)
        assert _recall(alice, _BIKE_QUERY, knobs=WITH_REFERENT, top_k=1) == [_BIKE_THEN]

    def test_the_names_of_a_sentence(self):
        assert _names_in("Vendí la Honda, ahora llevo una Yamaha MT-07.") >= {"honda", "yamaha", "mt-07"}
        assert _names_in("we meet Thursdays, not Wednesdays") == {"thursday", "wednesday"}
        assert _names_in("on se voit mardi, pas jeudi") == {"mardi", "jeudi"}
        # Grammar, a sentence's first common word, and the speaker's own words are no names.
        assert _names_in("The new puppy has been a lot. I'm OK.") == frozenset()
        # The names of an answer's sentences that hold a word of the question, numbers left out.
        wanted = frozenset({"motorbik", "ride"})
        answers = [_BIKE_THEN + " My sister Ana lives in Porto.", "I paid 4,000 for the motorbike."]
        assert _referents(answers, wanted) == {"triumph", "bonnevill"}


class TestEarlierStateLooksAtHistory:
    """`Knobs.then_history`: a question about an earlier state also finds what no longer holds."""

    def _superseded(self, alice):
        ((then,), _filler, (now,)) = _saves(alice, [[_PLANTS_THEN], [_COINS_FILLER[0]], [_PLANTS_NOW]])
        then.superseded_at = timezone.now()
        then.superseded_by = now
        then.save(update_fields=["superseded_at", "superseded_by"])
        return then, now

    def test_the_value_that_no_longer_holds_answers_a_question_about_the_earlier_state(self, alice):
        self._superseded(alice)
        first = "How many plants did I have on my balcony at first?"
        assert _recall(alice, first, top_k=1) == [_PLANTS_THEN]
        # Without the rule the superseded value is not found at all.
        assert _PLANTS_THEN not in _recall(alice, first, knobs=replace(DEFAULT_KNOBS, then_history=False))
        # The hit says it no longer holds.
        request = RecallRequest(query=first, top_k=1)
        (hit,) = memory_recall(owner=alice, space=space_create_default(owner=alice), request=request).hits
        assert hit.held is False

    def test_a_question_about_now_still_sees_only_what_holds(self, alice):
        self._superseded(alice)
        assert _PLANTS_THEN not in _recall(alice, _PLANTS_QUERY)


class TestQueryParsing:
    def test_words_keep_accents_and_drop_request_words(self):
        assert query_words("Tell me about the Café José runs") == [
            "me",
            "about",
            "the",
            "café",
            "josé",
            "runs",
        ]

    def test_a_requests_frame_is_dropped_from_the_words_only_when_asked(self):
        query = "My cookies need something extra. Any advice?"
        assert "advice" in query_words(query)
        assert query_words(query, drop_request_frame=True) == ["my", "cookies", "need", "extra"]
        for framed in (
            "Can you suggest some activities for my commute?",
            "Could you recommend a show for tonight?",
            "Should I buy a NAS now or wait? What do you think?",
            "Do you have any tips for a new guitar?",
        ):
            dropped = query_words(framed, drop_request_frame=True)
            assert not {"suggest", "recommend", "think", "tips", "you"} & set(dropped), framed
        # Advice as the subject of the question is content, not a frame.
        asked = "What advice did my doctor give me about sleep?"
        assert query_words(asked, drop_request_frame=True) == query_words(asked)

    def test_names_are_phrases_of_up_to_three_words(self):
        names = query_names("Where does Anna Maria's sister live?")
        assert {"anna", "anna maria", "maria", "does anna maria"} <= set(names)
        assert "jose" in query_names("José", fold_accents=True)

    def test_periods_cover_the_day_week_month_or_year_named(self):
        reference = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)

        def days(query: str) -> list[tuple[str, str]]:
            periods = query_periods(query, reference=reference)
            return [(start.date().isoformat(), end.date().isoformat()) for start, end in periods]

        assert days("what happened yesterday") == [("2023-05-06", "2023-05-08")]
        assert days("What did I do last week?") == [("2023-04-30", "2023-05-09")]
        assert (
            days("trips in May 2023")[0][0] == "2023-04-30"
            and days("trips in May 2023")[0][1] >= "2023-05-31"
        )
        assert days("What did Caroline research?") == []
        # "... ago" is a point said roughly: a window around it, wider for a longer unit.
        assert days("What did I buy 10 days ago?") == [("2023-04-27", "2023-04-29")]
        assert days("What did I mention four weeks ago?") == [("2023-04-06", "2023-04-14")]
        assert days("What charity event did I join a month ago?") == [("2023-03-29", "2023-04-18")]
        # Off, "a month ago" ran up to the question's date.
        before = query_periods(
            "What charity event did I join a month ago?",
            reference=reference,
            centred_ago=False,
            calendar=False,
        )
        assert [(start.date().isoformat(), end.date().isoformat()) for start, end in before] == [
            ("2023-04-07", "2023-05-10")
        ]

    def test_this_and_last_year_month_and_week_are_calendar_units(self):
        reference = datetime(2023, 5, 10, 13, 56, tzinfo=UTC)  # a Wednesday

        def days(query: str, **options) -> list[tuple[str, str]]:
            periods = query_periods(query, reference=reference, **options)
            return [(start.date().isoformat(), end.date().isoformat()) for start, end in periods]

        # The unit the moment falls in, a day of slack either side.
        assert days("How many books have I read this year?") == [("2022-12-31", "2024-01-02")]
        assert days("What did I do last year?") == [("2021-12-31", "2023-01-02")]
        assert days("What did I buy this month?") == [("2023-04-30", "2023-06-02")]
        assert days("What did I buy last month?") == [("2023-03-31", "2023-05-02")]
        assert days("Where did I eat this week?") == [("2023-05-07", "2023-05-16")]
        assert days("Where did I eat last week?") == [("2023-04-30", "2023-05-09")]
        # December's month runs into January.
        december = query_periods("What did I buy this month?", reference=datetime(2023, 12, 20, tzinfo=UTC))
        assert [(s.date().isoformat(), e.date().isoformat()) for s, e in december] == [
            ("2023-11-30", "2024-01-02")
        ]
        # Off, "this year" asked in May looked at the twelve months to come.
        assert days("How many books have I read this year?", calendar=False) == [("2023-05-09", "2024-05-11")]

    def test_questions_asking_for_a_time_are_told_apart(self):
        asking = [
            "When did Caroline go to the support group?",
            "Melanie, when is the party?",
            "How long ago was her 18th birthday?",
            "How long has she known them?",
            "What year did Jon open his studio?",
            "In which month did they move?",
            "How many years has he played the guitar?",
        ]
        not_asking = [
            "What did I do when I was in Paris?",
            "Which city does my sister live in?",
            "What time-management tricks does Jon use?",
            "Where did we go last week?",
        ]
        assert [q for q in asking if not asks_when(q)] == []
        assert [q for q in not_asking if asks_when(q)] == []


class TestCost:
    def test_a_recall_takes_one_statement_for_three_hits_or_thirty(self, alice):
        _memories(alice, [f"Gardening tip number {i}: water early." for i in range(30)])
        space = space_create_default(owner=alice)
        counts = []
        for top_k in (3, 30):
            # A new query: the text side is a statement of its own, run while the model embeds the
            # query; asked again, the vector is cached and the text side rides in the one statement.
            embeddings.query_cache_clear()
            request = RecallRequest(query="gardening tip", top_k=top_k)
            with CaptureQueriesContext(connection) as new:
                assert len(memory_recall(owner=alice, space=space, request=request).hits) == top_k
            with CaptureQueriesContext(connection) as again:
                assert len(memory_recall(owner=alice, space=space, request=request).hits) == top_k
            for captured in (new, again):
                assert len([q for q in captured.captured_queries if "vector_pool" in q["sql"]]) == 1
            counts.append((len(new.captured_queries), len(again.captured_queries)))
        # The HNSW settings, the retrieval and the hits' rows travel as one statement.
        assert counts[0] == counts[1] == (2, 1)


def test_an_entitys_links_are_indexed_by_entity_with_the_memory(db):
    """Migration 0025: entity expansion reads a few entities' links; an index by entity that covers
    the memory lets it read them off the index alone, instead of the whole link table."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexdef FROM pg_indexes WHERE tablename = 'memories_memory_entities'"
            " AND indexname = 'memory_entities_entity_memory'"
        )
        (definition,) = cursor.fetchone()
    assert definition.endswith("USING btree (entity_id, memory_id)")


# Off by default until measured (docs/retrieval.md, "Update order, eighth round"); its mechanism is
# tested with it on.
WITH_TYPED = replace(DEFAULT_KNOBS, typed_answers_first=True)


class TestTypedAnswersFirst:
    """`Knobs.typed_answers_first`: among the person's answers, those that hold a value of the kind
    the question asks for come first, newest first."""

    _NOW = "User: The storm knocked two pots off the balcony, so I'm down to ten plants there."

    @pytest.mark.parametrize(
        "later",
        [
            # A question with a value of another kind: it stays in place for `asking_below`.
            "User: Are my balcony plants getting too much sun at 35 degrees?",
            # A plan with one.
            "User: I'm thinking of moving my balcony plants indoors for the 12.5 hour heatwave.",
        ],
    )
    def test_an_answer_that_only_asks_or_plans_goes_below_one_with_the_value(self, alice, later):
        _saves(alice, [[_PLANTS_THEN], [_COINS_FILLER[0]], [self._NOW], [later]])
        # Said last and sharing the question's words, it leads without the rule.
        assert _recall(alice, _PLANTS_QUERY, top_k=1) == [later]
        assert _recall(alice, _PLANTS_QUERY, knobs=WITH_TYPED, top_k=1) == [self._NOW]

    def test_a_question_that_tells_the_asked_value_keeps_its_place(self, alice):
        told = "User: Now that there are 14 plants on my balcony, do I need a bigger watering can?"
        _saves(alice, [[_PLANTS_THEN], [_COINS_FILLER[0]], [self._NOW], [told]])
        # People tell a new value inside a question: a count said last still leads.
        assert _recall(alice, _PLANTS_QUERY, knobs=WITH_TYPED, top_k=1) == [told]

    @pytest.mark.parametrize(
        ("query", "kind"),
        [
            ("How many cats do I have?", "count"),
            # A frequency is said as often without a number as with one ("every week"): no kind.
            ("How often do I see my therapist?", None),
            ("How much is my parking permit?", "amount"),
            ("Which days does Emma have practice?", "time"),
            ("Who do I go running with?", "name"),
            ("Where does my sister work?", "place"),
            ("Wie viele Überstunden habe ich?", "count"),
            ("¿Cuánto pago de alquiler?", "amount"),
            ("¿Con quién juego al pádel?", "name"),
            ("Avec qui je fais du covoiturage ?", "name"),
            ("Où habite ma sœur ?", "place"),
            # "ou" without its accent is "or".
            ("Est-ce que je prends le train ou le bus ?", None),
            ("Which vet do we take Bramble to?", None),
            ("What's my favourite film?", None),
        ],
    )
    def test_the_kind_of_value_a_question_asks_for(self, query, kind):
        assert value_asked(query) == kind

    def test_an_answer_that_states_without_a_value_read_keeps_its_place(self, alice):
        now = "User: The storm took out some pots on the balcony, so it's just a handful of plants now."
        _saves(alice, [[_PLANTS_THEN], [_COINS_FILLER[0]], [now]])
        # It states the plants on the balcony in words no value reader takes for a count: the
        # older count does not go above it. A question or a plan about them would.
        wanted = frozenset({"plant", "balconi"})
        assert states_about(now, wanted)
        for asking in (
            "User: My balcony plants look sad after the heatwave, is that the heat?",
            "User: I'm thinking of getting more plants for the balcony.",
        ):
            assert not states_about(asking, wanted), asking
        assert _recall(alice, _PLANTS_QUERY, knobs=WITH_TYPED, top_k=1) == [now]

    def test_which_answers_hold_the_kind_asked(self):
        panels = "How many solar panels are on our roof?"
        wanted = frozenset({"solar", "panel", "roof"})
        for told in (
            "User: Big week. The installer added the east side as well. Sixteen in total.",
            "User: We adopted a third one, a kitten.",
            "We've got 14 now.",
        ):
            assert holds_kind(told, "count", panels, wanted), told
        for other in (
            # A quantity in a unit the question does not name, a price, a number of the question's own.
            "User: Our solar panels made 41 kWh on Sunday, is that good?",
            "User: Netflix put the price up again, 12.99 now.",
            "User: The roof is south-facing.",
        ):
            assert not holds_kind(other, "count", panels, wanted), other
        hours = "How many hours a week do I work?"
        assert holds_kind("I'm down to 30 hours now.", "count", hours, frozenset({"hour", "week", "work"}))
        days = "Which days does Emma have practice?"
        assert holds_kind("The coach moved it to Mondays.", "time", days, frozenset({"emma", "practic"}))
        assert not holds_kind("We won 3-1, Emma scored.", "time", days, frozenset({"emma", "practic"}))


_HONEYMOON_THEN = "We're going to Santorini for our honeymoon, a week in Oia."
_HONEYMOON_QUERY = "Where are we going on our honeymoon?"
WITHOUT_OTHERS = replace(DEFAULT_KNOBS, others_below=False)


@pytest.mark.parametrize(
    ("question", "own"),
    [
        ("Where do I live?", True),
        ("How many cats do we have?", True),
        ("¿Dónde vivo ahora?", True),
        ("Where does Priya work?", False),
        ("Which band is Marco drumming for?", False),
        ("Where does my sister work?", False),
        ("Wo arbeitet meine Schwester?", False),
        ("What does Mum drive now?", False),
        ("Who is my mentor on the graduate scheme?", False),
    ],
)
def test_a_question_about_someone_by_name_or_word_or_who_is_not_about_the_persons_own(question, own):
    assert asks_own(question) is own


class TestOthersBelow:
    """`Knobs.others_below`: for a question about the person's own, a turn that speaks of the topic
    only as someone else's goes below and is no answer."""

    _COUSIN = "User: My cousin Ravi is going on his honeymoon to the Maldives next month."

    def test_someone_elses_turn_goes_below_the_persons_own(self, alice):
        _saves(alice, [[_HONEYMOON_THEN], [_COINS_FILLER[0]], [self._COUSIN]])
        # Said last and sharing the question's words, it is the newest answer without the rule.
        assert _recall(alice, _HONEYMOON_QUERY, knobs=WITHOUT_OTHERS, top_k=1) == [self._COUSIN]
        assert _recall(alice, _HONEYMOON_QUERY, top_k=1) == [_HONEYMOON_THEN]

    @pytest.mark.parametrize(
        "later",
        [
            # The person with someone: their own.
            "User: My wife and I are going on our honeymoon to Kyoto now.",
            # Someone else's beside a value of the person's own.
            "User: My cousin Ravi is going on his honeymoon to Bali. We're off to Kyoto for ours.",
            # A capitalised first word the engine takes for a name is no person.
            "User: Prices went up so much that we're going on our honeymoon to Kyoto instead.",
        ],
    )
    def test_a_turn_with_the_persons_own_stays(self, alice, later):
        _saves(alice, [[_HONEYMOON_THEN], [_COINS_FILLER[0]], [later]])
        assert _recall(alice, _HONEYMOON_QUERY, top_k=1) == [later]
        assert _recall(alice, _HONEYMOON_QUERY) == _recall(alice, _HONEYMOON_QUERY, knobs=WITHOUT_OTHERS)

    def test_a_question_about_someone_else_keeps_their_turns(self, alice):
        _saves(alice, [[_HONEYMOON_THEN], [_COINS_FILLER[0]], [self._COUSIN]])
        query = "Where is my cousin Ravi going on his honeymoon?"
        assert _recall(alice, query, top_k=1) == [self._COUSIN]


class TestWhoSaidIt:
    """Recall's SQL reads a memory's speaker as `language.split_speaker` does: a role or one to three
    capitalised words before a colon and a space. A note with a clock time or a lower-case phrase
    before a colon is the person's own."""

    @pytest.mark.parametrize(
        ("then", "now", "query"),
        [
            (
                "I go to bed at midnight most nights.",
                "These days I go to bed at half ten and wake up at 6:30.",
                "What time do I go to bed these days?",
            ),
            (
                "We have two cats, Pepper and Mochi.",
                "Chaos at home: we adopted a third cat, a kitten called Miso, so three now.",
                "How many cats do we have?",
            ),
        ],
    )
    def test_a_note_with_a_colon_in_it_is_still_the_persons(self, alice, then, now, query):
        _saves(alice, [[then], [_COINS_FILLER[0]], [now]])
        # The newer answer is the person's, so "newest said first" puts it first.
        assert _recall(alice, query, top_k=1) == [now]

    def test_a_named_speaker_is_someone_else(self, alice):
        _saves(alice, [["I go to bed at midnight most nights."], ["Maria: I go to bed at 10:30 these days."]])
        assert _recall(alice, "What time do I go to bed these days?", top_k=1) == [
            "I go to bed at midnight most nights."
        ]

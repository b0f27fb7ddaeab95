"""Everyday slot questions: does `recall` find what a person said about their home, work, job,
family, contacts, health, preferences and plans when the question is phrased in other words?

    .venv/bin/python benchmarks/slots.py [--crowd 400]

A throwaway service (as `locomo.py`) gets one user. Its space holds the statements of `FACTS`
(each saved with REST `POST /api/v1/memories`, one save each, no session: notes an agent kept) among
`--crowd` turns of someone else's chat (the first turns of LoCoMo conversation 26, saved the same
way), so that a question has something to be confused with. Every question of `FACTS` is then asked
through `POST /api/v1/operations/recall` (top_k 10), and scored by where the statement it is about
ranks: found at 1, in the top 5, in the top 10, and whether recall returned anything at all
(`match` not "none"). The same questions are then asked in a second space that holds the
statements alone, where the relevance floor decides whether recall answers at all.

The set was written before any change to ranking was made for it (issue 40 section 3, issue 41
step 3) and scored blind first; it is not to be tuned to: most questions share no content word with
their statement, on purpose, which is the case the relevance floor decides.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.locomo import (
    DATA_DIR,
    Conversation,
    Turn,
    create_users,
    ingest,
    load_conversation,
    service_with_data_dir,
    wait_for_jobs,
)

# slot -> [(statement, [questions about it])]
FACTS: dict[str, list[tuple[str, list[str]]]] = {
    "home": [
        (
            "We finally moved into the new flat in Lisbon in March.",
            ["Where do I live?", "What city is my home in?"],
        ),
        ("The landlord raised the rent on our place to 1,400 euros.", ["How much do I pay for housing?"]),
    ],
    "work": [
        (
            "I switched over to Wayne Enterprises last spring.",
            ["What company am I with?", "Who is my employer?", "Where do I work?"],
        ),
        ("I report to Dana Whitfield now.", ["Who is my manager?", "Who's my boss?"]),
    ],
    "job": [
        (
            "These days I spend my time designing bridges as a structural engineer.",
            ["What do I do for a living?", "What is my profession?"],
        ),
        ("I got promoted to senior lead in October.", ["What's my job title?"]),
    ],
    "family": [
        ("My sister Priya just had her second baby.", ["Do I have any siblings?"]),
        ("Tom and I have been married for six years.", ["Who is my spouse?", "Who is my husband?"]),
        ("Our daughter Mila starts kindergarten in September.", ["Do I have kids?", "How old is my child?"]),
    ],
    "contacts": [
        (
            "My accountant is Jonas Berg, his number is 555-0142.",
            ["What's the phone number of the person who does my taxes?"],
        ),
        ("Dr. Okafor's office line is 555-0199.", ["How do I reach my doctor?"]),
    ],
    "health": [
        ("Peanuts make me break out in hives.", ["Am I allergic to anything?", "What food should I avoid?"]),
        ("I take 50 mg of sertraline every morning.", ["What medication am I on?"]),
        ("I tore my ACL skiing two years ago.", ["Have I had any injuries?"]),
    ],
    "preferences": [
        ("I can't stand cilantro, it tastes like soap to me.", ["What foods do I dislike?"]),
        ("Window seats only when I fly, please.", ["Where do I like to sit on a plane?"]),
        ("Oat milk in my coffee, never dairy.", ["How do I take my coffee?"]),
    ],
    "plans": [
        ("Booked flights to Tokyo for the first week of April.", ["Do I have any trips coming up?"]),
        ("I'm going to run the Berlin marathon this autumn.", ["What race am I training for?"]),
        (
            "Thinking about going back to school for a master's in urban planning next year.",
            ["What are my plans for further education?"],
        ),
    ],
}


# A second set, written on 6 December 2026 before the slot vocabulary of recall (issue 40 section 3)
# existed and scored blind on the code of that day: other statements, other questions, the same slots
# (`--set b`). The first set had been seen while the recall knobs were chosen; this one had not.
FACTS_B: dict[str, list[tuple[str, list[str]]]] = {
    "home": [
        (
            "Just signed the lease on a two-bedroom in Rotterdam.",
            ["Where do I live?", "Which city is my home in?"],
        ),
        ("Our house is the blue one on Kestrel Lane.", ["What's my address?"]),
    ],
    "work": [
        (
            "Started at Halcyon Labs in January as their data person.",
            ["Who do I work for?", "What company am I at?"],
        ),
        ("Marta signs off on all my expense reports.", ["Who is my boss?"]),
    ],
    "job": [("I teach chemistry to tenth graders.", ["What is my job?", "What do I do for work?"])],
    "family": [
        ("My brother Luca lives in Turin.", ["Do I have siblings?"]),
        ("Our twins turn four next week.", ["Do I have children?", "How old are my kids?"]),
        ("Sam and I got engaged in June.", ["Who is my partner?", "Am I engaged?"]),
    ],
    "contacts": [("The plumber we use is Ravi, 555-0177.", ["Who do I call when the sink leaks?"])],
    "health": [
        ("Penicillin gives me a rash.", ["Am I allergic to any medicine?"]),
        ("I've had asthma since I was a kid.", ["Do I have any chronic conditions?"]),
    ],
    "preferences": [
        ("Aisle seat on trains, always.", ["Where do I like to sit on a train?"]),
        ("I'm vegetarian.", ["Do I eat meat?"]),
    ],
    "plans": [
        ("Signed up for a pottery course that starts in May.", ["What am I planning to learn?"]),
        ("We're visiting my in-laws in Cork over Christmas.", ["Where am I going for the holidays?"]),
    ],
}
# A third set, written after the slot vocabulary (lexicon `slots`) had been drawn up with sets a and b
# in view, and before it was run on this one: the figure for the vocabulary that was not fitted.
FACTS_C: dict[str, list[tuple[str, list[str]]]] = {
    "home": [
        ("We're renting a cottage just outside Galway now.", ["Where do I live?"]),
        ("My flatmate and I split a place in Kreuzberg.", ["What neighbourhood is my home in?"]),
    ],
    "work": [
        ("I've been with Northwind Traders for three years.", ["Who is my employer?"]),
        ("Priya is my line manager.", ["Who is my supervisor?"]),
    ],
    "job": [
        ("I'm a paramedic.", ["What is my profession?"]),
        ("Nights at the hospital pharmacy are my shifts these days.", ["What do I do for a living?"]),
    ],
    "family": [
        ("My mum turns 70 in May.", ["How old is my mother?"]),
        ("My son Eli just started school.", ["Do I have any children?"]),
        ("My wife Nora is a pilot.", ["Who is my spouse?"]),
    ],
    "contacts": [("Our vet is Dr. Mills, 555-0101.", ["How do I reach my pet's doctor?"])],
    "health": [
        ("I'm on metformin for type 2 diabetes.", ["What medication do I take?"]),
        ("Shellfish makes my throat swell.", ["What am I allergic to?"]),
    ],
    "preferences": [("I only drink decaf after noon.", ["How do I take my coffee in the afternoon?"])],
    "plans": [("Next summer we're doing a road trip through Norway.", ["What trips do I have planned?"])],
}
SETS = {"a": FACTS, "b": FACTS_B, "c": FACTS_C}

Row = tuple[str, str, int | None, str]


def people(crowd_size: int, facts_by_slot: dict[str, list[tuple[str, list[str]]]]) -> list[Conversation]:
    """Two spaces: the statements among `crowd_size` turns of another person's chat, and alone."""
    crowd = load_conversation(DATA_DIR / "26.json").turns[:crowd_size]
    when = crowd[0].occurred_at if crowd else datetime(2023, 5, 8, tzinfo=UTC)
    facts = [
        Turn(f"{slot}/{i}", statement, when, "")
        for slot, items in facts_by_slot.items()
        for i, (statement, _) in enumerate(items)
    ]
    # The facts spread through the chat, each saved as a note of its own.
    turns: list[Turn] = []
    step = max(1, len(crowd) // len(facts))
    for i, turn in enumerate(crowd):
        turns.append(Turn(f"crowd/{i}", turn.content, turn.occurred_at, ""))
        if i % step == 0 and i // step < len(facts):
            turns.append(facts[i // step])
    turns.extend(facts[len(turns) - len(crowd) :])
    return [Conversation("crowd", turns, []), Conversation("alone", list(facts), [])]


def rank_of(found: list[str], slot: str, index: int) -> int | None:
    return found.index(f"{slot}/{index}") + 1 if f"{slot}/{index}" in found else None


def ask_all(client: httpx.Client, person: Conversation, top_k: int, facts: dict[str, Any]) -> list[Row]:
    rows: list[Row] = []
    for slot, items in facts.items():
        for i, (_statement, questions) in enumerate(items):
            for question in questions:
                response = client.post(
                    "/api/v1/operations/recall",
                    json={"query": question, "top_k": top_k},
                    headers={"Authorization": f"Bearer {person.token}"},
                )
                response.raise_for_status()
                body = response.json()
                found = [person.memory_turn.get(hit["id"], "?") for hit in body["memories"]]
                rows.append((slot, question, rank_of(found, slot, i), body["match"]))
    return rows


def ask_in_process(
    data_dir: Path, person: Conversation, top_k: int, variant: str, facts: dict[str, Any]
) -> list[Row]:
    """`ask_all` with `memory_recall` called in process with the variant's knobs."""
    from benchmarks._service import use_service_database
    from benchmarks.distractor_stages import _knobs_from

    use_service_database(data_dir)
    from accounts.models import User
    from memories.retrieval.recall import RecallRequest, memory_recall
    from memories.selectors.spaces import space_default

    owner = User.objects.get(email=f"slots-{person.name}@example.com")
    space = space_default(owner=owner)
    assert space is not None
    knobs = _knobs_from([v for v in variant.split(",") if v])
    rows: list[Row] = []
    for slot, items in facts.items():
        for i, (_statement, questions) in enumerate(items):
            for question in questions:
                result = memory_recall(
                    owner=owner, space=space, request=RecallRequest(query=question, top_k=top_k), knobs=knobs
                )
                found = [person.memory_turn.get(str(hit.memory.id), "?") for hit in result.hits]
                rows.append((slot, question, rank_of(found, slot, i), result.match))
    return rows


def report(label: str, crowded: list[Row], alone: list[Row], *, detail: bool) -> None:
    print(label)
    print(f"{'slot':<13}{'n':>3}{'@1':>6}{'@5':>6}{'@10':>6}{'alone: answered':>17}{'@1':>6}")
    for slot in [*dict.fromkeys(r[0] for r in crowded), "overall"]:
        chosen = [r for r in crowded if slot in ("overall", r[0])]
        bare = [r for r in alone if slot in ("overall", r[0])]
        line = f"{slot:<13}{len(chosen):>3}"
        for k in (1, 5, 10):
            line += f"{statistics.mean(1.0 if r[2] and r[2] <= k else 0.0 for r in chosen):>6.2f}"
        line += f"{statistics.mean(0.0 if r[3] == 'none' else 1.0 for r in bare):>17.2f}"
        print(line + f"{statistics.mean(1.0 if r[2] == 1 else 0.0 for r in bare):>6.2f}")
    if detail:
        print("  rank among the chat / alone, match alone, question")
        for (slot, question, rank, _), (_, _, bare_rank, match) in zip(crowded, alone, strict=True):
            print(f"  {slot:<12} {rank or '-'!s:>3} {bare_rank or '-'!s:>3}  {match:<7} {question}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crowd", type=int, default=400, help="turns of another person's chat")
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument(
        "--variant", action="append", help="then these ranking knobs in process ('own_boost=0.3')"
    )
    parser.add_argument("--set", choices=sorted(SETS), default="a", help="which statements and questions")
    args = parser.parse_args()
    facts = SETS[args.set]
    crowd, alone = people(args.crowd, facts)
    with service_with_data_dir() as (url, _token, data_dir):
        tokens = create_users(data_dir, ["slots-crowd@example.com", "slots-alone@example.com"])
        with httpx.Client(base_url=url, timeout=120) as client:
            for person, token in zip((crowd, alone), tokens, strict=True):
                person.token = token
                wait_for_jobs(client, person, ingest(client, person, session_ids=False))
            rows = (ask_all(client, crowd, args.top_k, facts), ask_all(client, alone, args.top_k, facts))
            variants = {
                variant: tuple(
                    ask_in_process(data_dir, p, args.top_k, variant, facts) for p in (crowd, alone)
                )
                for variant in args.variant or []
            }
    statements = len(alone.turns)
    print(f"everyday slot questions: {len(rows[0])} questions about {statements} statements,")
    print(f"among {len(crowd.turns) - statements} turns of another person's chat, and alone")
    report("through the API, default knobs", *rows, detail=True)
    for variant, (crowded, bare) in variants.items():
        print()
        report(f"in process: {variant or 'defaults'}", crowded, bare, detail=False)


if __name__ == "__main__":
    main()

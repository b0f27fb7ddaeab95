"""Golden extraction: what a note, a conversation or a document becomes, through the REST save or
upload and the real worker.

The corpus below says, for each save, the exact memories a person would expect: their text, kind,
world time (the day the memory happened, holds from or is due) and entities. The labels were
written from the texts, not from the service's output. Segmentation must be exact; kinds, world
times and entities are scored as precision and recall over the whole corpus, printed, and held to a
floor, because rules are not perfect and the figure is the honest measure (docs/pipeline.md quotes
it).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import date, timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from accounts.models import User
from memories.models import Memory
from memories.services.account import user_sign_up
from tests.helpers import pat_client, wait_for_job
from tests.memories.test_documents import build_pdf

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_worker")]

# Every save says it refers to Saturday 14 March 2026 (the dashboard's Date field, REST occurred_at):
# "yesterday" is 13 March, "next Friday" 20 March.
REFERENCE = "2026-03-14T12:00:00+00:00"


@dataclass(frozen=True)
class Expect:
    content: str
    kind: str
    # The world day: occurred (episode), holds from (fact) or due (foresight; None when no day is said).
    day: date | None
    entities: frozenset[tuple[str, str]] = field(default_factory=frozenset)


def E(content: str, kind: str, day: date | None, *entities: tuple[str, str]) -> Expect:
    return Expect(content, kind, day, frozenset(entities))


REF_DAY = date(2026, 3, 14)

PERSON, ORG, PLACE = "Person", "Organization", "Location"

# (saves into one space, in order; the memories expected from them, in order)
NOTES: list[tuple[list[str], list[Expect]]] = [
    (
        ["I prefer morning meetings before 11:00, ideally every Friday."],
        [E("I prefer morning meetings before 11:00, ideally every Friday.", "fact", REF_DAY)],
    ),
    (
        ["Yesterday I had dinner with Marco at Osteria Nonna."],
        [
            E(
                "Yesterday I had dinner with Marco at Osteria Nonna.",
                "episode",
                date(2026, 3, 13),
                ("Marco", PERSON),
                ("Osteria Nonna", PLACE),
            )
        ],
    ),
    (
        ["I'm flying to Tokyo next Friday."],
        [E("I'm flying to Tokyo next Friday.", "foresight", date(2026, 3, 20), ("Tokyo", PLACE))],
    ),
    (
        ["My sister Ana lives in Lisbon. She works as a nurse."],
        # The second sentence leans on the first ("She"): one statement.
        [
            E(
                "My sister Ana lives in Lisbon. She works as a nurse.",
                "fact",
                REF_DAY,
                ("Ana", PERSON),
                ("Lisbon", PLACE),
            )
        ],
    ),
    (["We play tennis on Sundays."], [E("We play tennis on Sundays.", "fact", REF_DAY)]),
    (
        ["Remind me to renew my passport in June."],
        [E("Remind me to renew my passport in June.", "foresight", date(2026, 6, 1))],
    ),
    (
        ["I went hiking with Priya two weeks ago."],
        [E("I went hiking with Priya two weeks ago.", "episode", date(2026, 2, 28), ("Priya", PERSON))],
    ),
    (
        ["I usually have to get up at 6 on weekdays."],
        [E("I usually have to get up at 6 on weekdays.", "fact", REF_DAY)],
    ),
    (
        ["Last Tuesday I met Dr. Okafor about my knee."],
        [E("Last Tuesday I met Dr. Okafor about my knee.", "episode", date(2026, 3, 10), ("Okafor", PERSON))],
    ),
    (["I'm allergic to peanuts."], [E("I'm allergic to peanuts.", "fact", REF_DAY)]),
    (
        ["Tomorrow I need to call the dentist."],
        [E("Tomorrow I need to call the dentist.", "foresight", date(2026, 3, 15))],
    ),
    (["Every Friday I call my mother."], [E("Every Friday I call my mother.", "fact", REF_DAY)]),
    (
        ["Dinner with Anna tonight."],
        [E("Dinner with Anna tonight.", "foresight", REF_DAY, ("Anna", PERSON))],
    ),
    (
        ["I've been vegetarian since 2015."],
        [E("I've been vegetarian since 2015.", "fact", date(2015, 1, 1))],
    ),
    (
        [
            "Trip ideas\n\n"
            "Kyoto in April for the cherry blossoms.\n\n"
            "I want to see Lisbon again.\n\n"
            "We visited Porto last year. It rained every day."
        ],
        # The title is context, not a memory; no paragraph is glued to another or repeated.
        [
            E("Kyoto in April for the cherry blossoms.", "foresight", date(2026, 4, 1), ("Kyoto", PLACE)),
            E("I want to see Lisbon again.", "foresight", None, ("Lisbon", PLACE)),
            E(
                "We visited Porto last year. It rained every day.",
                "episode",
                date(2025, 3, 14),
                ("Porto", PLACE),
            ),
        ],
    ),
    (
        ["Shopping list:\n- oat milk\n- coffee beans"],
        [
            E("Shopping list: oat milk", "foresight", None),
            E("Shopping list: coffee beans", "foresight", None),
        ],
    ),
    (
        [
            "Alice: I started a pottery class yesterday.\n"
            "Bob: Nice! Are you going to keep going?\n"
            "Alice: Yes, every Tuesday."
        ],
        # Conversation turns stay turns, each with its speaker.
        [
            E("Alice: I started a pottery class yesterday.", "episode", date(2026, 3, 13), ("Alice", PERSON)),
            E("Bob: Nice! Are you going to keep going?", "fact", REF_DAY, ("Bob", PERSON)),
            E("Alice: Yes, every Tuesday.", "fact", REF_DAY, ("Alice", PERSON)),
        ],
    ),
    (
        ["Bob works at Acme.", "My employer Acme is based in Lyon."],
        # One Acme: the second mention has no cue of its own, the space knows it as an organisation.
        [
            E("Bob works at Acme.", "fact", REF_DAY, ("Bob", PERSON), ("Acme", ORG)),
            E("My employer Acme is based in Lyon.", "fact", REF_DAY, ("Acme", ORG), ("Lyon", PLACE)),
        ],
    ),
    (
        [
            "Planning the garden.\n\n"
            "I planted tomatoes last Sunday. They need water every evening.\n\n"
            "Next spring I will add a pond."
        ],
        [
            E("Planning the garden.", "fact", REF_DAY),
            E("I planted tomatoes last Sunday. They need water every evening.", "episode", date(2026, 3, 8)),
            E("Next spring I will add a pond.", "foresight", None),
        ],
    ),
]


# Documents are uploaded now: their reference is today.
ANY_DAY = (
    date.min
)  # the day is not checked (a period such as "last week": its convention is tested elsewhere)


def _today() -> date:
    return timezone.now().date()


def _next_weekday(weekday: int) -> date:
    today = _today()
    return today + timedelta(days=(weekday - today.weekday() - 1) % 7 + 1)


def _documents() -> list[tuple[str, bytes, list[Expect]]]:
    today = _today()
    first_of_next_month = (today.replace(day=1) + timedelta(days=32)).replace(day=1)
    first_of_last_month = (today.replace(day=1) - timedelta(days=1)).replace(day=1)
    markdown = (
        b"---\ntitle: Reading\n---\n# Reading list\n\n"
        b"| Book | Rating |\n|---|---|\n| Piranesi | 5/5 |\n| Dune | 4/5 |\n\n"
        b"## Allergies\n- peanuts\n- shellfish\n\n"
        b'```python\nprint("not a fact")\n```\n\n'
        b"Bob works at Acme. I met **Marco** at the [book club](https://example.com/club).\n"
    )
    html = (
        b"<html><head><title>Trip</title><script>alert(1)</script></head><body>"
        b'<nav><a href="/">Home</a> | <a href="/about">About</a></nav>'
        b"<h1>Lisbon trip</h1><p>We stayed in Alfama for a week. The tram was always full.</p>"
        b"<h2>Packing</h2><ul><li>sunscreen</li><li>rain jacket</li></ul>"
        b"<table><tr><th>Day</th><th>Plan</th></tr><tr><td>Monday</td><td>Belem tower</td></tr></table>"
        b"<footer>&copy; 2026 Example</footer></body></html>"
    )
    text = (
        b"Notes from the week\n\nI moved to Berlin last month. The flat is small but\nbright.\n\n"
        b"Call mom tomorrow\n\nShopping list:\n- milk\n- eggs\n"
    )
    pdf = build_pdf(
        [
            "Quarterly report\nOur team moved to the new office in\nPorto last week. Everyone likes the\n"
            "view.\nAcme Quarterly\n1",
            "Next month we will hire two engineers.\nAcme Quarterly\n2",
        ]
    )
    return [
        (
            "reading.md",
            markdown,
            [
                # Table rows read as statements; a book is a product.
                E("Piranesi: rating 5/5", "fact", today, ("Piranesi", "Product")),
                E("Dune: rating 4/5", "fact", today, ("Dune", "Product")),
                # List items carry their heading; the code block and front matter are no facts.
                E("Allergies: peanuts", "fact", today),
                E("Allergies: shellfish", "fact", today),
                E("Bob works at Acme.", "fact", today, ("Bob", PERSON), ("Acme", ORG)),
                E("I met Marco at the book club.", "episode", today, ("Marco", PERSON)),
            ],
        ),
        (
            "trip.html",
            html,
            [
                # Navigation, footer and script are page furniture, not memories.
                E("We stayed in Alfama for a week.", "episode", today, ("Alfama", PLACE)),
                E("The tram was always full.", "episode", today),
                E("Packing: sunscreen", "fact", today),
                E("Packing: rain jacket", "fact", today),
                E("Monday: plan Belem tower", "foresight", _next_weekday(0), ("Belem", PLACE)),
            ],
        ),
        (
            "week.txt",
            text,
            [
                E("I moved to Berlin last month.", "episode", first_of_last_month, ("Berlin", PLACE)),
                # A wrapped line is one sentence; a lone line is a statement, not a title.
                E("The flat is small but bright.", "fact", today),
                E("Call mom tomorrow", "foresight", today + timedelta(days=1)),
                E("Shopping list: milk", "foresight", None),
                E("Shopping list: eggs", "foresight", None),
            ],
        ),
        (
            "report.pdf",
            pdf,
            [
                # Wrapped lines joined; the repeated footer and the page numbers are boilerplate.
                E(
                    "Our team moved to the new office in Porto last week.",
                    "episode",
                    ANY_DAY,
                    ("Porto", PLACE),
                ),
                E("Everyone likes the view.", "fact", today),
                E("Next month we will hire two engineers.", "foresight", first_of_next_month),
            ],
        ),
    ]


# Written after the mechanisms above were built and run once as they are, never tuned to: the figure
# for text the rules have not been fitted to. The labels are what a person would say.
NOTES_HELD_OUT: list[tuple[list[str], list[Expect]]] = [
    (
        ["My brother Tom is a chef in Madrid."],
        [E("My brother Tom is a chef in Madrid.", "fact", REF_DAY, ("Tom", PERSON), ("Madrid", PLACE))],
    ),
    (
        ["I started learning Spanish in January."],
        [E("I started learning Spanish in January.", "episode", date(2026, 1, 1))],
    ),
    (
        ["Next Tuesday I have a dentist appointment at 9."],
        [E("Next Tuesday I have a dentist appointment at 9.", "foresight", date(2026, 3, 17))],
    ),
    (["I always take the train to work."], [E("I always take the train to work.", "fact", REF_DAY)]),
    (
        ["Sarah and I went to the Louvre last Sunday."],
        [
            E(
                "Sarah and I went to the Louvre last Sunday.",
                "episode",
                date(2026, 3, 8),
                ("Sarah", PERSON),
                ("Louvre", PLACE),
            )
        ],
    ),
    (
        ["I'd like to visit Iceland someday."],
        [E("I'd like to visit Iceland someday.", "foresight", None, ("Iceland", PLACE))],
    ),
    (
        ["My favourite band is Radiohead."],
        [E("My favourite band is Radiohead.", "fact", REF_DAY, ("Radiohead", ORG))],
    ),
    (
        ["We adopted a cat named Miso last year."],
        [E("We adopted a cat named Miso last year.", "episode", ANY_DAY, ("Miso", "Concept"))],
    ),
    (
        ["Meeting with Priya on Monday to review the budget."],
        [
            E(
                "Meeting with Priya on Monday to review the budget.",
                "foresight",
                date(2026, 3, 16),
                ("Priya", PERSON),
            )
        ],
    ),
    (["I don't eat meat on weekdays."], [E("I don't eat meat on weekdays.", "fact", REF_DAY)]),
    (
        ["Yesterday my daughter Lily scored her first goal."],
        [
            E(
                "Yesterday my daughter Lily scored her first goal.",
                "episode",
                date(2026, 3, 13),
                ("Lily", PERSON),
            )
        ],
    ),
    (
        ["The lease on my flat ends in September."],
        [E("The lease on my flat ends in September.", "foresight", date(2026, 9, 1))],
    ),
    (["I work from home on Fridays."], [E("I work from home on Fridays.", "fact", REF_DAY)]),
    (
        ["Last week I quit my job at Deloitte."],
        [E("Last week I quit my job at Deloitte.", "episode", ANY_DAY, ("Deloitte", ORG))],
    ),
    (
        [
            "Gym plan\n\nI lift weights every Monday and Thursday.\n\n"
            "I'm going to run a half marathon in October."
        ],
        [
            E("I lift weights every Monday and Thursday.", "fact", REF_DAY),
            E("I'm going to run a half marathon in October.", "foresight", date(2026, 10, 1)),
        ],
    ),
    (
        ["Maya: We just got back from Kyoto!\nLeo: How was it?\nMaya: Amazing, we'll go again next spring."],
        [
            E("Maya: We just got back from Kyoto!", "episode", REF_DAY, ("Maya", PERSON), ("Kyoto", PLACE)),
            E("Leo: How was it?", "fact", REF_DAY, ("Leo", PERSON)),
            E("Maya: Amazing, we'll go again next spring.", "foresight", None, ("Maya", PERSON)),
        ],
    ),
]


def _world_day(memory: Memory) -> date | None:
    moment = {"episode": memory.occurred_at, "fact": memory.valid_from, "foresight": memory.due_at}[
        memory.kind
    ]
    return moment.date() if moment is not None else None


def _entities(memory: Memory) -> frozenset[tuple[str, str]]:
    return frozenset((entity.name, entity.type) for entity in memory.entities.all())


def _save_all(user: User, texts: list[str]) -> list[Memory]:
    client = pat_client(user)
    made: list[Memory] = []
    for text in texts:
        response = client.post("/api/v1/memories", {"content": text, "occurred_at": REFERENCE}, format="json")
        assert response.status_code in (201, 202), response.json()
        job = wait_for_job(response.json()["job"]["id"])
        assert job.status == "succeeded", (job.error_code, job.error_message)
        made.extend(Memory.objects.filter(job=job).order_by("span_start", "recorded_at"))
    return made


class Score:
    def __init__(self) -> None:
        self.kind_pairs: list[tuple[str, str]] = []
        self.days: list[bool] = []
        self.entities_expected = self.entities_found = self.entities_right = 0
        self.misses: list[str] = []

    def add(self, expect: Expect, memory: Memory) -> None:
        self.kind_pairs.append((expect.kind, memory.kind))
        self.days.append(expect.day is ANY_DAY or _world_day(memory) == expect.day)
        found = _entities(memory)
        self.entities_expected += len(expect.entities)
        self.entities_found += len(found)
        self.entities_right += len(found & expect.entities)
        wrong_day = expect.day is not ANY_DAY and _world_day(memory) != expect.day
        if memory.kind != expect.kind or wrong_day or found != expect.entities:
            self.misses.append(
                f"  miss: {memory.content!r}: {memory.kind} {_world_day(memory)} {sorted(found)}; "
                f"expected {expect.kind} {expect.day} {sorted(expect.entities)}"
            )

    def report(self, what: str) -> dict[str, float]:
        kinds = sorted({k for pair in self.kind_pairs for k in pair})
        lines = [f"{what}: {len(self.kind_pairs)} memories"]
        for kind in kinds:
            made = sum(1 for _, got in self.kind_pairs if got == kind)
            expected = sum(1 for want, _ in self.kind_pairs if want == kind)
            right = sum(1 for want, got in self.kind_pairs if want == got == kind)
            lines.append(
                f"  kind {kind:9} precision {right / made if made else 1:.3f} recall "
                f"{right / expected if expected else 1:.3f} (made {made}, expected {expected})"
            )
        accuracy = sum(1 for want, got in self.kind_pairs if want == got) / len(self.kind_pairs)
        days = sum(self.days) / len(self.days)
        precision = self.entities_right / self.entities_found if self.entities_found else 1.0
        recall = self.entities_right / self.entities_expected if self.entities_expected else 1.0
        lines.append(f"  kinds accuracy {accuracy:.3f}; world day right {days:.3f}")
        lines.append(
            f"  entities precision {precision:.3f} recall {recall:.3f} "
            f"(found {self.entities_found}, expected {self.entities_expected}, right {self.entities_right})"
        )
        print("\n".join(lines + self.misses))
        return {"kinds": accuracy, "days": days, "entity_precision": precision, "entity_recall": recall}


def _run(
    corpus: list[tuple[list[str], list[Expect]]], what: str, *, exact_segments: bool = True
) -> dict[str, float]:
    score = Score()
    mismatches: list[str] = []
    for index, (texts, expected) in enumerate(corpus):
        user = user_sign_up(email=f"golden{what[:4]}{index}@example.com", password="a long enough password")
        made = _save_all(user, texts)
        contents = [m.content for m in made]
        if contents != [e.content for e in expected]:
            mismatches.append(
                f"{texts!r}\n  made:     {contents!r}\n  expected: {[e.content for e in expected]!r}"
            )
            continue
        for expect, memory in zip(expected, made, strict=True):
            score.add(expect, memory)
            # Each memory says where in its source it came from.
            assert memory.span_start is not None and memory.span_end is not None
            assert memory.source is not None
            assert memory.source.content[memory.span_start : memory.span_end].strip()
    if exact_segments:
        assert not mismatches, "segmentation differs:\n" + "\n".join(mismatches)
    figures = score.report(what)
    figures["segmented"] = 1 - len(mismatches) / len(corpus)
    print(f"  saves segmented exactly: {figures['segmented']:.3f}" + "".join(f"\n  {m}" for m in mismatches))
    return figures


def test_notes_and_conversations_become_the_expected_memories():
    figures = _run(NOTES, "notes and conversations")
    assert figures["kinds"] >= 0.9
    assert figures["days"] >= 0.9
    assert figures["entity_precision"] >= 0.85
    assert figures["entity_recall"] >= 0.85


def test_documents_become_the_expected_memories():
    score = Score()
    mismatches: list[str] = []
    user = user_sign_up(email="documents@example.com", password="a long enough password")
    client = pat_client(user)
    for name, data, expected in _documents():
        response = client.post(
            "/api/v1/documents", {"file": SimpleUploadedFile(name, data), "wait": "30"}, format="multipart"
        )
        assert response.status_code == 201, response.json()
        job = wait_for_job(response.json()["job"]["id"])
        assert job.status == "succeeded", (job.error_code, job.error_message)
        made = list(Memory.objects.filter(job=job).order_by("span_start"))
        contents = [m.content for m in made]
        if contents != [e.content for e in expected]:
            mismatches.append(
                f"{name}\n  made:     {contents!r}\n  expected: {[e.content for e in expected]!r}"
            )
            continue
        for expect, memory in zip(expected, made, strict=True):
            score.add(expect, memory)
            assert memory.source is not None and memory.span_start is not None and memory.span_end is not None
            span = memory.source.content[memory.span_start : memory.span_end]
            # The span is where the statement's words are in the stored document.
            assert memory.content.split()[-1].strip(".").lower() in span.lower(), (memory.content, span)
    assert not mismatches, "segmentation differs:\n" + "\n".join(mismatches)
    figures = score.report("documents (Markdown, HTML, plain text, PDF)")
    assert figures["kinds"] >= 0.85
    assert figures["days"] >= 0.85
    assert figures["entity_precision"] >= 0.75
    assert figures["entity_recall"] >= 0.75


def test_held_out_notes_score_without_tuning():
    figures = _run(NOTES_HELD_OUT, "held-out notes", exact_segments=False)
    assert figures["segmented"] >= 0.9
    assert figures["kinds"] >= 0.8
    assert figures["days"] >= 0.8
    assert figures["entity_precision"] >= 0.75
    assert figures["entity_recall"] >= 0.75


def test_the_issue_examples_exactly():
    """The everyday cases that used to go wrong, exactly."""
    user = user_sign_up(email="examples@example.com", password="a long enough password")
    [meetings] = _save_all(user, ["I prefer morning meetings before 11:00 ... every Friday"])
    assert (meetings.kind, meetings.due_at) == ("fact", None)
    [dinner] = _save_all(user, ["Yesterday I had dinner with Marco"])
    assert (dinner.kind, _world_day(dinner)) == ("episode", date(2026, 3, 13))
    counts = Counter(m.kind for m in Memory.objects.filter(owner=user))
    assert counts == {"fact": 1, "episode": 1}


def test_a_memory_says_where_in_its_source_it_came_from():
    user = user_sign_up(email="spans@example.com", password="a long enough password")
    long_intro = "I keep a diary. " * 40  # longer than an excerpt
    made = _save_all(user, [long_intro + "\n\nMy locker code is 4711."])
    locker = next(m for m in made if "4711" in m.content)
    body = pat_client(user).get(f"/api/v1/memories/{locker.id}").json()
    start, end = body["provenance"]["span"]
    assert locker.source is not None and locker.source.content[start:end] == "My locker code is 4711."
    # The excerpt shows the statement's own part of the source, not the source's first lines.
    assert "My locker code is 4711." in body["source_excerpt"]

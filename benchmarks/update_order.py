"""Update order: when a fact of a person changes between conversations, does `recall` find both
statements and rank the newest first for a question about how things stand (the oldest first for a
question about the earlier state)?

    .venv/bin/python benchmarks/update_order.py [--data FILE] [--cases ID ...] [--explain] [--json FILE]
        [--variant 'knob=value,...' ...]

The cases are in `benchmarks/data/update_order.json` (its "about" says how it was written): each is
one person's chat over 3-6 sessions weeks apart, "User: ..." and "Assistant: ..." turns, in which a
count, a value, a place, an employer, a schedule, a possession or a preference (theirs or a friend's)
changes, often said in passing inside a longer message about something else, among turns about other
topics and turns that ask about the topic without giving a value. The user turns that state a value
are the evidence ("old" and "new"). A throwaway service gets one user per case; every turn is saved
with REST `POST /api/v1/memories` as `longmemeval.py` saves LongMemEval's (content "<Role>: text",
`occurred_at` = the session's date, `session_id` = the session), and once every job has finished the
question is asked through `POST /api/v1/operations/recall` with top_k 20 and `at` = the question's
date. A memory counts for the turn it was derived from; recall@k is the share of a case's evidence
turns among the first k hits. Order: for a question about now, whether the newest evidence turn's
best hit ranks above every older evidence turn's ("newest first"); for a question about the earlier
state, whether the oldest's ranks above every newer one's ("oldest first"). An evidence turn missing
from the 20 hits ranks below all of them; the one that should lead must be among them.

The ingest is cached as `longmemeval.py`'s is: the service's data folder is kept in
`var/benchmarks/update_order-<hash>/`, the hash covering the ingest code (longmemeval's key) and the
data file, so a ranking change is measured again in a minute. `--fresh` ingests into a new folder.

`--variant` (repeatable, as longmemeval.py's) then scores ranking knobs in process on the same
stored data: `--variant newest_said_share=0 --variant ''` compares a rule off and on in one run.

`--data FILE` scores another set of cases in the same format. `benchmarks/data/update_order_2.json`
is a second set, written blind on 6 December 2026 by a second helper who had read neither the
ranking nor the first set's cases (only its first case, for the format, and its questions, to
choose other topics), before anything was run against a service; its cache folder is its own, since
the key covers the data file. Its first run, blind (stop 52, on 54563a0), and the same stored data
with "newest said first" off (`newest_said_share` 0 in the service's knobs, the only change):

                                   rule off     54563a0 (first try, blind)
    R@5 / R@10 / R@20              0.850 / 0.947 / 0.959    0.825 / 0.947 / 0.959
    newest first (about now)       5/34         10/34
    oldest first (earlier state)   4/7          3/7
    question's words shared: high  -            8/12 newest first
                             low   -            2/22

After the earlier-state words (c55b0b7, chosen on the helper's question set, not on these cases):
newest first 10/34, oldest first 6/7, R@5 0.813. What is left is what the first set showed: a new
value said in other words than the question's ("Kiwi picked up 'good morning' ... which brings her
to 19" for "How many words can my parrot say?") is no answer to it by words.

`benchmarks/data/update_order_3.json` is a third set of 38 cases, written blind on 6 December 2026
by a third helper who had read neither the ranking nor the other sets' cases (only the first set's
first case, for the format, and both sets' questions), before anything was run against a service.
It read the figures above by mistake, not the ranking. Its first run, blind (stop 53), was on the
rule "a change said in other words" (`newest_said_change`, chosen on the first set, confirmed on
the second and on LongMemEval before this set was run), off and on, on the same stored data:

                                   off          on (first try, blind)
    R@5 / R@10 / R@20              0.750 / 0.925 / 0.952    the same
    newest first (about now)       14/31        17/31
    oldest first (earlier state)   3/7          3/7
    question's words shared: low   3/17         4/17

On the first two sets the same rule gives 19 -> 25 of 45 and 10 -> 15 of 34. A helper's attack set
(`benchmarks/data/update_order_attack53.json`, 36 cases; turns marked `decoy` hold a word of the
question and a change word but no new value) then showed what this order score cannot see: the rule
put the decoy above the value that holds in 23 of 23 questions. Every run now also reports "target
#1" (the value that holds is the first hit) and, where a set marks decoys, "decoy above" (a decoy
ranks above the value that holds). The rule as narrowed after the attack, off -> on: target #1 21 ->
28 of 52, 11 -> 16 of 41, 9 -> 12 of 38, 22 -> 26 of 36 (docs/retrieval.md, "Update order, fifth
round").

First runs, blind (6 December 2026, a machine shared with another helper). The cases were committed
(8d446cd, rebased unchanged as 78ad83d) before anything was run against a service; no case changed
after. 52 cases, 1652 turns, one memory a turn, ingest 40 turns/s. Both runs on the same stored data:

                                   a42c3cf      659eb47 ("newest said first", issue 41)
    R@5 / R@10 / R@20              0.878 / 0.933 / 0.942    the same
    newest first (about now)       4/45         15/45
    oldest first (earlier state)   5/7          4/7
    in order, both                 9/52         19/52
    newest said in passing         1/34         9/34 newest first
    newest said plainly            3/11         6/11
    question's words shared: high  2/31         12/31
                             low   2/14         3/14
    German, Spanish, French        0/5          3/5 newest first (R@10 1.000)

On 659eb47, 11 "now" cases came into order and none went out; one "earlier" case did ("Where did Tom
live before he moved?"). Of the 30 "now" cases still out of order an older statement ranks #1 in 24.
Recall finds the evidence; the order is what fails.

A fourth set, `benchmarks/data/update_order_4.json`, was written blind on 6 December 2026 by a fourth
helper who had read neither the ranking nor the other sets' cases, before any run against a service.
Its first run, blind (stop 53), on the rule as narrowed after the attack (5e8406c), off -> on, same
stored data: newest first 10/28 -> 11/28, oldest first 6/7 both, target #1 6/35 -> 7/35, a decoy
above the value that holds 27/35 -> 26/35, R@10 0.910 both. On unseen cases the narrowed rule moves
little; what leads is mostly a later mention of the topic (a decoy), and the newest value said in
other words is seldom first (7 of 35).

A fifth set, `benchmarks/data/update_order_5.json` (36 cases, every one with later decoys), was
written blind on 7 December 2026 by a fifth helper, before any run. Its first run, blind (stop 54),
scored the first form of "a turn that only asks goes below" (`asking_below`, 8ea2044), off -> on:
target #1 5/36 -> 17/36, decoy above 30/36 -> 5/36, newest first 11/29 -> 15/29, R@10 0.861 ->
0.903. `benchmarks/data/update_order_attack54.json` attacks that rule (docs/retrieval.md, "Update
order, sixth round").

A sixth set, `benchmarks/data/update_order_6.json` (36 cases, 72 decoys, many holding other numbers
or names), was written blind on 7 December 2026 by a sixth helper, before any run. Its first run,
blind (stop 55), scored two rules committed before it (`change_by_referent`, `asking_own_values`),
off -> on: no change at all (newest first 10/29, target #1 7/36, decoy above 28/36).
`benchmarks/data/update_order_attack55.json` attacks both; they are off by default since
(docs/retrieval.md, "Update order, seventh round").

A seventh and an eighth set (`update_order_7.json`, `update_order_8.json`, 40 cases each) were
written blind on 7 December 2026 by two more helpers, before any run, and
`update_order_attack56.json` attacks `typed_answers_first`, which stays off; `others_below`, on,
was scored blind on the eighth set (docs/retrieval.md, "Update order, eighth round").
A ninth (`update_order_9.json`, 36 cases) was written blind the same way and first run after the
engine's new reading of who a statement is about (docs/retrieval.md, "Update order, ninth round").
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import statistics
import sys
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks._service import ROOT
from benchmarks.locomo import Conversation, Turn
from benchmarks.longmemeval import Question, cache_key, ingested, recall_variants

DATA = Path(__file__).resolve().parent / "data" / "update_order.json"
KS = (5, 10, 20)
TOP_K = 20
Asks = Literal["now", "earlier"]


@dataclass
class Case:
    id: str
    language: str
    kind: str
    said: str
    overlap: str
    asks: Asks
    question: str
    asked_at: datetime
    conversation: Conversation
    # evidence turn ids, oldest first (the sessions are in date order)
    evidence: list[str]
    # turns written to tempt a ranking rule into putting them above the target ("decoy": true in the
    # attack set); none in the other sets
    decoys: list[str] = field(default_factory=list)
    # the attack set's "must-not-move" / "should-move"; "" elsewhere
    attack: str = ""

    @property
    def target(self) -> str:
        """The evidence turn that should rank first: the newest for "now", the oldest for "earlier"."""
        return self.evidence[-1] if self.asks == "now" else self.evidence[0]

    @property
    def values(self) -> int:
        return len(self.evidence)


@dataclass
class Hit:
    turn: str
    score: float
    content: str


@dataclass
class Result:
    case: Case
    recall: dict[int, float]
    # whether the target evidence turn ranks above every other evidence turn
    in_order: bool
    # the rank (1-based) of each evidence turn's best hit; None: not among the hits
    ranks: dict[str, int | None]
    hits: list[Hit]

    @property
    def first(self) -> bool:
        """Whether the target is the first hit: what a caller that reads one memory gets. A rule
        that puts another statement above every evidence turn keeps `in_order` and loses this."""
        return self.ranks[self.case.target] == 1

    @property
    def decoy_above(self) -> bool:
        """Whether a decoy turn ranks above the target (the target missing: any decoy among the hits)."""
        turns = [hit.turn for hit in self.hits]
        lead = self.ranks[self.case.target] or len(turns) + 1
        return any(decoy in turns[: lead - 1] for decoy in self.case.decoys)


def load_cases(path: Path = DATA) -> list[Case]:
    """The cases of the data file, each with its turns as a Conversation (turn ids "<session>:<turn>")."""
    raw = json.loads(path.read_text())
    cases = []
    for data in raw["cases"]:
        turns: list[Turn] = []
        evidence: list[str] = []
        decoys: list[str] = []
        for s, session in enumerate(data["sessions"]):
            when = datetime.fromisoformat(session["date"])
            session_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"update_order/{data['id']}/{s}"))
            for t, turn in enumerate(session["turns"]):
                role = "User" if turn["role"] == "user" else "Assistant"
                turns.append(Turn(f"{s}:{t}", f"{role}: {turn['text']}", when, session_id))
                if turn.get("evidence"):
                    evidence.append(f"{s}:{t}")
                if turn.get("decoy"):
                    decoys.append(f"{s}:{t}")
        cases.append(
            Case(
                id=data["id"],
                language=data["language"],
                kind=data["kind"],
                said=data["said"],
                overlap=data["overlap"],
                asks=data["asks"],
                question=data["question"],
                asked_at=datetime.fromisoformat(data["question_date"]),
                conversation=Conversation(data["id"], turns, []),
                evidence=evidence,
                decoys=decoys,
                attack=data.get("attack", ""),
            )
        )
    return cases


def score(case: Case, hits: list[Hit]) -> Result:
    """Recall@k of the evidence among the hits, and whether the target evidence turn leads."""
    turns = [hit.turn for hit in hits]
    recall = {k: len(set(case.evidence) & set(turns[:k])) / len(case.evidence) for k in KS}
    ranks: dict[str, int | None] = {e: (turns.index(e) + 1 if e in turns else None) for e in case.evidence}
    lead = ranks[case.target]
    in_order = lead is not None and all(
        rank is None or lead < rank for turn, rank in ranks.items() if turn != case.target
    )
    return Result(case, recall, in_order, ranks, hits)


def ask(client: httpx.Client, case: Case) -> Result:
    response = client.post(
        "/api/v1/operations/recall",
        json={"query": case.question, "top_k": TOP_K, "at": case.asked_at.isoformat()},
        headers={"Authorization": f"Bearer {case.conversation.token}"},
    )
    response.raise_for_status()
    memory_turn = case.conversation.memory_turn
    hits = [
        Hit(memory_turn.get(hit["id"], "?"), float(hit["score"]), str(hit["content"]))
        for hit in response.json()["memories"]
    ]
    return score(case, hits)


def data_key(path: Path = DATA) -> str:
    """The cache folder's key: the ingest code's (as longmemeval.py's) and the cases'."""
    digest = hashlib.sha256(cache_key().encode())
    digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def score_variants(
    var_dir: Path, cases: list[Case], variants: list[str], timings: dict[str, list[float]] | None = None
) -> dict[str, list[Result]]:
    """Each variant of the ranking knobs ('newest_said_share=0'; '' = defaults) scored in process on
    the running service's database, as longmemeval.py's `--variant` (`recall_variants`; `timings`
    gets each recall's milliseconds by variant)."""
    asked = [(case.id, case.question, case.asked_at) for case in cases]
    results: dict[str, list[Result]] = {}
    for variant, found in recall_variants(var_dir, "uorder", asked, variants, TOP_K, timings).items():
        results[variant] = [
            score(
                case,
                [
                    Hit(case.conversation.memory_turn.get(str(h.memory.id), "?"), h.score, h.memory.content)
                    for h in result.hits
                ],
            )
            for case, result in zip(cases, found, strict=True)
        ]
    return results


def measure(
    cases: list[Case],
    *,
    data: Path = DATA,
    fresh: bool = False,
    threads: int = 2,
    variants: Sequence[str] = (),
    timings: dict[str, list[float]] | None = None,
) -> tuple[list[Result], dict[str, list[Result]]]:
    """Ingest the cases the cached folder lacks (one user each), then ask every case's question;
    then score `variants` of the ranking knobs in process. `data` is the file the cases came from:
    the cache folder is keyed on it."""
    var_dir = ROOT / "var" / "benchmarks" / f"update_order-{data_key(data)}"
    if fresh and var_dir.exists():
        shutil.rmtree(var_dir)
    # longmemeval's ingest runs on its Question; a case is one with its conversation (the same object).
    as_questions = [Question({"question_id": c.id}, c.conversation, {}, {}) for c in cases]
    with ingested(var_dir, as_questions, threads=threads, email_prefix="uorder") as client:
        results = [ask(client, case) for case in cases]
        scored = score_variants(var_dir, cases, list(variants), timings) if variants else {}
    return results, scored


# --- the report --------------------------------------------------------------------------------


def order_line(results: list[Result], asks: Asks) -> str:
    chosen = [r for r in results if r.case.asks == asks]
    return f"{sum(r.in_order for r in chosen)}/{len(chosen)}" if chosen else "-"


def report(results: list[Result]) -> None:
    groups: list[tuple[str, Callable[[Case], str]]] = [
        ("language", lambda c: c.language),
        ("newest said", lambda c: c.said),
        ("words shared", lambda c: c.overlap),
        ("values", lambda c: str(c.values)),
        ("kind", lambda c: c.kind),
    ]
    if any(r.case.attack for r in results):
        groups.append(("attack", lambda c: c.attack))
    header = f"{'':<22}{'n':>4}" + "".join(f"{'R@' + str(k):>7}" for k in KS)
    decoyed = any(r.case.decoys for r in results)
    print(
        header
        + f"{'newest first':>14}{'oldest first':>14}{'in order':>10}{'target #1':>11}"
        + (f"{'decoy above':>13}" if decoyed else "")
    )

    def line(label: str, chosen: list[Result]) -> None:
        row = f"{label:<22}{len(chosen):>4}"
        row += "".join(f"{statistics.mean(r.recall[k] for r in chosen):>7.3f}" for k in KS)
        row += f"{order_line(chosen, 'now'):>14}{order_line(chosen, 'earlier'):>14}"
        row += f"{sum(r.in_order for r in chosen)}/{len(chosen)}".rjust(10)
        row += f"{sum(r.first for r in chosen)}/{len(chosen)}".rjust(11)
        if decoyed:
            with_decoys = [r for r in chosen if r.case.decoys]
            row += f"{sum(r.decoy_above for r in with_decoys)}/{len(with_decoys)}".rjust(13)
        print(row)

    line("all", results)
    for title, key in groups:
        print(f"by {title}")
        for value in sorted({key(r.case) for r in results}):
            line(f"  {value}", [r for r in results if key(r.case) == value])


def explain(result: Result, *, shown: int = 10) -> None:
    """The top hits of a case out of order: rank, turn, session date, score, content."""
    case = result.case
    turns = {t.dia_id: t for t in case.conversation.turns}
    label = {e: "new" if e == case.evidence[-1] else "old" for e in case.evidence}
    print(f"\n{case.id} [{case.asks}, {case.said}] asked {case.asked_at:%Y-%m-%d}: {case.question}")
    print(
        "  evidence: "
        + ", ".join(
            f"{e} {label[e]} ({turns[e].occurred_at:%Y-%m-%d}) #{result.ranks[e] or '-'}"
            for e in case.evidence
        )
    )
    for position, hit in enumerate(result.hits[:shown], start=1):
        mark = f"{label[hit.turn]:>3}" if hit.turn in label else "   "
        turn = turns.get(hit.turn)
        when = f"{turn.occurred_at:%Y-%m-%d}" if turn else "?"
        words = " ".join(hit.content.split())[:100]
        print(f"  {mark} {position:>2} {hit.turn:>6} {when} {hit.score:6.3f} {words}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the cases' file (default: the first set)")
    parser.add_argument("--cases", nargs="+", help="only these case ids")
    parser.add_argument("--fresh", action="store_true", help="ingest again into a new folder")
    parser.add_argument("--threads", type=int, default=2, help="cases saved at the same time")
    parser.add_argument(
        "--explain", action="store_true", help="print the top hits of every case out of order"
    )
    parser.add_argument("--json", type=Path, help="also write every case's result here")
    parser.add_argument(
        "--variant",
        action="append",
        help="then score these ranking knobs in process ('newest_said_share=0'; '' = defaults)",
    )
    args = parser.parse_args()
    cases = load_cases(args.data)
    if args.cases:
        unknown = set(args.cases) - {c.id for c in cases}
        if unknown:
            raise SystemExit(f"no such cases: {', '.join(sorted(unknown))}")
        cases = [c for c in cases if c.id in args.cases]
    timings: dict[str, list[float]] = {}
    results, variants = measure(
        cases,
        data=args.data,
        fresh=args.fresh,
        threads=args.threads,
        variants=args.variant or [],
        timings=timings,
    )
    turns = sum(len(c.conversation.turns) for c in cases)
    print()
    print(
        f"update order ({args.data.name}): {len(cases)} cases, {turns} turns,"
        f" top_k {TOP_K} at the question's date"
    )
    report(results)
    for variant, variant_results in variants.items():
        print()
        print(f"in process, knobs: {variant or 'defaults'}")
        report(variant_results)
        times = sorted(timings.get(variant, []))
        if times:
            print(
                f"recall in process (the question's vector given; each question asked under every variant"
                f" in turn): p50 {statistics.median(times):.1f} ms,"
                f" p95 {times[min(len(times) - 1, int(0.95 * len(times)))]:.1f} ms over {len(times)}"
            )
    if args.explain:
        for result in results:
            if not result.in_order:
                explain(result)
    if args.json:
        args.json.write_text(
            json.dumps(
                [
                    {"id": r.case.id, "asks": r.case.asks, "language": r.case.language, "said": r.case.said}
                    | {"recall": r.recall, "in_order": r.in_order, "ranks": r.ranks}
                    | {"hits": [asdict(h) for h in r.hits]}
                    for r in results
                ],
                indent=1,
                ensure_ascii=False,
            )
        )


if __name__ == "__main__":
    main()

"""LoCoMo retrieval benchmark: evidence recall@5/10/20 of `recall`, its latency, and ingest rate.

    .venv/bin/python benchmarks/locomo.py [--conversations 26 30 41] [--no-session-ids]

The task is the one in ../shared/benchmarks/locomo/README.md, run through the service's own API:
a throwaway service (`manage.py up` on a temporary data folder) gets one user per conversation, so
conversations never mix; every turn is saved with REST `POST /api/v1/memories` (one save per turn,
content "Speaker: text" plus "(shared a photo: caption)" when the turn has one, `occurred_at` = the
session's date; `--session-ids` also sends each session's own id as `session_id`);
then, once every job has finished, each question of categories 1-4 is asked through
`POST /api/v1/operations/recall` with top_k 20. A memory counts for the turn it was derived from
(the job -> memories map of `GET /api/v1/jobs`). Questions whose evidence list is empty count as 0.

Latency is the client's wall time per recall call (HTTP, query embedding and database included),
one call at a time. Ingest rate is turns saved per second, from the first save until the last job
has finished.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from unittest import mock

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks import _service
from benchmarks._service import ROOT, running_service, shared_data

DATA_DIR = shared_data("locomo")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (5, 10, 20)
# The README's reference rows (turn-level, 385 questions on 26/30/41).
BASELINES = {
    "all-MiniLM-L6-v2 cosine": (0.374, 0.498, 0.608),
    "full text, OR of lexemes": (0.539, 0.611, 0.662),
    "both fused with RRF (k=10)": (0.553, 0.668, 0.765),
}


# --- the service -------------------------------------------------------------------------------


@contextmanager
def service_with_data_dir(*, keep: bool = False) -> Iterator[tuple[str, str, Path]]:
    """`running_service()`, plus the data folder it made (to run manage.py against the same service)."""
    made: list[str] = []
    real_mkdtemp = tempfile.mkdtemp

    def remembering_mkdtemp(*args: Any, **kwargs: Any) -> str:
        path = real_mkdtemp(*args, **kwargs)
        made.append(path)
        return path

    with ExitStack() as stack:
        # running_service() keeps its data folder to itself; catching the one mkdtemp it calls is
        # the least intrusive way to reach the same embedded database from here.
        with mock.patch.object(_service.tempfile, "mkdtemp", remembering_mkdtemp):
            url, token = stack.enter_context(running_service(keep=keep))
        yield url, token, Path(made[0])


def manage_env(data_dir: Path) -> dict[str, str]:
    env = {**os.environ, "DEEPRECALL_VAR_DIR": str(data_dir)}
    env.pop("DATABASE_URL", None)
    return env


def create_users(data_dir: Path, emails: list[str]) -> list[str]:
    """A user with a read+write personal access token for each email; returns the tokens."""
    code = (
        "import json, sys\n"
        "from memories.services.account import user_sign_up\n"
        "from accounts.services import pat_create\n"
        f"emails = {json.dumps(emails)}\n"
        "tokens = []\n"
        "for email in emails:\n"
        "    user = user_sign_up(email=email, password='bench-password-123')\n"
        "    tokens.append(pat_create(user=user, name='bench', scopes=['memory:read', 'memory:write'])[1])\n"
        "print('TOKENS ' + json.dumps(tokens))\n"
    )
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "shell", "-c", code],
        cwd=ROOT,
        env=manage_env(data_dir),
        capture_output=True,
        text=True,
        check=True,
    )
    line = next(line for line in done.stdout.splitlines() if line.startswith("TOKENS "))
    return list(json.loads(line[len("TOKENS ") :]))


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


# --- the data ----------------------------------------------------------------------------------


@dataclass
class Turn:
    dia_id: str
    content: str
    occurred_at: datetime
    session_id: str


@dataclass
class Conversation:
    name: str
    turns: list[Turn]
    questions: list[dict[str, Any]]
    token: str = ""
    memory_turn: dict[str, str] = field(default_factory=dict)
    failed_jobs: int = 0
    # Turns the save refused as having nothing to remember (no job, no memory).
    refused: int = 0


def session_date(raw: str) -> datetime:
    """ "1:56 pm on 8 May, 2023" -> 2023-05-08T13:56:00+00:00."""
    return datetime.strptime(" ".join(raw.split()), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def load_conversation(path: Path) -> Conversation:
    data = json.loads(path.read_text())
    conversation = data.get("conversation", data)
    turns: list[Turn] = []
    numbers = sorted(
        int(match.group(1)) for key in conversation if (match := re.fullmatch(r"session_(\d+)", key))
    )
    for number in numbers:
        when = session_date(conversation[f"session_{number}_date_time"])
        session_id = str(uuid.uuid4())
        for turn in conversation[f"session_{number}"]:
            content = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                content += f" (shared a photo: {turn['blip_caption']})"
            turns.append(Turn(turn["dia_id"], content, when, session_id))
    questions = [q for q in data["qa"] if q.get("category") in CATEGORIES]
    return Conversation(path.stem, turns, questions)


def evidence_of(question: dict[str, Any]) -> set[str]:
    # One entry in the data holds two ids ("D8:6; D9:17").
    return {
        part.strip()
        for item in question.get("evidence") or []
        for part in str(item).split(";")
        if part.strip()
    }


# --- the run -----------------------------------------------------------------------------------


def ingest(client: httpx.Client, conversation: Conversation, *, session_ids: bool) -> dict[str, str]:
    """Save every turn in order; return job id -> dia id. A turn the save refuses as having nothing
    to remember (LongMemEval holds turns such as "User: " with no text) is counted in
    `conversation.refused` and left out, as a client would; any other refusal stops the run."""
    headers = {"Authorization": f"Bearer {conversation.token}"}
    jobs: dict[str, str] = {}
    for turn in conversation.turns:
        body: dict[str, Any] = {"content": turn.content, "occurred_at": turn.occurred_at.isoformat()}
        if session_ids:
            body["session_id"] = turn.session_id
        response = client.post("/api/v1/memories", json=body, headers=headers)
        if response.status_code == 422 and response.json()["error"]["code"] == "nothing_to_remember":
            conversation.refused += 1
            continue
        response.raise_for_status()
        jobs[response.json()["job"]["id"]] = turn.dia_id
    return jobs


def wait_for_jobs(client: httpx.Client, conversation: Conversation, jobs: dict[str, str]) -> None:
    """Wait until no job of the user is queued or running, then map memories to turns."""
    headers = {"Authorization": f"Bearer {conversation.token}"}
    while True:
        busy = 0
        for status in ("queued", "running"):
            page = client.get("/api/v1/jobs", params={"status": status, "page_size": 1}, headers=headers)
            page.raise_for_status()
            busy += len(page.json()["results"])
        if not busy:
            break
        time.sleep(0.5)
    url: str | None = "/api/v1/jobs?page_size=100"
    while url:
        page = client.get(url, headers=headers)
        page.raise_for_status()
        body = page.json()
        for job in body["results"]:
            if job["status"] != "succeeded":
                conversation.failed_jobs += 1
            for memory_id in job["memory_ids"]:
                conversation.memory_turn[memory_id] = jobs[job["id"]]
        url = body["next"]


def ask(
    client: httpx.Client, conversation: Conversation, top_k: int, latencies: list[float]
) -> list[tuple[int, dict[int, float]]]:
    """(category, {k: evidence recall@k}) for every question."""
    headers = {"Authorization": f"Bearer {conversation.token}"}
    scores = []
    for question in conversation.questions:
        started = time.perf_counter()
        response = client.post(
            "/api/v1/operations/recall",
            json={"query": str(question["question"]), "top_k": top_k},
            headers=headers,
        )
        latencies.append(time.perf_counter() - started)
        response.raise_for_status()
        turns = [conversation.memory_turn.get(hit["id"], "?") for hit in response.json()["memories"]]
        evidence = evidence_of(question)
        recall = {k: (len(evidence & set(turns[:k])) / len(evidence) if evidence else 0.0) for k in KS}
        scores.append((int(question["category"]), recall))
    return scores


# --- leave one conversation out, distractors (in process, against the same service's database) ----


# The ranking's tunable constants (memories.retrieval.Knobs) and the values tried for each, the
# default among them. Cost bounds (pool sizes, samples, scans) are not ranking choices and stay put.
LOO_GRID: dict[str, tuple[float, ...]] = {
    "rrf_k": (5, 10, 20, 40),
    "rrf_share": (0.0, 0.1, 0.25, 0.5, 1.0),
    "text_weight": (0.25, 0.5, 0.75, 1.0),
    "bm25_k1": (0.6, 1.2, 2.0),
    "bm25_b": (0.0, 0.3, 0.75),
    "speaker_boost": (0.0, 0.15, 0.3, 0.6),
    "time_boost": (0.0, 0.1, 0.2, 0.4),
    "dated_boost": (0.0, 0.1, 0.2, 0.4),
    "context_next": (0.0, 0.15, 0.3, 0.6),
    "context_previous": (0.0, 0.05, 0.1, 0.2),
    "context_from_top": (10, 30, 60),
    "context_decay": (0.0, 0.3, 0.5, 0.7),
    "semantic_floor": (0.2, 0.3, 0.4),
    # Issue 41's, chosen on LongMemEval; LoCoMo checks they carry over (or do no harm).
    "own_boost": (0.0, 0.3, 0.6, 1.0),
    "own_floor": (0.1, 0.2, 0.3),
    "sibling_share": (0.25, 0.5, 1.0),
    "recency_boost": (0.0, 0.3, 0.6),
    "present_recency": (0.0, 0.15, 0.3),
    "restated_share": (0.5, 0.7, 1.0),
    "newest_said_share": (0.0, 0.4, 0.5, 0.6),
    "calendar_periods": (0.0, 1.0),
    "slot_holders_first": (0.0, 1.0),
    "newest_said_change": (0.0, 1.0),
    "then_history": (0.0, 1.0),
    "asking_below": (0.0, 1.0),
}


@dataclass
class InProcess:
    """A conversation's owner and space in this process, and its questions' query vectors."""

    conversation: Conversation
    owner: Any
    space: Any
    vectors: list[list[float]]


def in_process(conversations: list[Conversation], data_dir: Path) -> list[InProcess]:
    _service.use_service_database(data_dir)
    from accounts.models import User
    from memories import embeddings
    from memories.selectors.spaces import space_default

    prepared = []
    for conversation in conversations:
        owner = User.objects.get(email=f"locomo-{conversation.name}@example.com")
        vectors = embeddings.embed([str(q["question"]) for q in conversation.questions])
        prepared.append(InProcess(conversation, owner, space_default(owner=owner), vectors))
    return prepared


def score_in_process(item: InProcess, knobs: Any) -> list[tuple[int, dict[int, float]]]:
    """`ask`'s scores, with `memory_recall` called directly with `knobs` (the same code the API runs)."""
    from memories.retrieval.recall import RecallRequest, memory_recall

    scores = []
    for question, vector in zip(item.conversation.questions, item.vectors, strict=True):
        result = memory_recall(
            owner=item.owner,
            space=item.space,
            request=RecallRequest(query=str(question["question"]), top_k=max(KS)),
            knobs=knobs,
            query_vector=vector,
        )
        turns = [item.conversation.memory_turn.get(str(hit.memory.id), "?") for hit in result.hits]
        evidence = evidence_of(question)
        recall = {k: (len(evidence & set(turns[:k])) / len(evidence) if evidence else 0.0) for k in KS}
        scores.append((int(question["category"]), recall))
    return scores


def mean_recall(
    scores: list[tuple[int, dict[int, float]]], *, k: int = 10, category: int | None = None
) -> float:
    values = [r[k] for cat, r in scores if category is None or cat == category]
    return statistics.mean(values) if values else 0.0


def leave_one_out(prepared: list[InProcess], knobs_filter: list[str] | None) -> None:
    """For every knob: the value best on two conversations (R@10, the others at their defaults),
    scored on the third; beside it the default's score on the same held-out conversation."""
    import dataclasses

    from memories.retrieval.recall import DEFAULT_KNOBS

    names = [c.conversation.name for c in prepared]
    started = time.perf_counter()
    default_scores = {c.conversation.name: score_in_process(c, DEFAULT_KNOBS) for c in prepared}
    print()
    print(
        "in process, default knobs (sanity: the API figures above): R@10 "
        + ", ".join(f"{name} {mean_recall(default_scores[name]):.3f}" for name in names)
    )
    print()
    print("leave one conversation out: each knob chosen on two conversations (R@10), scored on the third")
    header = f"{'knob':<18}{'default':>9}" + "".join(f"{'pick ~' + n:>10}" for n in names)
    header += f"{'LOO R@10':>10}{'default':>9}{'LOO temp':>10}{'default':>9}{'grid R@10 range':>18}"
    print(header)
    all_scores = [s for name in names for s in default_scores[name]]
    for knob, grid in LOO_GRID.items():
        if knobs_filter and knob not in knobs_filter:
            continue
        default = getattr(DEFAULT_KNOBS, knob)
        by_value: dict[float, dict[str, list[tuple[int, dict[int, float]]]]] = {}
        for value in grid:
            if value == default:
                by_value[value] = default_scores
                continue
            cast = int(value) if isinstance(default, int) else float(value)
            knobs = dataclasses.replace(DEFAULT_KNOBS, **{knob: cast})  # type: ignore[arg-type]
            by_value[value] = {c.conversation.name: score_in_process(c, knobs) for c in prepared}
        picks: list[str] = []
        held_out: list[tuple[int, dict[int, float]]] = []
        for name in names:
            others = [n for n in names if n != name]

            def train(
                value: float,
                others: list[str] = others,
                by_value: dict[float, dict[str, list[tuple[int, dict[int, float]]]]] = by_value,
            ) -> float:
                return mean_recall([s for n in others for s in by_value[value][n]])

            # Ties go to the default, then to the value nearer to it: a plateau is not a choice.
            best = max(grid, key=lambda v: (round(train(v), 6), v == default, -abs(v - default)))
            picks.append(f"{best:g}")
            held_out.extend(by_value[best][name])
        pooled = [mean_recall([s for n in names for s in by_value[v][n]]) for v in grid]
        print(
            f"{knob:<18}{default:>9g}"
            + "".join(f"{p:>10}" for p in picks)
            + f"{mean_recall(held_out):>10.3f}{mean_recall(all_scores):>9.3f}"
            + f"{mean_recall(held_out, category=2):>10.3f}{mean_recall(all_scores, category=2):>9.3f}"
            + f"{f'{min(pooled):.3f}-{max(pooled):.3f}':>18}"
        )
    print(f"({time.perf_counter() - started:.0f} s; LOO = the held-out conversations' questions pooled)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", nargs="+", default=["26", "30", "41"])
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--top-k", type=int, default=20)
    parser.add_argument("--no-session-ids", action="store_true", help="save turns without their session's id")
    parser.add_argument(
        "--loo", action="store_true", help="also the leave-one-conversation-out table of the ranking's knobs"
    )
    parser.add_argument("--loo-knobs", nargs="*", help="only these knobs in the leave-one-out table")
    parser.add_argument(
        "--distractors",
        type=int,
        default=0,
        help="then load this many unrelated memories into every conversation's space and ask again",
    )
    args = parser.parse_args()
    conversations = [load_conversation(args.data_dir / f"{name}.json") for name in args.conversations]

    with service_with_data_dir() as (url, _token, data_dir):
        tokens = create_users(data_dir, [f"locomo-{c.name}@example.com" for c in conversations])
        for conversation, token in zip(conversations, tokens, strict=True):
            conversation.token = token
        with httpx.Client(base_url=url, timeout=120) as client:
            started = time.perf_counter()
            jobs: dict[str, dict[str, str]] = {}

            def run_ingest(conversation: Conversation) -> None:
                jobs[conversation.name] = ingest(client, conversation, session_ids=not args.no_session_ids)

            # One thread per conversation: turns of one conversation are saved in order.
            threads = [threading.Thread(target=run_ingest, args=(c,)) for c in conversations]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            saved = time.perf_counter() - started
            for conversation in conversations:
                wait_for_jobs(client, conversation, jobs[conversation.name])
            ingested = time.perf_counter() - started

            latencies: list[float] = []
            ask(client, conversations[0], args.top_k, [])  # warm-up: first calls load code paths
            scores = [s for c in conversations for s in ask(client, c, args.top_k, latencies)]
            report(args, conversations, scores, latencies, ingested, saved)

            if args.loo or args.distractors:
                prepared = in_process(conversations, data_dir)
            if args.loo:
                leave_one_out(prepared, args.loo_knobs)
            if args.distractors:
                from django.db import connection

                from benchmarks.distractors import distractors, load_distractors

                print()
                print(
                    f"distractor mode: {args.distractors:,} unrelated memories in every conversation's space"
                )
                data = distractors(count=args.distractors)
                load_distractors(spaces=[item.space for item in prepared], data=data)
                connection.close()
                crowded_latencies: list[float] = []
                ask(client, conversations[0], args.top_k, [])
                crowded = [s for c in conversations for s in ask(client, c, args.top_k, crowded_latencies)]
                print()
                print(
                    f"{'category':<22}{'n':>5}{'clean R@10':>12}{'+distractors':>14}"
                    f"{'clean R@20':>12}{'+distr.':>9}"
                )
                for cat, label in [*CATEGORIES.items(), (None, "overall")]:
                    chosen = [r for c, r in scores if cat is None or c == cat]
                    print(
                        f"{(f'{cat} ' if cat else '') + label:<22}{len(chosen):>5}"
                        f"{mean_recall(scores, category=cat):>12.3f}"
                        f"{mean_recall(crowded, category=cat):>14.3f}"
                        f"{mean_recall(scores, k=20, category=cat):>12.3f}"
                        f"{mean_recall(crowded, k=20, category=cat):>9.3f}"
                    )
                p50, p95 = (percentile(crowded_latencies, p) * 1000 for p in (50, 95))
                print(f"recall latency with distractors: p50 {p50:.1f} ms, p95 {p95:.1f} ms")


def report(
    args: argparse.Namespace,
    conversations: list[Conversation],
    scores: list[tuple[int, dict[int, float]]],
    latencies: list[float],
    ingested: float,
    saved: float,
) -> None:

    turns = sum(len(c.turns) for c in conversations)
    memories = sum(len(c.memory_turn) for c in conversations)
    print(f"LoCoMo conversations {' '.join(args.conversations)}: {turns} turns, {len(scores)} questions")
    print(
        f"ingest: {turns / ingested:.1f} turns/s end to end ({ingested:.0f} s until every job finished; "
        f"saves accepted at {turns / saved:.1f}/s); {memories} memories; "
        f"{sum(c.failed_jobs for c in conversations)} jobs not succeeded; "
        f"session ids {'off' if args.no_session_ids else 'on'}"
    )
    print()
    print(f"{'category':<22}{'n':>5}{'R@5':>8}{'R@10':>8}{'R@20':>8}")
    rows = [(f"{c} {CATEGORIES[c]}", [r for cat, r in scores if cat == c]) for c in CATEGORIES]
    rows.append(("overall", [r for _, r in scores]))
    for label, values in rows:
        if values:
            means = [statistics.mean(v[k] for v in values) for k in KS]
            print(f"{label:<22}{len(values):>5}" + "".join(f"{m:>8.3f}" for m in means))
    print()
    print("reference rows of the README (same split, turn level):")
    for label, (r5, r10, r20) in BASELINES.items():
        print(f"  {label:<30}{r5:>8.3f}{r10:>8.3f}{r20:>8.3f}")
    print()
    print(
        f"recall latency over {len(latencies)} calls (HTTP, query embedding included, top_k {args.top_k}): "
        f"p50 {percentile(latencies, 50) * 1000:.1f} ms, p95 {percentile(latencies, 95) * 1000:.1f} ms, "
        f"max {max(latencies) * 1000:.1f} ms"
    )
    empty = sum(1 for c in conversations for q in c.questions if not evidence_of(q))
    if empty:
        print(f"({empty} question(s) have no evidence turns and count as 0)")


if __name__ == "__main__":
    main()

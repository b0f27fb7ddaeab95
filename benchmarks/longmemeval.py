"""LongMemEval retrieval benchmark: turn and session recall@5/10/20 of `recall` per question type,
update order for knowledge-update questions, recall latency and ingest rate.

    .venv/bin/python benchmarks/longmemeval.py [--per-type 3] [--questions ID ...] [--via import]

The task is the one in ../shared/benchmarks/longmemeval/README.md, run through the service's own
API as `locomo.py` runs LoCoMo's: one user (so one space) per question; every turn of its haystack
is saved with REST `POST /api/v1/memories` in order (content "User: text" or "Assistant: text",
`occurred_at` = its session's date, `session_id` = its session), and once every job has finished
the question is asked through `POST /api/v1/operations/recall` with top_k 20 and `at` = the
question's date. A memory counts for the turn it was derived from (the job -> memories map of
`GET /api/v1/jobs`). Abstention questions (`_abs`) have no evidence and are left out.

`--via import` brings each question's haystack in with one `POST /api/v1/imports` instead (a mem0
`get_all` file of the same turns, each with its id, content, session date and session: the same
memories a save of each turn makes, issue 44), in its own cache folder; the ingest rate is then the
import's, and `benchmarks/imports.py` compares the two paths on LoCoMo.

`--per-type N` is the quick mode: for each question type, the first N non-abstention questions in
the order of their ids (a fixed rule, the same subset on every run); without it, all 158.

Ingesting is the cost (about 500 turns a question, about 10 turns a second end to end), so it is
done once: the service's data folder is kept in `var/benchmarks/longmemeval-<hash>/`, where the hash
covers the code that turns a save into memories (memories/pipeline/, the embedding model's code,
the save service) and this file's way of saving. A later run starts the service on that folder
again, saves only the questions it does not hold yet and re-asks all of them, so a ranking change
(memories/retrieval/) is measured in minutes. A change to the ingest code makes a new folder;
`--fresh` ingests again into a new one regardless; `--cache DIR` uses that folder whatever the key (a
ranking change scored on data ingested by an earlier commit: the key names the ingest code, not
recall's). The ingest rate printed is that of the turns
saved in this run; the rate of the run that saved the others is kept in the folder's manifest.

Latency is the client's wall time per recall call (HTTP, query embedding and database included),
one call at a time.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import re
import shutil
import statistics
import sys
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks._service import ROOT, running_service, shared_data

if TYPE_CHECKING:
    from memories.retrieval.recall import RecallResult
from benchmarks.locomo import Conversation, Turn, create_users, ingest, percentile, wait_for_jobs

DATA_DIR = shared_data("longmemeval") / "dev"
KS = (5, 10, 20)
TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "temporal-reasoning",
    "knowledge-update",
)
# How a turn is saved; part of the cache key (a change here means the stored data differs).
SAVE_FORMAT = "v1: '<Role>: content', occurred_at = session date, session_id per session"
# The code a save goes through on its way to memories: a change to any of it invalidates the cache.
INGEST_CODE = (
    "memories/pipeline",
    "memories/embeddings.py",
    "memories/onnx_model.py",
    "memories/services/memories.py",
    "memories/models.py",
    # The batch writer (store.py) and the job's run: what a save's statements go through.
    "memories/worker",
)
# And an import's (--via import), with its own format.
IMPORT_FORMAT = "v1: mem0 get_all file, id = turn id, memory = '<Role>: content', created_at = session date"
IMPORT_CODE = ("memories/services/imports.py", "benchmarks/imports.py")


@dataclass
class Question:
    data: dict[str, Any]
    conversation: Conversation
    # turn id "<session index>:<turn index>" -> the haystack session id it belongs to
    turn_session: dict[str, str]
    session_date: dict[str, datetime]

    @property
    def id(self) -> str:
        return str(self.data["question_id"])

    @property
    def type(self) -> str:
        return str(self.data["question_type"])


def parse_date(raw: str) -> datetime:
    """ "2023/05/28 (Sun) 19:47" -> 2023-05-28T19:47:00+00:00."""
    day, _weekday, clock = raw.split()
    return datetime.strptime(f"{day} {clock}", "%Y/%m/%d %H:%M").replace(tzinfo=UTC)


def _listed(value: Any) -> list[Any]:
    # Some files store the lists as a Python-literal string (the data's README).
    return list(ast.literal_eval(value)) if isinstance(value, str) else list(value)


def load_question(path: Path) -> Question:
    data = json.loads(path.read_text())
    sessions = _listed(data["haystack_sessions"])
    dates = [parse_date(d) for d in _listed(data["haystack_dates"])]
    session_ids = [str(s) for s in _listed(data["haystack_session_ids"])]
    turns: list[Turn] = []
    turn_session: dict[str, str] = {}
    evidence: list[str] = []
    for s, (session, when, sid) in enumerate(zip(sessions, dates, session_ids, strict=True)):
        # One session id per haystack session, distinct per question (a session may recur).
        session_uuid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"longmemeval/{data['question_id']}/{s}/{sid}"))
        for t, turn in enumerate(session):
            turn_id = f"{s}:{t}"
            role = "User" if turn["role"] == "user" else "Assistant"
            turns.append(Turn(turn_id, f"{role}: {turn['content']}", when, session_uuid))
            turn_session[turn_id] = sid
            if turn.get("has_answer"):
                evidence.append(turn_id)
    data["evidence"] = evidence
    data["answer_session_ids"] = [str(s) for s in _listed(data["answer_session_ids"])]
    conversation = Conversation(str(data["question_id"]), turns, [data])
    return Question(data, conversation, turn_session, dict(zip(session_ids, dates, strict=True)))


def chosen_paths(data_dir: Path, per_type: int | None, ids: list[str] | None) -> list[Path]:
    """The questions of the run: `ids`, or the first `per_type` non-abstention questions of each
    type in id order, or every non-abstention question."""
    paths = sorted(data_dir.glob("*.json"))
    if ids:
        return [data_dir / f"{i}.json" for i in ids]
    kept = [p for p in paths if not p.stem.endswith("_abs")]
    if per_type is None:
        return kept
    by_type: dict[str, list[Path]] = defaultdict(list)
    for path in kept:
        by_type[json.loads(path.read_text())["question_type"]].append(path)
    # Round robin over the types: an interrupted first ingest still holds every type.
    return [by_type[t][i] for i in range(per_type) for t in TYPES if i < len(by_type[t])]


def cache_key(via: str = "save") -> str:
    digest = hashlib.sha256(SAVE_FORMAT.encode())
    code: tuple[str, ...] = INGEST_CODE
    if via == "import":
        digest.update(IMPORT_FORMAT.encode())
        code = (*INGEST_CODE, *IMPORT_CODE)
    for part in code:
        path = ROOT / part
        # The code and the data it reads (the lexicons, the second reading's weights: .json).
        files = [f for f in path.rglob("*") if f.suffix in (".py", ".json")] if path.is_dir() else [path]
        for file in sorted(files):
            digest.update(str(file.relative_to(ROOT)).encode())
            digest.update(file.read_bytes())
    return digest.hexdigest()[:12]


# --- scoring -----------------------------------------------------------------------------------


@dataclass
class Score:
    question: Question
    turn: dict[int, float]
    session: dict[int, float]
    # knowledge-update: whether the newest evidence session's best turn ranks above every older
    # evidence session's (None: the evidence lies in one session, nothing to order)
    newest_first: bool | None
    # knowledge-update: whether the evidence session that holds the answer ranks first. Not always
    # the newest: "Where did I initially keep ...?", "in the first three months" ask for the older
    # value. None: one evidence session, or the answer's words do not single one out.
    answer_first: bool | None = None


_ANSWER_WORD_RE = re.compile(r"[a-z0-9]+")


_ANSWER_STOP = frozenset({"a", "an", "the", "in", "on", "of", "my", "i", "to", "and", "at", "is", "it"})


def answer_session(question: Question) -> str | None:
    """The evidence session whose evidence turns hold the most of the answer's words (a strict best;
    None when two tie or the evidence is one session)."""
    words = {
        w for w in _ANSWER_WORD_RE.findall(str(question.data["answer"]).lower()) if w not in _ANSWER_STOP
    }
    said: dict[str, set[str]] = defaultdict(set)
    for turn in question.conversation.turns:
        if turn.dia_id in question.data["evidence"]:
            said[question.turn_session[turn.dia_id]] |= set(_ANSWER_WORD_RE.findall(turn.content.lower()))
    if len(said) < 2 or not words:
        return None
    shares = sorted(((len(words & found) / len(words), s) for s, found in said.items()), reverse=True)
    return shares[0][1] if shares[0][0] > shares[1][0] else None


def _ranks_first(turns: list[str], question: Question, sessions: list[str], target: str) -> bool:
    """Whether `target`'s best evidence turn ranks above every other evidence session's."""
    evidence = set(question.data["evidence"])
    rank = {s: len(turns) for s in sessions}
    for position, turn in enumerate(turns):
        if turn in evidence and rank[question.turn_session[turn]] == len(turns):
            rank[question.turn_session[turn]] = position
    return rank[target] < len(turns) and all(rank[target] < rank[s] for s in sessions if s != target)


def score(question: Question, turns: list[str]) -> Score:
    evidence = set(question.data["evidence"])
    answer_sessions = set(question.data["answer_session_ids"])
    turn_recall = {k: len(evidence & set(turns[:k])) / len(evidence) if evidence else 0.0 for k in KS}
    session_recall = {}
    for k in KS:
        found = {question.turn_session.get(t) for t in turns[:k]}
        session_recall[k] = len(answer_sessions & found) / len(answer_sessions) if answer_sessions else 0.0
    newest_first = answer_first = None
    if question.type == "knowledge-update":
        evidence_sessions = sorted(
            {question.turn_session[t] for t in evidence}, key=lambda s: question.session_date[s]
        )
        if len(evidence_sessions) >= 2:
            newest_first = _ranks_first(turns, question, evidence_sessions, evidence_sessions[-1])
            target = answer_session(question)
            if target is not None:
                answer_first = _ranks_first(turns, question, evidence_sessions, target)
    return Score(question, turn_recall, session_recall, newest_first, answer_first)


def asked_at(question: Question, *, day_end: bool = False) -> datetime:
    """The question's date; with `day_end`, the end of its day. 13 of the 38 temporal questions have
    evidence dated later on the question's own day (up to 20 hours: the data set's clock times are
    not ordered within a day), which `at` rightly hides."""
    moment = parse_date(question.data["question_date"])
    return moment.replace(hour=23, minute=59, second=59) if day_end else moment


def ask(
    client: httpx.Client,
    question: Question,
    token: str,
    top_k: int,
    latencies: list[float],
    *,
    day_end: bool = False,
) -> Score:
    started = time.perf_counter()
    response = client.post(
        "/api/v1/operations/recall",
        json={
            "query": str(question.data["question"]),
            "top_k": top_k,
            "at": asked_at(question, day_end=day_end).isoformat(),
        },
        headers={"Authorization": f"Bearer {token}"},
    )
    latencies.append(time.perf_counter() - started)
    response.raise_for_status()
    memory_turn = question.conversation.memory_turn
    return score(question, [memory_turn.get(hit["id"], "?") for hit in response.json()["memories"]])


def report(
    scores: list[Score], latencies: list[float], *, how: str = "HTTP, query embedding included"
) -> None:
    print(f"{'type':<28}{'n':>4}" + "".join(f"{'turn@' + str(k):>9}" for k in KS), end="")
    print("".join(f"{'sess@' + str(k):>9}" for k in KS) + f"{'newest first':>14}{'answer first':>14}")
    for label in (*TYPES, "overall"):
        chosen = [s for s in scores if label in ("overall", s.question.type)]
        if not chosen:
            continue
        line = f"{label:<28}{len(chosen):>4}"
        line += "".join(f"{statistics.mean(s.turn[k] for s in chosen):>9.3f}" for k in KS)
        line += "".join(f"{statistics.mean(s.session[k] for s in chosen):>9.3f}" for k in KS)
        ordered = [s.newest_first for s in chosen if s.newest_first is not None]
        line += f"{f'{sum(ordered)}/{len(ordered)}':>14}" if ordered else f"{'':>14}"
        answered = [s.answer_first for s in chosen if s.answer_first is not None]
        line += f"{f'{sum(answered)}/{len(answered)}':>14}" if answered else ""
        print(line)
    if not latencies:
        return
    print()
    print(
        f"recall latency over {len(latencies)} calls ({how}, top_k {max(KS)}): "
        f"p50 {percentile(latencies, 50) * 1000:.1f} ms, p95 {percentile(latencies, 95) * 1000:.1f} ms, "
        f"max {max(latencies) * 1000:.1f} ms"
    )


def explain(question: Question, hits: Sequence[Any], score_: Score, *, shown: int = 10) -> None:
    """What ranks above the evidence of a question that missed some at 10 (or ranked an older
    update first): the first `shown` hits
    (turn, speaker, session date, score, cosine, words) and the rank of each evidence turn's best
    memory among the hits (beyond: not in them)."""
    turns = {t.dia_id: t for t in question.conversation.turns}
    memory_turn = question.conversation.memory_turn
    ranked = [memory_turn.get(str(h.memory.id), "?") for h in hits]
    evidence = list(question.data["evidence"])
    asked = f"asked {question.data['question_date']}"
    print(f"\n{question.id} [{question.type}] {asked}: {question.data['question']}")
    print(f"  answer: {str(question.data['answer'])[:160]}")
    print(f"  turn@10 {score_.turn[10]:.2f}; evidence ranks: ", end="")
    print(
        ", ".join(
            f"{e} ({turns[e].occurred_at:%Y-%m-%d}) #{ranked.index(e) + 1 if e in ranked else '-'}"
            for e in evidence
        )
    )
    for position, (hit, turn_id) in enumerate(zip(hits[:shown], ranked, strict=False), start=1):
        turn = turns.get(turn_id)
        mark = "*" if turn_id in evidence else " "
        when = f"{turn.occurred_at:%Y-%m-%d}" if turn else "?"
        words = " ".join(hit.memory.content.split())[:110]
        print(f"  {mark}{position:>2} {turn_id:>7} {when} {hit.score:6.3f} cos {hit.similarity:.2f} {words}")


def owner_of(prefix: str, question_id: str) -> tuple[Any, Any]:
    """The user (and their default space) that holds a question's memories in the service database
    already in use (`use_service_database`): the one with most memories among those named
    `<prefix>-<id>-...` (an interrupted run may have left another)."""
    from django.db.models import Count

    from accounts.models import User
    from memories.models import Memory
    from memories.selectors.spaces import space_default

    held = (
        Memory.objects.filter(owner__email__startswith=f"{prefix}-{question_id}-")
        .values("owner")
        .annotate(n=Count("id"))
        .order_by("-n")
        .first()
    )
    if held is None:
        raise SystemExit(f"no memories for question {question_id}")
    owner = User.objects.get(pk=held["owner"])
    space = space_default(owner=owner)
    if space is None:
        raise SystemExit(f"no space for question {question_id}")
    return owner, space


def recall_variants(
    var_dir: Path,
    prefix: str,
    asked: Sequence[tuple[str, str, datetime]],
    variants: Sequence[str],
    top_k: int,
    timings: dict[str, list[float]] | None = None,
) -> dict[str, list[RecallResult]]:
    """`memory_recall` called in process against the running service's database (the code the API
    runs; no HTTP) for every (question id, query, at) of `asked`, once per variant of the ranking
    knobs ('knob=value,...'; '' = defaults): each variant's RecallResults in the order asked. The
    owners are found by `owner_of(prefix, id)`. With `timings`, each recall's time in milliseconds
    (the query's vector given) is added to it by variant."""
    from benchmarks._service import use_service_database
    from benchmarks.distractor_stages import _knobs_from

    use_service_database(var_dir)
    from memories import embeddings
    from memories.retrieval.recall import RecallRequest, memory_recall

    vectors = embeddings.embed([query for _, query, _ in asked])
    owners = {question_id: owner_of(prefix, question_id) for question_id, _, _ in asked}
    knobs = {variant: _knobs_from([v for v in variant.split(",") if v]) for variant in variants}
    results: dict[str, list[RecallResult]] = {variant: [] for variant in variants}
    # Each question asked under every variant in turn, the order turning with each question, after
    # one uncounted recall that warms the caches for its rows: the times (`timings`, milliseconds by
    # variant) compare, no variant alone paying for a cold cache.
    for turn, ((question_id, query, at), vector) in enumerate(zip(asked, vectors, strict=True)):
        if timings is not None:
            memory_recall(
                owner=owners[question_id][0],
                space=owners[question_id][1],
                request=RecallRequest(query=query, top_k=top_k, at=at),
                query_vector=vector,
            )
        for variant in [*variants[turn % len(variants) :], *variants[: turn % len(variants)]]:
            started = time.perf_counter()
            results[variant].append(
                memory_recall(
                    owner=owners[question_id][0],
                    space=owners[question_id][1],
                    request=RecallRequest(query=query, top_k=top_k, at=at),
                    knobs=knobs[variant],
                    query_vector=vector,
                )
            )
            if timings is not None:
                timings.setdefault(variant, []).append((time.perf_counter() - started) * 1000)
    return results


def score_variants(
    var_dir: Path,
    questions: list[Question],
    variants: list[str],
    top_k: int,
    *,
    day_end: bool = False,
    explain_misses: bool = False,
) -> dict[str, list[Score]]:
    """Each variant of the ranking knobs scored in process (`recall_variants`). With
    `explain_misses`, every question that misses evidence at 10 or ranks an older update first is
    shown (`explain`), recalled with top_k 100 so the evidence's rank below the top 20 shows too."""
    asked = [(q.id, str(q.data["question"]), asked_at(q, day_end=day_end)) for q in questions]
    recalled = recall_variants(var_dir, "lme", asked, variants, max(top_k, 100) if explain_misses else top_k)
    results: dict[str, list[Score]] = {}
    for variant, found in recalled.items():
        scored = []
        for question, result in zip(questions, found, strict=True):
            memory_turn = question.conversation.memory_turn
            hits = result.hits[:top_k]
            scored.append(score(question, [memory_turn.get(str(h.memory.id), "?") for h in hits]))
            if explain_misses and (scored[-1].turn[10] < 1 or scored[-1].newest_first is False):
                explain(question, result.hits, scored[-1])
        results[variant] = scored
    return results


# --- the run -----------------------------------------------------------------------------------


@contextmanager
def ingested(
    var_dir: Path, questions: Sequence[Question], *, threads: int, email_prefix: str, via: str = "save"
) -> Iterator[httpx.Client]:
    """A service running on the kept folder `var_dir` with every question's haystack in it: the
    questions its manifest lacks are saved now (one new user each, `<email_prefix>-<id>-<run>@...`),
    and every question's conversation gets its user's token and memory -> turn map. Yields a client
    of the service."""
    manifest_path = var_dir / "manifest.json"
    manifest: dict[str, Any] = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    print(f"ingest cache: {var_dir} ({len(manifest)} questions held)")
    with running_service(var_dir=var_dir) as (url, _token):
        todo = [q for q in questions if q.id not in manifest]
        if todo:
            # A fresh address each run: an interrupted run may have left a user it did not finish.
            run = uuid.uuid4().hex[:8]
            tokens = create_users(var_dir, [f"{email_prefix}-{q.id}-{run}@example.com" for q in todo])
            for question, token in zip(todo, tokens, strict=True):
                question.conversation.token = token
        with httpx.Client(base_url=url, timeout=300) as client:
            if todo:
                ingest_all(client, todo, threads, manifest, manifest_path, via=via)
            for question in questions:
                held = manifest[question.id]
                question.conversation.token = held["token"]
                question.conversation.memory_turn = held["memory_turn"]
            yield client


def measure(
    questions: list[Question],
    *,
    threads: int,
    top_k: int,
    fresh: bool = False,
    variants: Sequence[str] = (),
    day_end: bool = False,
    explain_misses: bool = False,
    via: str = "save",
    cache: Path | None = None,
) -> tuple[list[Score], list[float], dict[str, list[Score]]]:
    """Ingest what the cache lacks, ask every question through the API; then score `variants` of
    the ranking knobs in process. Returns the API's scores and latencies and the variants' scores."""
    suffix = "-import" if via == "import" else ""
    var_dir = cache or ROOT / "var" / "benchmarks" / f"longmemeval-{cache_key(via)}{suffix}"
    if fresh and var_dir.exists():
        shutil.rmtree(var_dir)
    scored: dict[str, list[Score]] = {}
    with ingested(var_dir, questions, threads=threads, email_prefix="lme", via=via) as client:
        latencies: list[float] = []
        ask(client, questions[0], questions[0].conversation.token, top_k, [])  # warm-up
        scores = [ask(client, q, q.conversation.token, top_k, latencies, day_end=day_end) for q in questions]
        if variants:
            scored = score_variants(
                var_dir, questions, list(variants), top_k, day_end=day_end, explain_misses=explain_misses
            )
    return scores, latencies, scored


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-type", type=int, help="quick mode: the first N questions of each type")
    parser.add_argument("--questions", nargs="+", help="only these question ids")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--top-k", type=int, default=max(KS))
    parser.add_argument("--threads", type=int, default=2, help="questions saved at the same time")
    parser.add_argument("--fresh", action="store_true", help="ingest again into a new folder")
    parser.add_argument("--cache", type=Path, help="use this ingest folder whatever the ingest code's key")
    parser.add_argument("--json", type=Path, help="also write every question's scores here")
    parser.add_argument(
        "--variant",
        action="append",
        help="then score these ranking knobs in process ('own_boost=0.3,sibling_share=0.5'; '' = defaults)",
    )
    parser.add_argument(
        "--day-end",
        action="store_true",
        help="ask at the end of the question's day (some evidence is dated later that day)",
    )
    parser.add_argument(
        "--explain",
        action="store_true",
        help="with --variant: show what ranks above the evidence that misses the top 10 or is out of order",
    )
    parser.add_argument(
        "--via",
        choices=("save", "import"),
        default="save",
        help="how the haystacks go in: a REST save per turn, or one import per question",
    )
    args = parser.parse_args()
    questions = [load_question(p) for p in chosen_paths(args.data_dir, args.per_type, args.questions)]
    scores, latencies, variants = measure(
        questions,
        threads=args.threads,
        top_k=args.top_k,
        fresh=args.fresh,
        variants=args.variant or [],
        day_end=args.day_end,
        explain_misses=args.explain,
        via=args.via,
        cache=args.cache,
    )
    turns = sum(len(q.conversation.turns) for q in questions)
    print()
    print(f"LongMemEval dev: {len(questions)} questions, {turns} turns ({args.per_type or 'all'} per type)")
    report(scores, latencies)
    for variant, variant_scores in variants.items():
        print()
        print(f"in process, knobs: {variant or 'defaults'}")
        report(variant_scores, [])
    if args.json:
        args.json.write_text(
            json.dumps(
                [
                    {"id": s.question.id, "type": s.question.type, "turn": s.turn, "session": s.session}
                    | {"newest_first": s.newest_first, "answer_first": s.answer_first}
                    for s in scores
                ],
                indent=1,
            )
        )


def ingest_all(
    client: httpx.Client,
    todo: list[Question],
    threads: int,
    manifest: dict[str, Any],
    manifest_path: Path,
    *,
    via: str = "save",
) -> None:
    """Save the questions' turns, `threads` questions at a time (each question's turns in order,
    then its jobs awaited; or, `via` import, each question's one import awaited), recording each
    question in the manifest as soon as it is in: an interrupted run keeps what it finished. Prints
    the ingest rate."""
    from benchmarks.imports import import_run

    url = str(client.base_url).rstrip("/")
    started = time.perf_counter()
    pending = list(todo)
    lock = threading.Lock()

    def worker() -> None:
        while True:
            with lock:
                if not pending:
                    return
                question = pending.pop(0)
            begun = time.perf_counter()
            if via == "import":
                made = import_run(client, url, question.conversation)["import"]
                question.conversation.failed_jobs = int(made["items"]["failed"])
                question.conversation.refused = int(made["items"]["skipped"])
            else:
                jobs = ingest(client, question.conversation, session_ids=True)
                wait_for_jobs(client, question.conversation, jobs)
            seconds = time.perf_counter() - begun
            with lock:
                manifest[question.id] = {
                    "token": question.conversation.token,
                    "memory_turn": question.conversation.memory_turn,
                    "turns": len(question.conversation.turns),
                    "seconds": seconds,
                    "failed_jobs": question.conversation.failed_jobs,
                    "refused": question.conversation.refused,
                }
                manifest_path.write_text(json.dumps(manifest))
                print(
                    f"  {question.id} in: {len(question.conversation.turns)} turns, {seconds:.0f} s",
                    flush=True,
                )

    workers = [threading.Thread(target=worker) for _ in range(threads)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()
    seconds = time.perf_counter() - started
    turns = sum(len(q.conversation.turns) for q in todo)
    memories = sum(len(q.conversation.memory_turn) for q in todo)
    failed = sum(q.conversation.failed_jobs for q in todo)
    refused = sum(q.conversation.refused for q in todo)
    print(
        f"ingest: {turns / seconds:.1f} turns/s end to end ({turns} turns of {len(todo)} questions in "
        f"{seconds:.0f} s, {threads} at a time; {memories} memories, {memories / turns:.1f} a turn); "
        f"{failed} jobs not succeeded, {refused} turns refused as having nothing to remember"
    )


if __name__ == "__main__":
    main()

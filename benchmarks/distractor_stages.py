"""Where a conversation's evidence gets lost among distractors: the stage, per lost question.

    .venv/bin/python benchmarks/distractor_stages.py load --conversations 26 --dir var/benchmarks/stages
    .venv/bin/python benchmarks/distractor_stages.py clean --dir var/benchmarks/stages
    .venv/bin/python benchmarks/distractor_stages.py crowd --dir var/benchmarks/stages --distractors 20000
    .venv/bin/python benchmarks/distractor_stages.py diagnose --dir var/benchmarks/stages
    .venv/bin/python benchmarks/distractor_stages.py score --dir var/benchmarks/stages \
        --variant '' --variant speaker_boost=0.6

`load` ingests the conversations through the service's API (as benchmarks/locomo.py does) into a
data folder that is kept, with the memory -> turn map beside it; every later step runs in process
against that folder's embedded database, so the expensive part runs once. `clean` records each
question's top 10 before distractors, `crowd` adds (more) distractors, `diagnose` says for every
evidence turn that was in the clean top 10 and is not any more which stage lost it:

- vector+text: in neither candidate list (not among the `vector_pool` nearest by the HNSW scan,
  and its words picked it for no text list), split by why the text side missed it;
- outscored: a candidate, ranked below 10 by distractors (how many of those above it beat it on
  cosine, on scaled BM25);
- context: not a candidate, came to the clean top 10 as a strong hit's neighbour only.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import signal
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks import _service
from benchmarks.locomo import (
    DATA_DIR,
    create_users,
    evidence_of,
    ingest,
    load_conversation,
    service_with_data_dir,
    wait_for_jobs,
)


def cmd_load(args: argparse.Namespace) -> None:
    conversations = [load_conversation(DATA_DIR / f"{name}.json") for name in args.conversations]
    with service_with_data_dir(keep=True) as (url, _token, data_dir):
        tokens = create_users(data_dir, [f"locomo-{c.name}@example.com" for c in conversations])
        with httpx.Client(base_url=url, timeout=120) as client:
            for conversation, token in zip(conversations, tokens, strict=True):
                conversation.token = token
                jobs = ingest(client, conversation, session_ids=True)
                wait_for_jobs(client, conversation, jobs)
                print(f"  {conversation.name}: {len(conversation.memory_turn)} memories", flush=True)
    args.dir.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(data_dir), str(args.dir))
    maps = {c.name: c.memory_turn for c in conversations}
    (args.dir / "memory_turn.json").write_text(json.dumps(maps))
    print(f"kept in {args.dir}")


def _prepared(args: argparse.Namespace) -> list[Any]:
    from benchmarks.locomo import InProcess, in_process

    maps = json.loads((args.dir / "memory_turn.json").read_text())
    conversations = []
    for name, memory_turn in maps.items():
        conversation = load_conversation(DATA_DIR / f"{name}.json")
        conversation.memory_turn = memory_turn
        conversations.append(conversation)
    prepared: list[InProcess] = in_process(conversations, args.dir)
    return prepared


def _knobs(args: argparse.Namespace) -> Any:
    return _knobs_from(args.knob or [])


def _knobs_from(items: list[str]) -> Any:
    from memories.retrieval.recall import DEFAULT_KNOBS

    changes = dict(item.split("=", 1) for item in items)
    typed = {k: type(getattr(DEFAULT_KNOBS, k))(float(v)) for k, v in changes.items()}
    return dataclasses.replace(DEFAULT_KNOBS, **typed)


def _top_turns(item: Any, knobs: Any, k: int = 10) -> list[list[str]]:
    from memories.retrieval.recall import RecallRequest, memory_recall

    tops = []
    for question, vector in zip(item.conversation.questions, item.vectors, strict=True):
        result = memory_recall(
            owner=item.owner,
            space=item.space,
            request=RecallRequest(query=str(question["question"]), top_k=20),
            knobs=knobs,
            query_vector=vector,
        )
        tops.append([item.conversation.memory_turn.get(str(h.memory.id), "?") for h in result.hits][:k])
    return tops


def _recall10(item: Any, tops: list[list[str]]) -> float:
    values = []
    for question, top in zip(item.conversation.questions, tops, strict=True):
        evidence = evidence_of(question)
        values.append(len(evidence & set(top)) / len(evidence) if evidence else 0.0)
    return sum(values) / len(values)


def cmd_clean(args: argparse.Namespace) -> None:
    out = {}
    for item in _prepared(args):
        tops = _top_turns(item, _knobs(args))
        out[item.conversation.name] = tops
        print(f"{item.conversation.name}: clean R@10 {_recall10(item, tops):.3f}")
    (args.dir / "clean_top10.json").write_text(json.dumps(out))


def cmd_crowd(args: argparse.Namespace) -> None:
    from django.db import connection

    from benchmarks.distractors import distractors, load_distractors

    prepared = _prepared(args)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM memories_memory WHERE space_id = %s AND source_id IN "
            "(SELECT id FROM memories_source WHERE session_id IS NULL AND space_id = %s)",
            [prepared[0].space.pk, prepared[0].space.pk],
        )
        have = cursor.fetchone()[0]
    want = args.distractors - have
    if want <= 0:
        print(f"already {have:,} distractors")
        return
    data = distractors(count=args.distractors)
    # The first `have` are in already; the rest go in now.
    data = dataclasses.replace(data, texts=data.texts[have:], vectors=data.vectors[have:])
    load_distractors(spaces=[item.space for item in prepared], data=data)


def cmd_score(args: argparse.Namespace) -> None:
    """R@10 per conversation, per category and overall, for each `--variant` of the knobs."""
    from benchmarks.locomo import mean_recall, score_in_process

    prepared = _prepared(args)
    names = [item.conversation.name for item in prepared]
    print(f"{'variant':<40}" + "".join(f"{n:>7}" for n in names) + "  multi  temp  open single    all")
    for variant in args.variant or [""]:
        knobs = _knobs_from([v for v in variant.split(",") if v])
        per = [score_in_process(item, knobs) for item in prepared]
        pooled = [s for scores in per for s in scores]
        print(
            f"{variant or 'default':<40}"
            + "".join(f"{mean_recall(scores):7.3f}" for scores in per)
            + "".join(f"{mean_recall(pooled, category=c):6.3f}" for c in (1, 2, 3, 4))
            + f"{mean_recall(pooled):7.3f}",
            flush=True,
        )


def cmd_loo(args: argparse.Namespace) -> None:
    """The leave-one-conversation-out table of `benchmarks/locomo.py --loo` on the stored folder:
    no REST run first, so a knob is checked on unseen conversations in minutes."""
    from benchmarks.locomo import leave_one_out

    leave_one_out(_prepared(args), args.loo_knobs)


def _stage_sql(knobs: Any, request: Any) -> str:
    from memories.retrieval.recall import _statement

    sql = _statement(request, has_periods=False)
    # The statement's CTEs, without its final SELECT (which starts at the last top-level SELECT).
    head = sql[: sql.index("\nSELECT final.score")]
    # The statement's own CTEs, then what each evidence memory went through.
    # Only the statement's own constant text and this constant tail; values are parameters.
    sql = (
        head  # noqa: S608
        + """
SELECT e.id::text,
       EXISTS (SELECT 1 FROM vector_ranked v WHERE v.id = e.id) AS in_vector,
       (SELECT s.q IS NOT NULL AND m.search_vector @@ s.q FROM selective s) AS picked,
       (SELECT m.search_vector @@ string_agg(q::text, ' | ')::tsquery FROM weighted) AS any_word,
       EXISTS (SELECT 1 FROM text_matches t WHERE t.id = e.id) AS in_scan,
       EXISTS (SELECT 1 FROM text_ranked t WHERE t.id = e.id) AS in_text,
       (SELECT count(*) FROM text_matches) AS scanned,
       (SELECT count(*) FROM memories_memory x, selective s
         WHERE x.owner_id = %(owner)s AND x.space_id = %(space)s AND x.search_vector @@ s.q) AS matching,
       (SELECT row_to_json(sc) FROM (SELECT ts.cosine, ts.bm25 / best.bm25 AS bm25, ts.spoken
                                      FROM text_scores ts, best WHERE ts.id = e.id) sc) AS parts,
       (SELECT count(*) FROM combined c2 WHERE c2.score > coalesce(
            (SELECT score FROM combined c3 WHERE c3.id = e.id), 1e9)) AS rank_combined,
       (SELECT count(*) FROM scored s2 WHERE s2.base > coalesce(
            (SELECT base FROM scored s3 WHERE s3.id = e.id), 1e9)) AS rank_scored,
       1 - (m.embedding <=> %(qvec)s::vector) AS cosine,
       (SELECT count(*) FROM memories_memory x
         WHERE x.owner_id = %(owner)s AND x.space_id = %(space)s AND x.status = 'active'
           AND (x.embedding <=> %(qvec)s::vector) < (m.embedding <=> %(qvec)s::vector)) AS exact_rank,
       (SELECT json_agg(json_build_object('id', ab.id::text, 'cos', ts.cosine, 'bm25',
                                          ts.bm25 / best.bm25, 'score', ab.score))
          FROM (SELECT * FROM combined ORDER BY score DESC LIMIT 10) ab
          LEFT JOIN text_scores ts ON ts.id = ab.id, best) AS above
FROM unnest(%(evidence)s::uuid[]) AS e(id) JOIN memories_memory m ON m.id = e.id
"""
    )
    return sql


def cmd_diagnose(args: argparse.Namespace) -> None:
    from django.db import connection

    from memories.retrieval.recall import RecallRequest, _params, _vector_literal, query_periods

    knobs = _knobs(args)
    clean = json.loads((args.dir / "clean_top10.json").read_text())
    stages: Counter[str] = Counter()
    details: list[str] = []
    for item in _prepared(args):
        memory_turn = item.conversation.memory_turn
        by_turn: dict[str, list[str]] = {}
        for memory_id, turn in memory_turn.items():
            by_turn.setdefault(turn, []).append(memory_id)
        tops = _top_turns(item, knobs)
        print(
            f"{item.conversation.name}: R@10 clean {_recall10(item, clean[item.conversation.name]):.3f},"
            f" now {_recall10(item, tops):.3f}"
        )
        for question, vector, before, now in zip(
            item.conversation.questions, item.vectors, clean[item.conversation.name], tops, strict=True
        ):
            lost = [t for t in evidence_of(question) if t in before and t not in now]
            if not lost:
                continue
            request = RecallRequest(query=str(question["question"]), top_k=20)
            from django.utils import timezone

            params = _params(
                owner=item.owner,
                space=item.space,
                request=request,
                knobs=knobs,
                periods=query_periods(request.query, reference=timezone.now()),
                now=timezone.now(),
            )
            params["qvec"] = _vector_literal(vector)
            for turn in lost:
                params["evidence"] = by_turn.get(turn, [])
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),"
                        " set_config('hnsw.ef_search', %(ef)s, true);" + _stage_sql(knobs, request),
                        {**params, "ef": str(max(knobs.ef_search, knobs.vector_pool))},
                    )
                    cursor.nextset()
                    rows = cursor.fetchall()
                # The memory of the turn that came closest.
                row = min(rows, key=lambda r: (r[9], r[10]))
                (_, in_vector, picked, any_word, in_scan, in_text, scanned, matching, parts) = row[:9]
                rank_combined, _rank_scored, cosine, exact_rank, above = row[9:]
                if in_vector or in_text:
                    distractors_above = [a for a in above or [] if a["id"] not in memory_turn]
                    better_cos = sum(1 for a in distractors_above if (a["cos"] or 0) > parts["cosine"])
                    better_bm = sum(1 for a in distractors_above if (a["bm25"] or 0) > parts["bm25"])
                    stage = "outscored"
                    why = (
                        f"rank {rank_combined + 1}, {len(distractors_above)} distractors in top 10"
                        f" ({better_cos} higher cosine, {better_bm} higher bm25); own cos"
                        f" {parts['cosine']:.2f} bm25 {parts['bm25']:.2f}"
                    )
                else:
                    if picked and not in_scan:
                        text = "text: cut by text_scan"
                    elif in_scan:
                        text = "text: below text_pool"
                    elif any_word:
                        text = "text: words not selective"
                    else:
                        text = "text: no word"
                    stage = f"no candidate ({text})"
                    if exact_rank < knobs.vector_pool:
                        stage += " [HNSW missed a true neighbour]"
                    why = (
                        f"exact cosine rank {exact_rank + 1} (cos {cosine:.2f}); scanned {scanned} of"
                        f" {matching} matches"
                    )
                stages[stage] += 1
                name = item.conversation.name
                details.append(f"  {name} {turn:>7} {stage}: {why} | {question['question']}")
    print("\n".join(details))
    print()
    for stage, count in stages.most_common():
        print(f"{count:>4}  {stage}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["load", "clean", "crowd", "diagnose", "score", "loo"])
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("--conversations", nargs="+", default=["26"])
    parser.add_argument("--distractors", type=int, default=20000)
    parser.add_argument("--knob", action="append", help="name=value, a Knobs field to change")
    parser.add_argument(
        "--variant", action="append", help="score: comma-separated name=value knobs, one row each"
    )
    parser.add_argument(
        "--loo-knobs", nargs="*", help="loo: only these knobs (default: every knob of the grid)"
    )
    args = parser.parse_args()
    # Started in the background, a process inherits SIGINT ignored; the service is stopped with it.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    args.dir = args.dir.resolve()
    if args.step == "load":
        cmd_load(args)
        return
    _service.use_service_database(args.dir)
    started = time.perf_counter()
    steps = {
        "clean": cmd_clean,
        "crowd": cmd_crowd,
        "diagnose": cmd_diagnose,
        "score": cmd_score,
        "loo": cmd_loo,
    }
    steps[args.step](args)
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()

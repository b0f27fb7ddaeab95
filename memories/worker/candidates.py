"""A save's statements: what the rules (or the chat model) read in a source's text, with the clocks,
kind and tags its job asked for. One home for a lone save, a batch of saves and an import's items."""

from __future__ import annotations

from django.conf import settings

from memories.models import Job, Source
from memories.pipeline.entities import capitalised_words
from memories.pipeline.extract import Candidate, extract, extract_document, stated_kind
from memories.selectors.graph import entity_names_known
from memories.worker import store


def candidates_of(source: Source, job: Job, *, known: set[str] | None = None) -> list[Candidate]:
    """The job's statements. `known`: the names of the text the space already knows, when the
    caller has read them (a batch reads them for all its saves at once: _names_known)."""
    reference = source.refers_to or source.recorded_at
    kind = stated_kind(kind=job.options.get("kind"), category=job.options.get("category"))
    if settings.LLM_BASE_URL:
        from memories.pipeline.extract_llm import llm_extract

        candidates = llm_extract(source.content, reference=reference)
    else:
        # Names the space already knows are kept where a sentence starts with them.
        if known is None:
            known = entity_names_known(
                owner=job.owner, space_id=job.space_id, names=capitalised_words(source.content)
            )
        if source.origin == Source.Origin.DOCUMENT:
            # A document is a set of statements: one memory per item, row and sentence, so a later
            # version can change one of them without touching the others.
            candidates = extract_document(
                source.content, media_type=source.media_type, reference=reference, known=known
            )
        elif source.origin == Source.Origin.IMAGE:
            # Caption and text read in the picture are paragraphs of plain text (images.ocr_text).
            candidates = extract_document(
                source.content, media_type="text/plain", reference=reference, known=known
            )
        else:
            _, candidates = extract(source.content, reference=reference, known=known, kind=kind)
    tags = job.options.get("tags") or []
    clocks = store.stated_clocks(job)
    for candidate in candidates:
        candidate.stated_at = candidate.stated_at or reference
        if clocks is not None:
            # A revision states its dates (memories.services.memories.memory_revise): they win over
            # what the rules read in the text, an empty one included.
            candidate.occurred_at = clocks.get("occurred_at")
            candidate.valid_from = clocks.get("valid_from")
            candidate.due_at = clocks.get("due_at")
            candidate.starts_by = None
            candidate.tags = list(tags)
        if kind:
            # Where the rules did not take the stated kind (the LLM, a Markdown note), it wins here.
            candidate.kind = kind
        if tags and clocks is None:
            candidate.tags = list(dict.fromkeys([*candidate.tags, *tags]))
    return candidates

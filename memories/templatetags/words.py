"""Template filters for the dashboard's plain words (`memories.dashboard.words`)."""

from __future__ import annotations

from django import template

from memories.dashboard.words import JOB_WORDS, KIND_WORDS

register = template.Library()


@register.filter
def kind_word(kind: str) -> str:
    """“Fact”, “Event”, “Plan” for a memory kind."""
    return KIND_WORDS.get(str(kind), str(kind))


@register.filter
def job_word(kind: str) -> str:
    """“Saving a note”, “Reading a document” for a job kind."""
    return JOB_WORDS.get(str(kind), str(kind))

"""The words people read for the service's internal names (memory kinds, job kinds).

The stored values stay (`fact`, `episode`, `foresight`; `remember`, `ingest`, `reembed`): the API,
MCP and the export use them. Only the dashboard says them in plain language. Read from the models,
so a kind added there without words here fails at import.
"""

from __future__ import annotations

from memories.models import Job, Memory

_KIND_WORDS = {
    Memory.Kind.FACT: "Fact",
    Memory.Kind.EPISODE: "Event",
    Memory.Kind.FORESIGHT: "Plan",
}
_KIND_HELP = {
    Memory.Kind.FACT: "something that holds, like a preference or where someone lives",
    Memory.Kind.EPISODE: "something that happened, on a day",
    Memory.Kind.FORESIGHT: "something planned or expected, with a due date",
}
_JOB_WORDS = {
    Job.Kind.REMEMBER: "Saving a note",
    Job.Kind.INGEST: "Reading a document",
    Job.Kind.REEMBED: "Re-indexing",
    Job.Kind.IMPORT: "Importing a history",
}
KIND_WORDS = {str(kind): _KIND_WORDS[kind] for kind in Memory.Kind}
KIND_HELP = {str(kind): _KIND_HELP[kind] for kind in Memory.Kind}
JOB_WORDS = {str(kind): _JOB_WORDS[kind] for kind in Job.Kind}
KIND_CHOICES = [(kind, f"{KIND_WORDS[kind]}: {KIND_HELP[kind]}") for kind in KIND_WORDS]
KIND_FILTER_CHOICES = list(KIND_WORDS.items())


def plural(count: int, one: str, many: str) -> str:
    """“1 memory”, “3 memories”: a count with the words that go with it."""
    return f"{count} {one if count == 1 else many}"

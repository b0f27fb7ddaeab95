"""The Ask page: a question answered from the person's own memories, every citation a link.

It runs the registry's `answer` operation, the very one REST (`POST /api/v1/operations/answer`)
and MCP call, as the signed-in person (every scope, no agent), so what the page says is what an
agent would be told. A GET form: asking changes nothing, and an answer can be bookmarked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from accounts.caller import ALL_SCOPES, Caller
from accounts.http import AuthedHttpRequest
from memories.errors import AppError
from memories.operations import registry

QUESTION_MAX_CHARS = 4000
_CITATION = re.compile(r"\[(\d+)\]")


@dataclass(frozen=True)
class AnswerPart:
    """A run of the answer's text, or one citation: its number and the memory it points at."""

    text: str
    number: int | None = None
    memory_id: str | None = None


def answer_parts(text: str, based_on: list[str]) -> list[AnswerPart]:
    """The answer split at its `[n]` citations; a number outside `based_on` stays plain text
    (the answerer never writes one, but a link to nothing would be worse than none)."""
    parts: list[AnswerPart] = []
    position = 0
    for match in _CITATION.finditer(text):
        number = int(match.group(1))
        if not 1 <= number <= len(based_on):
            continue
        if match.start() > position:
            parts.append(AnswerPart(text=text[position : match.start()]))
        parts.append(AnswerPart(text=match.group(0), number=number, memory_id=based_on[number - 1]))
        position = match.end()
    if position < len(text):
        parts.append(AnswerPart(text=text[position:]))
    return parts


@login_required
@require_GET
def ask(request: AuthedHttpRequest) -> HttpResponse:
    """The form; with `q`, the answer, its numbered citations and the memories they cite."""
    question = request.GET.get("q", "").strip()
    context: dict[str, object] = {"question": question, "max_chars": QUESTION_MAX_CHARS}
    if question:
        caller = Caller(user=request.user, scopes=ALL_SCOPES, via="session")
        try:
            result = registry.run("answer", caller, {"question": question})
        except AppError as exc:
            if exc.http_status != 400:
                raise
            context["error"] = exc.message
        else:
            context["result"] = result
            context["parts"] = answer_parts(result["answer"], result["based_on"])
    status = 400 if "error" in context else 200
    return render(request, "dashboard/ask/ask.html", context, status=status)

"""Changing memories from the dashboard: edit one (words, kind, dates, tags) and act on several.

Thin views over memories.services: an edit of the words, kind or dates is a revision (a new version
through the pipeline that supersedes the old one, which stays in the history); tags alone are
relabelled in place. Bulk actions ask first on a page of their own (the count and the memories),
and a permanent delete also wants the typed word, as deleting one memory does.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods, require_POST

from accounts.caller import ALL_SCOPES, Caller
from accounts.http import AuthedHttpRequest
from accounts.throttles import user_throttle
from memories.api.base import session_actor
from memories.dashboard import forms
from memories.dashboard.words import plural
from memories.errors import AppError, Code
from memories.models import Memory
from memories.selectors.memories import memory_get, memory_search_list
from memories.selectors.spaces import space_get
from memories.services.memories import memories_hard_delete, memories_suppress, memory_retag, memory_revise
from memories.services.spaces import memories_move


def _memory_or_404(request: AuthedHttpRequest, memory_id: uuid.UUID) -> Memory:
    try:
        return memory_get(owner=request.user, memory_id=memory_id)
    except AppError as exc:
        raise Http404(exc.message) from None


@login_required
@require_http_methods(["GET", "POST"])
def memory_edit(request: AuthedHttpRequest, memory_id: uuid.UUID) -> HttpResponse:
    """Edit a memory. New words, kind or dates: a new version, and on to its job's page; new tags
    only: saved in place, back to the memory."""
    memory = _memory_or_404(request, memory_id)
    editable = memory.superseded_at is None and memory.status == "active"
    form = forms.MemoryEditForm(request.POST if request.method == "POST" else None, memory=memory)
    if request.method == "POST" and editable and form.is_valid():
        try:
            if form.revision_wanted:
                user_throttle(limit="save", user=request.user)
                job = memory_revise(
                    caller=Caller(user=request.user, scopes=ALL_SCOPES, via="session"),
                    memory_id=memory.id,
                    content=form.cleaned_data["content"],
                    kind=form.cleaned_data["kind"],
                    tags=form.cleaned_data["tags"],
                    clocks=form.clocks,
                )
                messages.success(
                    request, "Saving the new version. The old one is kept in its history, marked replaced."
                )
                return redirect("dashboard:job", job_id=job.id)
            if form.tags_changed:
                memory_retag(
                    actor=session_actor(request), memory_id=memory.id, tags=form.cleaned_data["tags"]
                )
                messages.success(request, "Tags saved.")
                return redirect("dashboard:memory", memory_id=memory.id)
            form.add_error(None, "Nothing changed: edit the words, the kind, a date or the tags.")
        except AppError as exc:
            if exc.code == Code.MEMORY_NOT_FOUND:
                raise Http404(exc.message) from None
            form.add_error("content" if exc.details.get("field") == "content" else None, exc.message)
    context = {"memory": memory, "form": form, "editable": editable, "clocks": forms.EDIT_CLOCKS}
    status = 400 if form.errors or (request.method == "POST" and not editable) else 200
    return render(request, "dashboard/memories/edit.html", context, status=status)


@login_required
@require_POST
def memory_bulk(request: AuthedHttpRequest) -> HttpResponse:
    """Suppress, move or delete the memories selected on the list, after a confirmation page."""
    form = forms.BulkActionForm(request.POST, owner=request.user)
    back = request.POST.get("next") or ""
    if not form.is_valid():
        for errors in form.errors.values():
            for error in errors:
                messages.error(request, str(error))
        safe = url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}, require_https=False)
        return redirect(back if safe else "dashboard:memories")
    ids = list(dict.fromkeys(form.cleaned_data["ids"]))
    action = form.cleaned_data["action"]
    selected = list(
        memory_search_list(owner=request.user, status="all", include_superseded=True).filter(id__in=ids)
    )
    if len(selected) != len(ids):
        raise Http404("No such memory in your account.")
    space = None
    if action == "move":
        try:
            space = space_get(owner=request.user, space_id=form.cleaned_data["space"])
        except AppError as exc:
            raise Http404(exc.message) from None
    confirm = forms.HardDeleteForm(request.POST if request.POST.get("confirmed") == "yes" else None)
    confirm.fields[
        "confirm"
    ].label = f"Type “{forms.DELETE_WORD}” to delete {'it' if len(ids) == 1 else 'them'} for good"
    if request.POST.get("confirmed") == "yes" and (action != "delete" or confirm.is_valid()):
        return _bulk_apply(request, action=action, ids=ids, space=space)
    context = {"form": form, "confirm": confirm, "selected": selected, "action": action, "space": space}
    context["count"] = plural(len(ids), "memory", "memories")
    context["back"] = back
    return render(request, "dashboard/memories/bulk.html", context, status=400 if confirm.errors else 200)


def _bulk_apply(request: AuthedHttpRequest, *, action: str, ids: list[uuid.UUID], space: Any) -> HttpResponse:
    actor = session_actor(request)
    try:
        if action == "suppress":
            count = memories_suppress(actor=actor, memory_ids=ids)
            already = len(ids) - count
            note = f" ({plural(already, 'was', 'were')} already suppressed)" if already else ""
            messages.success(
                request, f"Suppressed {plural(count, 'memory', 'memories')}{note}: agents no longer see them."
            )
        elif action == "move":
            count = memories_move(actor=actor, memory_ids=ids, space_id=space.id)
            messages.success(request, f"Moved {plural(count, 'memory', 'memories')} into “{space.name}”.")
        else:
            receipts = memories_hard_delete(actor=actor, memory_ids=ids)
            if len(receipts) == 1:
                return redirect("dashboard:receipt", event_id=receipts[0]["audit_event_id"])
            messages.success(
                request,
                f"Deleted {plural(len(receipts), 'memory', 'memories')} permanently. An audit entry "
                "without their content is kept for each.",
            )
    except AppError as exc:
        if exc.http_status == 404:
            raise Http404(exc.message) from None
        raise
    return redirect("dashboard:memories")

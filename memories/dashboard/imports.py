"""The import pages: a file picker, the import's live progress and its result, cancel and undo."""

from __future__ import annotations

import uuid

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.caller import ALL_SCOPES, Caller
from accounts.http import AuthedHttpRequest
from accounts.throttles import user_throttle
from memories.api.base import session_actor
from memories.dashboard import forms
from memories.dashboard.views import _or_404
from memories.errors import AppError, Code
from memories.selectors.imports import import_get, import_list
from memories.services.imports import import_cancel, import_create, import_undo
from memories.wire import ImportDict, ImportRestored, import_dict


@login_required
@require_http_methods(["GET", "POST"])
def import_page(request: AuthedHttpRequest) -> HttpResponse:
    """The file picker, and the owner's imports below it; a valid file goes on to its progress."""
    post = request.method == "POST"
    form = forms.ImportForm(
        request.POST if post else None, request.FILES if post else None, owner=request.user
    )
    if post and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            user_throttle(limit="upload", user=request.user)
            made = import_create(
                caller=Caller(user=request.user, scopes=ALL_SCOPES),
                actor=session_actor(request),
                filename=upload.name or "import",
                data=upload.read(),
                space_id=form.cleaned_data["space"],
            )
        except AppError as exc:
            form.add_error("file", exc.message)
        else:
            return redirect("dashboard:import", import_id=made.id)
    imports = [import_dict(m) for m in import_list(owner=request.user)[:20]]
    status = 400 if post else 200
    return render(request, "dashboard/imports/page.html", {"form": form, "imports": imports}, status=status)


# Why an item was skipped, in the person's words (the codes are the worker's, memories.worker.imports,
# and the REST answer's `skipped_reasons`). A code without words here is shown as it is.
SKIPPED_WORDS = {
    "already_imported": "already imported (this file, or one with the same items, was imported before)",
    "duplicate_in_file": "said twice in the file (kept once)",
    "empty": "empty (no text)",
    "too_long": "longer than a single memory may be",
    Code.NOTHING_TO_REMEMBER.value: "nothing to remember in it (a greeting, a bare reply)",
}


@login_required
@require_GET
def import_detail(request: AuthedHttpRequest, import_id: uuid.UUID) -> HttpResponse:
    made = import_dict(_or_404(import_get, owner=request.user, import_id=import_id))
    skipped = [(SKIPPED_WORDS.get(code, code), count) for code, count in made["skipped_reasons"].items()]
    context = {"made": made, "restored": _restored(made), "skipped": skipped}
    return render(request, "dashboard/imports/detail.html", context)


def _restored(made: ImportDict) -> ImportRestored | None:
    """What an import of our own export brought back beside the memories' words, when it brought back
    anything (or has something it could not) and is not undone: an undone import's receipt says what
    is gone, and its restored counts are no longer true."""
    restored = made["restored"]
    if restored is None or made["undo_receipt"] is not None or not any(restored.values()):
        return None
    return restored


@login_required
@require_POST
def import_stop(request: AuthedHttpRequest, import_id: uuid.UUID) -> HttpResponse:
    _or_404(import_cancel, actor=session_actor(request), import_id=import_id)
    return redirect("dashboard:import", import_id=import_id)


@login_required
@require_POST
def import_remove(request: AuthedHttpRequest, import_id: uuid.UUID) -> HttpResponse:
    _or_404(import_undo, actor=session_actor(request), import_id=import_id)
    return redirect("dashboard:import", import_id=import_id)

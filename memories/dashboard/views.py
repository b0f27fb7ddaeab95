"""The memory pages of the dashboard: list and search, one memory, save and upload, jobs, spaces.

Thin views: validate a form, call one service or selector, render. Every read
and write passes the signed-in user as the owner, so another account's memory,
job or space is a 404 here exactly as it is in the API. Writes are POST-only
and CSRF-protected; destructive ones ask first (a typed word, or an explicit
choice) and are audited by the services.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any, TypeVar

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.caller import ALL_SCOPES, Caller
from accounts.http import AuthedHttpRequest
from accounts.throttles import user_throttle
from memories.api.base import session_actor
from memories.dashboard import forms
from memories.dashboard.agents import job_who
from memories.dashboard.words import plural
from memories.errors import AppError, Code
from memories.models import Job, Memory
from memories.retrieval.search import highlight_parts, memory_search
from memories.selectors import graph as graph_selectors
from memories.selectors import jobs as job_selectors
from memories.selectors.audit import purge_event_get
from memories.selectors.graph import relation_get
from memories.selectors.images import image_link_path
from memories.selectors.jobs import job_get, job_memory_list
from memories.selectors.memories import (
    memory_filtered_list,
    memory_get,
    memory_history,
    memory_search_list,
)
from memories.selectors.spaces import space_default, space_get, space_list_with_counts
from memories.services import memories as memory_services
from memories.services import spaces as space_services
from memories.services.documents import document_ingest
from memories.services.images import image_ingest
from memories.services.memories import memory_hard_delete, memory_set_pinned, remember
from memories.services.relations import relation_hard_delete
from memories.services.spaces import space_create, space_set_default
from memories.wire import job_progress, purge_receipt

if TYPE_CHECKING:
    from memories.operations.registry import Profile

PAGE_SIZE = 25
T = TypeVar("T")


def _or_404(read: Callable[..., T], **kwargs: object) -> T:
    """Call a selector or service; its not-found error (also an outsider's) becomes a 404 page."""
    try:
        return read(**kwargs)
    except AppError as exc:
        if exc.http_status == 404:
            raise Http404(exc.message) from None
        raise


def _caller(request: AuthedHttpRequest) -> Caller:
    # The dashboard is the person themselves: every scope, no agent.
    return Caller(user=request.user, scopes=ALL_SCOPES, via="session")


def _actor(request: AuthedHttpRequest) -> dict[str, Any]:
    return {"actor": session_actor(request)}


def _back(request: AuthedHttpRequest, fallback: str) -> HttpResponse:
    """Redirect to the form's `next` if it is a path on this site, else to `fallback`."""
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=False):
        target = fallback
    return redirect(target)


def _page(request: AuthedHttpRequest, rows: Any) -> Any:
    return Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))


# --- memories ---------------------------------------------------------------------------


@login_required
@require_GET
def memory_list(request: AuthedHttpRequest) -> HttpResponse:
    """Search and filter the memories; without a query, every match newest first, paginated."""
    owner = request.user
    data = request.GET.copy()
    current = request.session.get(CURRENT_SPACE_KEY, "")
    choose = forms.CurrentSpaceForm(owner=owner, initial={"space": current})
    if current and current not in choose.space_ids:
        current = ""  # a space deleted since it was chosen
    if "space" not in data and current:
        data["space"] = current
    form = forms.MemorySearchForm(data, owner=owner)
    context: dict[str, object] = {"form": form, "page": None, "results": None, "method": ""}
    context.update(
        bulk_form=forms.BulkActionForm(owner=owner), choose_form=choose, default=space_default(owner=owner)
    )
    if not form.is_valid():
        return render(request, "dashboard/memories/list.html", context, status=400)
    filters = form.filters()
    if form.query:
        result = memory_search(owner=owner, query=form.query, filters=filters)
        for memory in result.memories:
            # Why each one is listed: the query's words in it, highlighted.
            memory.highlight = highlight_parts(memory.content, result.matched.get(memory.id, []))  # type: ignore[attr-defined]
        context.update(results=result.memories, method=result.method, match=result.match)
    else:
        context["page"] = _page(request, memory_filtered_list(owner=owner, filters=filters))
    return render(request, "dashboard/memories/list.html", context)


@login_required
@require_GET
def memory_detail(request: AuthedHttpRequest, memory_id: uuid.UUID) -> HttpResponse:
    return _render_memory(request, memory_id, forms.SuppressForm())


def _render_memory(
    request: AuthedHttpRequest, memory_id: uuid.UUID, suppress_form: forms.SuppressForm, status: int = 200
) -> HttpResponse:
    memory = _or_404(memory_get, owner=request.user, memory_id=memory_id)
    history = memory_history(owner=request.user, memory=memory)
    context = {
        "memory": memory,
        "earlier": [m for m in history if m.recorded_at <= memory.recorded_at],
        "later": [m for m in history if m.recorded_at > memory.recorded_at],
        "suppress_form": suppress_form,
    }
    if memory.image_source_id is not None:  # type: ignore[attr-defined]
        # Relative: the page and the picture are on this site. A fresh hour-long link per page view.
        context["image_path"] = image_link_path(owner_id=request.user.id, source_id=memory.image_source_id)  # type: ignore[attr-defined]
    return render(request, "dashboard/memories/detail.html", context, status=status)


@login_required
@require_POST
def memory_pin(request: AuthedHttpRequest, memory_id: uuid.UUID, pinned: bool) -> HttpResponse:
    _or_404(memory_set_pinned, memory_id=memory_id, pinned=pinned, **_actor(request))
    messages.success(request, "Pinned: recall ranks it higher." if pinned else "Unpinned.")
    return _back(request, reverse("dashboard:memory", args=[memory_id]))


@login_required
@require_POST
def memory_suppress(request: AuthedHttpRequest, memory_id: uuid.UUID) -> HttpResponse:
    form = forms.SuppressForm(request.POST)
    if not form.is_valid():
        return _render_memory(request, memory_id, form, status=400)
    _or_404(
        memory_services.memory_suppress,
        memory_id=memory_id,
        reason=form.cleaned_data["reason"],
        **_actor(request),
    )
    messages.success(request, "Suppressed: agents no longer see it. You can restore it from Suppressed.")
    return redirect("dashboard:memory", memory_id=memory_id)


@login_required
@require_POST
def memory_restore(request: AuthedHttpRequest, memory_id: uuid.UUID) -> HttpResponse:
    _or_404(memory_services.memory_restore, memory_id=memory_id, **_actor(request))
    messages.success(request, "Restored: agents can recall it again.")
    return _back(request, reverse("dashboard:memory", args=[memory_id]))


@login_required
@require_http_methods(["GET", "POST"])
def memory_delete(request: AuthedHttpRequest, memory_id: uuid.UUID) -> HttpResponse:
    """Hard delete after the person types the confirmation word; then show the purge receipt."""
    memory = _or_404(memory_get, owner=request.user, memory_id=memory_id)
    form = forms.HardDeleteForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        receipt = _or_404(memory_hard_delete, memory_id=memory_id, reason="other", **_actor(request))
        return redirect("dashboard:receipt", event_id=receipt["audit_event_id"])
    context = {"memory": memory, "form": form}
    return render(request, "dashboard/memories/delete.html", context, status=400 if form.errors else 200)


@login_required
@require_GET
def relation_list(request: AuthedHttpRequest) -> HttpResponse:
    """The relations agents recorded (graph profile `relate`), current and superseded."""
    form = forms.RelationFilterForm(request.GET, owner=request.user)
    if not form.is_valid():
        context = {
            "form": form,
            "page": _page(request, graph_selectors.relation_list(owner=request.user).none()),
        }
        return render(request, "dashboard/relations/list.html", context, status=400)
    data = form.cleaned_data
    rows = graph_selectors.relation_filtered_list(
        owner=request.user,
        name=data["name"].strip(),
        type_=data["type"],
        space_id=data["space"] or None,
        state=data["state"],
    )
    return render(request, "dashboard/relations/list.html", {"form": form, "page": _page(request, rows)})


@login_required
@require_http_methods(["GET", "POST"])
def relation_delete(request: AuthedHttpRequest, relation_id: uuid.UUID) -> HttpResponse:
    """Hard delete of a relation after the typed confirmation; then the purge receipt."""
    relation = _or_404(relation_get, owner=request.user, relation_id=relation_id)
    form = forms.HardDeleteForm(request.POST if request.method == "POST" else None, thing="relation")
    if request.method == "POST" and form.is_valid():
        receipt = _or_404(relation_hard_delete, relation_id=relation_id, **_actor(request))
        return redirect("dashboard:receipt", event_id=receipt["audit_event_id"])
    context = {"relation": relation, "form": form}
    return render(request, "dashboard/relations/delete.html", context, status=400 if form.errors else 200)


@login_required
@require_GET
def receipt(request: AuthedHttpRequest, event_id: uuid.UUID) -> HttpResponse:
    event = _or_404(purge_event_get, owner=request.user, event_id=event_id)
    context = {"receipt": purge_receipt(event), "purged_at": event.created_at}
    return render(request, "dashboard/memories/receipt.html", context)


@login_required
@require_GET
def suppressed_list(request: AuthedHttpRequest) -> HttpResponse:
    # Every forgotten memory, also one that was already history when it was forgotten: this page is
    # where the owner finds them again (no agent ever sees them).
    rows = memory_search_list(owner=request.user, status=Memory.Status.SUPPRESSED, include_superseded=True)
    return render(request, "dashboard/memories/suppressed.html", {"page": _page(request, rows)})


# --- save and upload --------------------------------------------------------------------


@login_required
@require_http_methods(["GET", "POST"])
def note_save(request: AuthedHttpRequest) -> HttpResponse:
    form = forms.NoteForm(request.POST if request.method == "POST" else None, owner=request.user)
    refusal: AppError | None = None
    if request.method == "POST" and form.is_valid():
        try:
            user_throttle(limit="save", user=request.user)
            job = remember(
                caller=_caller(request),
                content=form.cleaned_data["content"],
                occurred_at=form.occurred_at,
                tags=form.cleaned_data["tags"],
                space_id=form.cleaned_data["space"],
            )
        except AppError as exc:
            form.add_error("content" if exc.details.get("field") == "content" else None, exc.message)
            refusal = exc
        else:
            return redirect("dashboard:job", job_id=job.id)
    return _form_page(request, "dashboard/memories/save.html", form, refusal)


def _upload_page(
    request: AuthedHttpRequest,
    form_class: type[forms.UploadForm] | type[forms.ImageUploadForm],
    template: str,
    ingest: Callable[[Any, dict[str, Any]], tuple[Any, Job, bool]],
    again: str,
    limits: tuple[str, ...] = ("upload",),
) -> HttpResponse:
    """An upload form: on a valid post, `ingest(upload, cleaned_data)` and on to the job's page.
    Each of `limits` (settings.RATE_LIMITS) counts the upload, the first refusal answering 429."""
    post = request.method == "POST"
    refusal: AppError | None = None
    form = form_class(request.POST if post else None, request.FILES if post else None, owner=request.user)
    if post and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            for limit in limits:
                user_throttle(limit=limit, user=request.user)
            _, job, created = ingest(upload, form.cleaned_data)
        except AppError as exc:
            form.add_error("file", exc.message)
            refusal = exc
        else:
            if not created:
                messages.info(request, again)
            return redirect("dashboard:job", job_id=job.id)
    return _form_page(request, template, form, refusal)


@login_required
@require_http_methods(["GET", "POST"])
def document_upload(request: AuthedHttpRequest) -> HttpResponse:
    def ingest(upload: Any, data: dict[str, Any]) -> tuple[Any, Job, bool]:
        return document_ingest(
            caller=_caller(request),
            filename=upload.name or "document",
            data=upload.read(),
            declared_media_type=upload.content_type or "",
            space_id=data["space"],
        )

    again = "These exact bytes were uploaded before; nothing new was stored."
    return _upload_page(request, forms.UploadForm, "dashboard/memories/upload.html", ingest, again)


@login_required
@require_http_methods(["GET", "POST"])
def image_upload(request: AuthedHttpRequest) -> HttpResponse:
    def ingest(upload: Any, data: dict[str, Any]) -> tuple[Any, Job, bool]:
        return image_ingest(
            caller=_caller(request),
            filename=upload.name or "image",
            data=upload.read(),
            declared_media_type=upload.content_type or "",
            caption=data["caption"],
            space_id=data["space"],
        )

    again = "This image was uploaded before with the same caption; nothing new was stored."
    # As over REST (memories/api/images.py): the image budget first, then the uploads'.
    return _upload_page(
        request,
        forms.ImageUploadForm,
        "dashboard/memories/upload_image.html",
        ingest,
        again,
        limits=("image", "upload"),
    )


def _form_page(
    request: AuthedHttpRequest, template: str, form: Any, refusal: AppError | None
) -> HttpResponse:
    """A save or upload form again, with its errors (400), or refused by a rate limit (429, saying
    when to come back)."""
    if refusal is not None and refusal.code == Code.RATE_LIMITED:
        response = render(request, template, {"form": form}, status=refusal.http_status)
        response["Retry-After"] = str(refusal.details["retry_after"])
        return response
    return render(request, template, {"form": form}, status=400 if form.errors else 200)


# --- jobs -------------------------------------------------------------------------------


@login_required
@require_GET
def job_list(request: AuthedHttpRequest) -> HttpResponse:
    page = _page(
        request,
        job_selectors.job_list(owner=request.user)
        .select_related("source", "agent")
        .defer("source__content", "source__raw"),
    )
    running = sum(1 for job in page if job.status in (Job.Status.QUEUED, Job.Status.RUNNING))
    rows = [(job, _seconds(job), job_who(job)) for job in page]
    return render(request, "dashboard/jobs/list.html", {"page": page, "rows": rows, "running": running})


def _seconds(job: Job) -> float | None:
    if job.started_at is None or job.finished_at is None:
        return None
    return (job.finished_at - job.started_at).total_seconds()


@login_required
@require_GET
def job_detail(request: AuthedHttpRequest, job_id: uuid.UUID) -> HttpResponse:
    """One job; while it runs, dashboard.js polls GET /api/v1/jobs/{id} with the session."""
    job = _or_404(job_get, owner=request.user, job_id=job_id)
    done = job.status in (Job.Status.SUCCEEDED, Job.Status.FAILED)
    memories = list(job_memory_list(owner=request.user, job=job)) if done else []
    context = {"job": job, "done": done, "memories": memories, "progress": job_progress(job)}
    return render(request, "dashboard/jobs/detail.html", {**context, "stages": JOB_STAGE_LABELS})


# The worker's stages (memories.wire.JOB_STAGES) in words.
JOB_STAGE_LABELS = [
    ("queued", "Waiting for a worker"),
    ("reading", "Reading the file"),
    ("extracting", "Finding memories"),
    ("embedding", "Embedding segments"),
    ("storing", "Saving"),
    ("done", "Done"),
]


# --- spaces -----------------------------------------------------------------------------

# The space the memory list shows, chosen per browser session. It changes only what the person
# sees: where agents and new notes save is the default space (space_make_default).
CURRENT_SPACE_KEY = "dashboard_current_space"


@login_required
@require_POST
def space_choose(request: AuthedHttpRequest) -> HttpResponse:
    """Choose the space the memory list shows (empty: all spaces), for this browser session."""
    form = forms.CurrentSpaceForm(request.POST, owner=request.user)
    if not form.is_valid():
        raise Http404("No such space in your account.")
    chosen = form.cleaned_data["space"]
    request.session[CURRENT_SPACE_KEY] = chosen
    if chosen:
        name = next(label for value, label in form.fields["space"].choices if value == chosen)  # type: ignore[attr-defined]
        messages.success(
            request, f"Showing the memories of “{name}”. Agents still save into your default space."
        )
    else:
        messages.success(request, "Showing the memories of all your spaces.")
    return redirect("dashboard:memories")


def _render_spaces(
    request: AuthedHttpRequest,
    *,
    create_form: forms.SpaceNameForm | None = None,
    rename: tuple[str, forms.SpaceNameForm] | None = None,
    status: int = 200,
) -> HttpResponse:
    spaces = list(space_list_with_counts(owner=request.user))
    rows = []
    for space in spaces:
        form = forms.SpaceNameForm(initial={"name": space.name}, prefix=f"rename-{space.id}")
        if rename is not None and rename[0] == str(space.id):
            form = rename[1]
        rows.append((space, form))
    context = {"rows": rows, "create_form": create_form or forms.SpaceNameForm(prefix="create")}
    return render(request, "dashboard/spaces/list.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def space_list(request: AuthedHttpRequest) -> HttpResponse:
    """The spaces, with a form to create one (POST here)."""
    if request.method == "GET":
        return _render_spaces(request)
    form = forms.SpaceNameForm(request.POST, prefix="create")
    if form.is_valid():
        try:
            space = space_create(actor=session_actor(request), name=form.cleaned_data["name"])
        except AppError as exc:
            form.add_error("name", exc.message)
        else:
            messages.success(request, f"Created the space “{space.name}”.")
            return redirect("dashboard:spaces")
    return _render_spaces(request, create_form=form, status=400)


@login_required
@require_POST
def space_rename(request: AuthedHttpRequest, space_id: uuid.UUID) -> HttpResponse:
    _or_404(space_get, owner=request.user, space_id=space_id)
    form = forms.SpaceNameForm(request.POST, prefix=f"rename-{space_id}")
    if form.is_valid():
        try:
            space = _or_404(
                space_services.space_rename,
                space_id=space_id,
                name=form.cleaned_data["name"],
                **_actor(request),
            )
        except AppError as exc:
            form.add_error("name", exc.message)
        else:
            messages.success(request, f"Renamed to “{space.name}”.")
            return redirect("dashboard:spaces")
    return _render_spaces(request, rename=(str(space_id), form), status=400)


@login_required
@require_POST
def space_make_default(request: AuthedHttpRequest, space_id: uuid.UUID) -> HttpResponse:
    space = _or_404(space_set_default, space_id=space_id, **_actor(request))
    messages.success(request, f"“{space.name}” is now the default: new notes and agents' saves go there.")
    return redirect("dashboard:spaces")


@login_required
@require_http_methods(["GET", "POST"])
def space_delete(request: AuthedHttpRequest, space_id: uuid.UUID) -> HttpResponse:
    """Delete a space after the person chooses what happens to its memories (no default choice)."""
    space = _or_404(space_get, owner=request.user, space_id=space_id)
    default = space_default(owner=request.user)
    form = forms.SpaceDeleteForm(
        request.POST if request.method == "POST" else None,
        space_name=space.name,
        default_name=default.name if default is not None else "your default space",
        count=int(getattr(space, "memory_count", 0)),
    )
    if request.method == "POST" and form.is_valid():
        try:
            result = space_services.space_delete(
                space_id=space_id, memories=form.cleaned_data["memories"], **_actor(request)
            )
        except AppError as exc:
            form.add_error(None, exc.message)
        else:
            if result["memories"] == "deleted":
                return redirect("dashboard:receipt", event_id=result["receipt"]["audit_event_id"])
            moved = plural(int(result["count"]), "memory was", "memories were")
            messages.success(request, f"Deleted “{space.name}”; its {moved} moved into the default space.")
            return redirect("dashboard:spaces")
    context = {"space": space, "form": form}
    return render(request, "dashboard/spaces/delete.html", context, status=400 if form.errors else 200)


# --- connect an agent -------------------------------------------------------------------

# The fallback if docs/mcp.md is not deployed with the code; tests keep it equal to the doc.
SYSTEM_PROMPT = """\
You have long-term memory through the Deep Recall tools. Use it like this:

- Before answering anything that may depend on the user (their preferences, people,
  plans, projects, history or earlier conversations), call `recall` with a plain-language
  query, or `answer` for a direct question. Do not guess what the user told you before.
- When the user shares something durable (a fact about themselves or the people and
  things in their life, a preference, a decision, a plan, a date), call `remember` with a
  short, self-contained statement that names who and what, with dates where known.
  Do not save small talk, one-off requests, or things you inferred but were not told.
- Never store secrets (passwords, keys, card or account numbers, health or legal details
  the user did not ask you to keep) unless the user explicitly asks you to.
- When the user asks you to forget something, `recall` it to find the memory id, then call
  `forget`. Use `hard: true` only when the user explicitly asks for permanent deletion;
  otherwise the memory is hidden and the user can restore it.
- When you use a memory, cite its id (for example "[memory 3f2a...]") so the user can check
  or remove it.
- A save takes a moment (usually under a second) to become recallable; if `recall` right
  after `remember` does not show it, say it is being saved rather than that it was lost.
- If a tool returns an error, follow its `agent_action`; tell the user when memory is
  unavailable instead of pretending to remember.
"""
_PROMPT_HEADING = "## The system prompt"


@lru_cache(maxsize=1)
def system_prompt() -> str:
    """The system prompt of docs/mcp.md (one source for the doc and this page), else the copy above."""
    try:
        text = (settings.BASE_DIR / "docs" / "mcp.md").read_text(encoding="utf-8")
    except OSError:
        return SYSTEM_PROMPT
    _, found, after = text.partition(_PROMPT_HEADING)
    _, fence, block = after.partition("```text\n")
    prompt, closed, _ = block.partition("```")
    return prompt if found and fence and closed and prompt.strip() else SYSTEM_PROMPT


@login_required
@require_GET
def stdio_proxy_download(request: AuthedHttpRequest) -> HttpResponse:
    """The stdio proxy as one file (it needs only httpx), for a machine without Deep Recall."""
    # Its text, read as a file of the package: the dashboard serves the proxy, it does not run it.
    text = resources.files("mcp_gateway").joinpath("stdio_proxy.py").read_text(encoding="utf-8")
    response = HttpResponse(text, content_type="text/x-python; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="deeprecall_proxy.py"'
    return response


def _adds_to_core(profile: Profile) -> bool:
    return profile.name != "core" and not profile.tools


@login_required
@require_GET
def connect(request: AuthedHttpRequest) -> HttpResponse:
    from memories.operations.registry import PROFILES, operations

    profiles = [
        {
            "name": profile.name,
            "title": profile.title,
            "description": profile.description,
            "url": f"{settings.PUBLIC_URL}{profile.path}",
            # The tools under the names agents see. A profile that adds to the core four (they are on
            # every URL no contract closes) lists what it adds; the others list all of theirs.
            "with_core": _adds_to_core(profile),
            "tools": [
                op.tool_name
                for op in operations(profile.name)
                if not _adds_to_core(profile) or "core" not in op.profiles
            ],
        }
        for profile in PROFILES.values()
    ]
    context = {
        "https": settings.PUBLIC_URL.startswith("https://"),
        "mcp_url": f"{settings.PUBLIC_URL}/mcp",
        "profiles": profiles,
        "public_url": settings.PUBLIC_URL,
        "system_prompt": system_prompt(),
    }
    return render(request, "dashboard/connect.html", context)

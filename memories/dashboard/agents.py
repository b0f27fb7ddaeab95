"""The Agents pages: which app saved what, its memories and jobs, and pausing or resuming it.

An agent is an OAuth application acting for the person (Claude, ChatGPT, VS Code…). Pausing
refuses its tokens (`app_paused`) without deleting them, so resuming needs no new consent;
disconnecting (Connected apps) is the permanent step. Both actions are POST-only and CSRF-checked,
and another account's app is a 404 like everything else that is not yours.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from accounts.http import AuthedHttpRequest
from accounts.services import app_pause, app_resume
from memories.errors import AppError
from memories.models import Job
from memories.selectors.agents import (
    AgentSummary,
    agent_job_list,
    agent_memory_list,
    agent_summary_get,
    agent_summary_list,
)

PAGE_SIZE = 25
RECENT_JOBS = 10


def job_who(job: Job) -> str:
    """Who started a job, in words: its app's name, a personal token, or the person themselves."""
    if job.agent_id is not None and job.agent is not None:
        return job.agent.name or f"App {job.agent_id}"
    claimant = job.source.claimant if job.source is not None else ""
    return "Personal token" if claimant.startswith("token:") else "You"


def _agent_or_404(request: AuthedHttpRequest, application_id: int) -> AgentSummary:
    try:
        return agent_summary_get(user=request.user, application_id=application_id)
    except AppError as exc:
        raise Http404(exc.message) from None


@login_required
@require_GET
def agent_list(request: AuthedHttpRequest) -> HttpResponse:
    """Every app that is connected or saved something, with its counts."""
    agents = agent_summary_list(user=request.user)
    return render(request, "dashboard/agents/list.html", {"agents": agents})


@login_required
@require_GET
def agent_detail(request: AuthedHttpRequest, application_id: int) -> HttpResponse:
    """One app: its counts, the memories it saved (paginated) and its latest jobs."""
    agent = _agent_or_404(request, application_id)
    memories = agent_memory_list(user=request.user, application_id=agent.id).select_related("space")
    page = Paginator(memories, PAGE_SIZE).get_page(request.GET.get("page"))
    jobs = list(agent_job_list(user=request.user, application_id=agent.id)[:RECENT_JOBS])
    return render(request, "dashboard/agents/detail.html", {"agent": agent, "page": page, "jobs": jobs})


@login_required
@require_POST
def agent_pause(request: AuthedHttpRequest, application_id: int, *, paused: bool) -> HttpResponse:
    """Pause or resume one app; its tokens are refused while it is paused."""
    agent = _agent_or_404(request, application_id)
    try:
        if paused:
            app_pause(user=request.user, application_id=agent.id)
        else:
            app_resume(user=request.user, application_id=agent.id)
    except AppError as exc:
        # An app that saved things once but holds no token any more cannot be paused.
        messages.error(request, exc.message)
        return redirect("dashboard:agent", application_id=agent.id)
    if paused:
        messages.success(request, f"Paused “{agent.name}”: its requests are refused until you resume it.")
    else:
        messages.success(request, f"Resumed “{agent.name}”: it can use your memory again.")
    return redirect("dashboard:agent", application_id=agent.id)

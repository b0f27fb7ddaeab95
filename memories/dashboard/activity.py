"""The Activity page: the audit trail (who did what to which memory, space or token), filtered by
agent, action and date, paginated. Read-only, so a GET form; the rows never hold memory content
(the audit trail does not keep any)."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from accounts.http import AuthedHttpRequest
from accounts.models import User
from memories.models import AuditEvent
from memories.selectors.agents import agent_summary_list
from memories.selectors.audit import audit_event_list

PAGE_SIZE = 50
# The "who" choice for the person's own changes (dashboard, personal tokens, the service for them).
BY_PERSON = "you"


class ActivityFilterForm(forms.Form):
    who = forms.ChoiceField(label="Who", required=False)
    action = forms.ChoiceField(label="Action", required=False)
    date_from = forms.DateField(label="From", required=False, widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(
        label="To (inclusive)", required=False, widget=forms.DateInput(attrs={"type": "date"})
    )

    def __init__(self, *args: Any, owner: User, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        agents = [(str(agent.id), agent.name) for agent in agent_summary_list(user=owner)]
        who, action = self.fields["who"], self.fields["action"]
        assert isinstance(who, forms.ChoiceField) and isinstance(action, forms.ChoiceField)
        who.choices = [("", "Anyone"), (BY_PERSON, "You (no agent)"), *agents]
        action.choices = [("", "Any action"), *AuditEvent.Action.choices]

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        start, end = data.get("date_from"), data.get("date_to")
        if start and end and end < start:
            self.add_error("date_to", "The end date is before the start date.")
        return data


def _day_start(day: Any) -> datetime:
    # Days are the person's days: midnight in the site's current time zone.
    return datetime.combine(day, time.min, tzinfo=timezone.get_current_timezone())


def _filters(form: ActivityFilterForm) -> dict[str, Any]:
    if not form.is_valid():
        return {}
    data = form.cleaned_data
    who = data.get("who") or ""
    filters: dict[str, object] = {"action": data.get("action") or None}
    if who == BY_PERSON:
        filters["by_person"] = True
    elif who:
        filters["agent_id"] = int(who)
    if data.get("date_from"):
        filters["since"] = _day_start(data["date_from"])
    if data.get("date_to"):
        filters["until"] = _day_start(data["date_to"] + timedelta(days=1))
    return filters


@login_required
@require_GET
def activity(request: AuthedHttpRequest) -> HttpResponse:
    """The audit trail, newest first; invalid filters are shown in place and not applied."""
    form = ActivityFilterForm(request.GET or None, owner=request.user)
    events = audit_event_list(owner=request.user, **_filters(form))
    page = Paginator(events, PAGE_SIZE).get_page(request.GET.get("page"))
    status = 400 if form.is_bound and not form.is_valid() else 200
    return render(request, "dashboard/activity/list.html", {"form": form, "page": page}, status=status)

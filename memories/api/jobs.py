"""REST endpoints of jobs, and the job response every save and upload returns."""

from __future__ import annotations

import uuid
from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.caller import SCOPE_READ
from memories.api.base import ApiView
from memories.api.query import (
    OBJECT_RESPONSE,
    PAGE,
    PAGE_SIZE_DEFAULT,
    PAGE_SIZE_MAX,
    StrictQuery,
    page_params,
    paginate,
)
from memories.models import Job
from memories.representations import job_dict
from memories.selectors.jobs import job_get, job_list, job_memory_list


class JobListView(ApiView):
    primary_reads = True
    scopes = {"get": SCOPE_READ}

    @extend_schema(
        operation_id="jobs_list",
        summary="List jobs, newest first",
        parameters=[OpenApiParameter("status", str, enum=Job.Status.values), *page_params()],
        responses=OBJECT_RESPONSE,
    )
    def get(self, request: Request) -> Response:
        caller = self.caller
        query = StrictQuery(request, {"status", *PAGE})
        page_size = query.integer("page_size", default=PAGE_SIZE_DEFAULT, minimum=1, maximum=PAGE_SIZE_MAX)
        jobs = job_list(owner=caller.user, status=query.choice("status", Job.Status.values))
        page = paginate(
            request, jobs, time_field="created_at", page_size=page_size, cursor=query.text("cursor")
        )
        return Response(
            {"results": [job_dict(j) for j in page.rows], "next": page.next, "previous": page.previous}
        )


class JobDetailView(ApiView):
    primary_reads = True
    scopes = {"get": SCOPE_READ}

    @extend_schema(
        operation_id="jobs_retrieve",
        summary="One job with the memories it produced",
        responses=OBJECT_RESPONSE,
    )
    def get(self, request: Request, job_id: uuid.UUID) -> Response:
        caller = self.caller
        StrictQuery(request, ())
        job = job_get(owner=caller.user, job_id=job_id)
        memories = list(job_memory_list(owner=caller.user, job=job))
        return Response(job_dict(job, memories=memories))


def job_response(job: Job, *, extra: dict[str, Any] | None = None) -> Response:
    done = job.status in (Job.Status.SUCCEEDED, Job.Status.FAILED)
    memories = list(job_memory_list(owner=job.owner, job=job)) if done else None
    body = {"job": job_dict(job, memories=memories), **(extra or {})}
    return Response(body, status=201 if done else 202)

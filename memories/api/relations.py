"""REST endpoint of relations: hard delete with a purge receipt."""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.response import Response

from accounts.caller import SCOPE_WRITE
from memories.api.base import ApiView, request_id_of
from memories.api.memories import SUPPRESS_SCHEMA
from memories.operations.validation import validate_arguments
from memories.services.relations import relation_hard_delete


class RelationItemView(ApiView):
    scopes = {"delete": SCOPE_WRITE}

    def delete(self, request: Request, relation_id: Any) -> Response:
        """Hard delete of a relation (and the claims that asserted it), with a purge receipt."""
        caller = self.caller
        reason = request.query_params.get("reason_code", "other")
        validate_arguments(SUPPRESS_SCHEMA, {"reason_code": reason})
        receipt = relation_hard_delete(
            owner=caller.user,
            relation_id=relation_id,
            reason=reason,
            actor_user=caller.user,
            actor_agent_id=caller.agent_id,
            request_id=request_id_of(request),
        )
        return Response({"action": "hard_deleted", "receipt": receipt})

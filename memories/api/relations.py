"""REST endpoint of relations: hard delete with a purge receipt."""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.response import Response

from accounts.caller import SCOPE_WRITE
from memories.api.base import ApiView
from memories.api.query import hard_deleted, reason_of
from memories.services.relations import relation_hard_delete


class RelationItemView(ApiView):
    scopes = {"delete": SCOPE_WRITE}

    def delete(self, request: Request, relation_id: Any) -> Response:
        """Hard delete of a relation (and the claims that asserted it), with a purge receipt."""
        receipt = relation_hard_delete(actor=self.actor, relation_id=relation_id, reason=reason_of(request))
        return hard_deleted(receipt)

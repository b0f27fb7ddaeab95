"""REST endpoints of relations: hard delete with a purge receipt; restore one an agent invalidated."""

from __future__ import annotations

from rest_framework.request import Request
from rest_framework.response import Response

from accounts.caller import SCOPE_WRITE
from memories.api.base import ApiView
from memories.api.query import hard_deleted, reason_of
from memories.parsing import RowId
from memories.selectors.graph import relation_get_with_evidence
from memories.services.relations import relation_hard_delete, relation_restore
from memories.wire import relation_dict


class RelationItemView(ApiView):
    scopes = {"delete": SCOPE_WRITE}

    def delete(self, request: Request, relation_id: RowId) -> Response:
        """Hard delete of a relation (and the claims that asserted it), with a purge receipt."""
        receipt = relation_hard_delete(actor=self.actor, relation_id=relation_id, reason=reason_of(request))
        return hard_deleted(receipt)


class RelationRestoreView(ApiView):
    scopes = {"post": SCOPE_WRITE}

    def post(self, request: Request, relation_id: RowId) -> Response:
        """Bring back a relation retired by the graph profile's `invalidate` (409
        relation_not_restorable when another now holds in its place)."""
        relation = relation_restore(actor=self.actor, relation_id=relation_id)
        shown = relation_get_with_evidence(
            owner=self.caller.user, space=relation.space, relation_id=relation.id
        )
        return Response({"relation": relation_dict(shown)})

"""Personal access tokens over REST, for the signed-in user (session only).

A token cannot mint or revoke tokens: that would let a leaked read-only token
escalate itself. The dashboard uses these endpoints; agents never need them.
"""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.response import Response

from accounts.caller import ALL_SCOPES, SCOPE_WRITE
from accounts.models import PersonalAccessToken
from accounts.selectors import pat_list
from accounts.services import NAME_MAX_LENGTH
from memories.api.base import ApiView
from memories.operations.validation import validate_arguments
from memories.services.account import token_create, token_revoke

CREATE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["name", "scopes"],
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": NAME_MAX_LENGTH},
        "scopes": {
            "type": "array",
            "minItems": 1,
            "uniqueItems": True,
            "items": {"type": "string", "enum": sorted(ALL_SCOPES)},
        },
        "expires_at": {"type": "string", "format": "date-time"},
    },
}


def token_dict(token: PersonalAccessToken) -> dict[str, object]:
    return {
        "id": str(token.id),
        "name": token.name,
        "prefix": token.prefix,
        "scopes": token.scopes.split(),
        "created_at": token.created_at.isoformat(),
        "last_used_at": token.last_used_at.isoformat() if token.last_used_at else None,
        "expires_at": token.expires_at.isoformat() if token.expires_at else None,
        "revoked_at": token.revoked_at.isoformat() if token.revoked_at else None,
    }


class TokenCollectionView(ApiView):
    # Session only: any token, whatever its scopes, is refused (after the scope check, as before).
    scopes = {"get": SCOPE_WRITE, "post": SCOPE_WRITE}
    session_only = True

    def get(self, request: Request) -> Response:
        return Response({"results": [token_dict(t) for t in pat_list(user=self.caller.user)]})

    def post(self, request: Request) -> Response:
        args = validate_arguments(CREATE_SCHEMA, request.data if request.data not in (None, "") else {})
        token, raw = token_create(
            actor=self.actor, name=args["name"], scopes=args["scopes"], expires_at=args.get("expires_at")
        )
        # The plaintext is in this response and nowhere else, ever.
        return Response({**token_dict(token), "token": raw}, status=201)


class TokenItemView(ApiView):
    scopes = {"delete": SCOPE_WRITE}
    session_only = True

    def delete(self, request: Request, token_id: Any) -> Response:
        return Response(token_dict(token_revoke(actor=self.actor, token_id=token_id)))

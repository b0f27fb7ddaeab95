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
from accounts.services import NAME_MAX_LENGTH, pat_create, pat_revoke
from memories.api.base import ApiView
from memories.errors import AppError
from memories.operations.validation import validate_arguments

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


def token_dict(token: PersonalAccessToken) -> dict[str, Any]:
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


class _SessionOnly(ApiView):
    def session_user(self, request: Request) -> Any:
        caller = self.caller(request, SCOPE_WRITE)
        if caller.via != "session":
            raise AppError(
                "session_required",
                "Access tokens are managed from the signed-in dashboard only.",
                http_status=403,
                agent_action="ask the user to manage tokens in the dashboard",
            )
        return caller.user


class TokenCollectionView(_SessionOnly):
    def get(self, request: Request) -> Response:
        user = self.session_user(request)
        return Response({"results": [token_dict(t) for t in pat_list(user=user)]})

    def post(self, request: Request) -> Response:
        user = self.session_user(request)
        args = validate_arguments(CREATE_SCHEMA, request.data if request.data not in (None, "") else {})
        token, raw = pat_create(
            user=user,
            name=args["name"],
            scopes=args["scopes"],
            expires_at=args.get("expires_at"),
        )
        # The plaintext is in this response and nowhere else, ever.
        return Response({**token_dict(token), "token": raw}, status=201)


class TokenItemView(_SessionOnly):
    def delete(self, request: Request, token_id: Any) -> Response:
        user = self.session_user(request)
        return Response(token_dict(pat_revoke(user=user, token_id=token_id)))

"""REST endpoints of spaces: list, create, read, rename / make default, delete."""

from __future__ import annotations

import uuid

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status as http
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.caller import SCOPE_READ, SCOPE_WRITE
from memories.api.base import ApiView
from memories.api.query import OBJECT_RESPONSE, StrictQuery, body_with_keys, invalid_parameter
from memories.errors import AppError, Code
from memories.limits import SPACE_NAME_MAX_LENGTH
from memories.representations import space_dict
from memories.selectors.spaces import space_get, space_list_with_counts
from memories.services.spaces import MEMORIES_DELETE, MEMORIES_MOVE, space_create, space_delete, space_update


class SpaceCollectionView(ApiView):
    scopes = {"get": SCOPE_READ, "post": SCOPE_WRITE}

    @extend_schema(
        operation_id="spaces_list", summary="List spaces, default first", responses=OBJECT_RESPONSE
    )
    def get(self, request: Request) -> Response:
        caller = self.caller
        StrictQuery(request, ())
        spaces = space_list_with_counts(owner=caller.user)
        return Response({"results": [space_dict(space) for space in spaces]})

    @extend_schema(
        operation_id="spaces_create",
        summary="Create a space",
        request=OpenApiTypes.OBJECT,
        responses={201: OpenApiTypes.OBJECT},
    )
    def post(self, request: Request) -> Response:
        caller = self.caller
        StrictQuery(request, ())
        name = body_with_keys(request, {"name"}).get("name")
        if not isinstance(name, str):
            raise invalid_parameter(
                "name", f"name is required: a string of 1 to {SPACE_NAME_MAX_LENGTH} characters."
            )
        space = space_create(actor=self.actor, name=name)
        created = space_get(owner=caller.user, space_id=space.id)
        return Response(space_dict(created), status=http.HTTP_201_CREATED)


class SpaceItemView(ApiView):
    scopes = {"get": SCOPE_READ, "patch": SCOPE_WRITE, "delete": SCOPE_WRITE}

    @extend_schema(operation_id="spaces_retrieve", summary="One space", responses=OBJECT_RESPONSE)
    def get(self, request: Request, space_id: uuid.UUID) -> Response:
        caller = self.caller
        StrictQuery(request, ())
        return Response(space_dict(space_get(owner=caller.user, space_id=space_id)))

    @extend_schema(
        operation_id="spaces_partial_update",
        summary="Rename a space and/or make it the default",
        description='Body: {"name"?: string, "is_default"?: true}. A space stops being the default only '
        "when another one becomes it.",
        request=OpenApiTypes.OBJECT,
        responses=OBJECT_RESPONSE,
    )
    def patch(self, request: Request, space_id: uuid.UUID) -> Response:
        caller = self.caller
        StrictQuery(request, ())
        body = body_with_keys(request, {"name", "is_default"})
        if not body:
            raise AppError(Code.INVALID_ARGUMENTS, "Nothing to change: send name and/or is_default.")
        name = body.get("name")
        if "name" in body and not isinstance(name, str):
            raise invalid_parameter(
                "name", f"name must be a string of 1 to {SPACE_NAME_MAX_LENGTH} characters."
            )
        if "is_default" in body and body["is_default"] is not True:
            raise invalid_parameter(
                "is_default",
                "is_default can only be set to true; to change the default, make another space the default.",
            )
        space_update(actor=self.actor, space_id=space_id, name=name, make_default="is_default" in body)
        return Response(space_dict(space_get(owner=caller.user, space_id=space_id)))

    @extend_schema(
        operation_id="spaces_destroy",
        summary="Delete a space, moving or deleting its memories",
        parameters=[
            OpenApiParameter(
                "memories",
                str,
                enum=[MEMORIES_MOVE, MEMORIES_DELETE],
                required=True,
                description="move: into the default space (entities merged); "
                "delete: permanently, with a receipt.",
            )
        ],
        responses=OBJECT_RESPONSE,
    )
    def delete(self, request: Request, space_id: uuid.UUID) -> Response:
        query = StrictQuery(request, {"memories"})
        return Response(
            space_delete(actor=self.actor, space_id=space_id, memories=query.text("memories") or "")
        )

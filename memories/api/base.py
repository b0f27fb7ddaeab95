"""What every REST endpoint shares: authentication, the caller, and the one error shape.

Every failure leaves as `{"error": {code, message, retryable, agent_action,
request_id, details?}}` with the AppError's HTTP status. DRF's own errors
(authentication, parsing, throttling) and Django's request limits (body size,
number of fields) are translated into the same shape, and an unexpected
exception becomes `internal_error` with the detail only in the log.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping
from contextvars import Token
from typing import Any, ClassVar

from django.conf import settings
from django.core.exceptions import (
    ImproperlyConfigured,
    RequestDataTooBig,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.db import DataError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.views import defaults
from rest_framework import exceptions as drf_exceptions
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.authentication import (
    CsrfSessionAuthentication,
    OAuthBearerAuthentication,
    PersonalAccessTokenAuthentication,
    caller_from_request,
    require_scope,
    rest_challenge,
)
from accounts.caller import ALL_SCOPES, SCOPE_READ, SCOPE_WRITE, Actor, Caller
from config import replicas
from memories import errors
from memories.errors import AppError, Code
from memories.operations.validation import bad_character

logger = logging.getLogger(__name__)

REQUEST_ID_HEADER = "X-Request-ID"

# The methods a view must declare a scope for (the system check in memories.checks says so).
# HEAD is answered by get and needs get's scope; OPTIONS is DRF's description of the view
# (name, media types), which holds nothing of anyone's.
SCOPED_METHODS = ("get", "post", "put", "patch", "delete")
# The methods whose handlers only read (a replica may serve them, and they record no write).
_READS = frozenset({"GET", "HEAD"})

# A scope known only from the request: called with the URL's keyword arguments.
ScopeOfRequest = Callable[..., str]


def request_id_of(request: HttpRequest | Request) -> str:
    """The request's id: the client's X-Request-ID if sane, else a new one (cached)."""
    raw = request._request if isinstance(request, Request) else request
    existing = getattr(raw, "request_id", None)
    if existing:
        return str(existing)
    supplied = raw.headers.get(REQUEST_ID_HEADER, "")
    value = (
        supplied if supplied and len(supplied) <= 64 and supplied.isascii() and supplied.isprintable() else ""
    )
    request_id = value or uuid.uuid4().hex
    raw.request_id = request_id  # type: ignore[attr-defined]
    return request_id


def session_actor(request: HttpRequest) -> Actor:
    """The signed-in person of a dashboard page, acting on their own data."""
    return Actor.owner_acting(request.user, request_id_of(request))  # type: ignore[arg-type]


def error_response(error: AppError, request_id: str, headers: dict[str, str] | None = None) -> Response:
    response = Response({"error": error.as_dict(request_id=request_id)}, status=error.http_status)
    response[REQUEST_ID_HEADER] = request_id
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def body_read(request: HttpRequest, *, max_bytes: int, refusal: AppError | None = None) -> bytes:
    """The request body under a limit of its own (for the routes whose body is a document or an
    import), read before anything else touches it: later reads (`request.body`, DRF's parsers) get
    these bytes and do not apply the global DATA_UPLOAD_MAX_MEMORY_SIZE again. Over the limit, by its
    Content-Length or as read: `refusal`, by default `ingest`'s."""
    if hasattr(request, "_body"):
        return request._body
    declared = request.META.get("CONTENT_LENGTH") or ""
    if (declared.isdigit() and int(declared) > max_bytes) or (
        len(data := request.read(max_bytes + 1)) > max_bytes
    ):
        if refusal is not None:
            raise refusal
        raise AppError(
            # The one route it serves is `ingest`'s: the evidence contract's name for this refusal.
            Code.BODY_TOO_LARGE,
            f"The request body is larger than {max_bytes:,} bytes, which carries one document of the "
            f"{settings.DOCUMENT_MAX_BYTES:,}-byte document limit.",
            details={"max_bytes": max_bytes},
            agent_action="split the document into smaller parts and ingest them separately",
        )
    request._body = data
    return data


def request_limit_error(exc: Exception | None) -> AppError | None:
    """Django's refusal of a request over its limits (raised where the body or the query is first
    read: a parser, the CSRF check, the view) as our error; None for anything else."""
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return AppError(
            Code.PAYLOAD_TOO_LARGE,
            f"The request body is larger than {limit // (1024 * 1024)} MB (files of an upload aside).",
            details={"max_bytes": limit},
        )
    if isinstance(exc, TooManyFieldsSent):
        return AppError(
            Code.TOO_MANY_FIELDS,
            f"The request has more than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS:,} query parameters "
            "or form fields.",
            details={"max_fields": settings.DATA_UPLOAD_MAX_NUMBER_FIELDS},
        )
    if isinstance(exc, TooManyFilesSent):
        return AppError(
            Code.TOO_MANY_FIELDS,
            f"The request has more than {settings.DATA_UPLOAD_MAX_NUMBER_FILES:,} files.",
            details={"max_files": settings.DATA_UPLOAD_MAX_NUMBER_FILES},
            agent_action="upload one document per request",
        )
    return None


def _translate(exc: Exception) -> AppError:
    if isinstance(exc, AppError):
        return exc
    limit_error = request_limit_error(exc)
    if limit_error is not None:
        return limit_error
    if isinstance(exc, (drf_exceptions.NotAuthenticated, drf_exceptions.AuthenticationFailed)):
        return AppError(
            Code.NOT_AUTHENTICATED,
            str(exc.detail)
            if isinstance(exc, drf_exceptions.AuthenticationFailed)
            else "Authentication is required: a session, a personal access token or an OAuth token.",
            agent_action="authenticate (Authorization: Bearer <token>) and retry",
        )
    if isinstance(exc, drf_exceptions.PermissionDenied):
        return AppError(Code.FORBIDDEN, "You may not do this.", agent_action="stop")
    if isinstance(exc, (Http404, drf_exceptions.NotFound)):
        return AppError(Code.NOT_FOUND, "Not found.", agent_action="check the URL")
    if isinstance(exc, drf_exceptions.MethodNotAllowed):
        return AppError(Code.METHOD_NOT_ALLOWED, "This method is not allowed here.")
    if isinstance(exc, drf_exceptions.UnsupportedMediaType):
        return AppError(
            Code.UNSUPPORTED_MEDIA_TYPE,
            "Send application/json (or multipart/form-data for uploads).",
            agent_action="send the body as application/json (a document upload: multipart/form-data)",
        )
    if isinstance(exc, drf_exceptions.ParseError):
        return AppError(Code.INVALID_JSON, "The request body is not valid JSON.")
    if isinstance(exc, drf_exceptions.Throttled):
        wait = int(getattr(exc, "wait", None) or 1)
        return AppError(
            Code.RATE_LIMITED,
            f"Too many requests; retry in {wait} s.",
            agent_action=f"wait {wait} seconds and retry",
            details={"retry_after": wait},
        )
    if isinstance(exc, drf_exceptions.ValidationError):
        return AppError(Code.INVALID_ARGUMENTS, "The request is not valid.", details={"errors": exc.detail})
    if isinstance(exc, DataError):
        # A value the database refuses (out of range, unstorable text) is the caller's.
        return AppError(
            Code.INVALID_VALUE,
            "A value in the request cannot be stored.",
            agent_action="check the values you sent against the schema",
        )
    if isinstance(exc, drf_exceptions.NotAcceptable):
        return AppError(Code.NOT_ACCEPTABLE)
    if isinstance(exc, drf_exceptions.APIException) and exc.status_code < 500:
        # Another framework refusal: our code, never the framework's, reaches the client.
        return AppError(Code.INVALID_ARGUMENTS, "The request is not valid.")
    return errors.unexpected_error(exc)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    """DRF's EXCEPTION_HANDLER: every failure in the one error shape."""
    request = context.get("request")
    request_id = request_id_of(request) if request is not None else uuid.uuid4().hex
    error = _translate(exc)
    if error.code == Code.INTERNAL_ERROR:
        logger.error("unhandled error [request_id=%s]", request_id, exc_info=exc)
    headers: dict[str, str] = {}
    if error.http_status == 401:
        headers["WWW-Authenticate"] = rest_challenge()
    if error.http_status == 429 and "retry_after" in error.details:
        headers["Retry-After"] = str(error.details["retry_after"])
    return error_response(error, request_id, headers)


class ApiView(APIView):
    """Base view: our authentication, the declared scope checked, request ids on every response.

    Each subclass says in `scopes` which scope each HTTP method it implements needs, e.g.
    `{"get": SCOPE_READ, "post": SCOPE_WRITE}` (a value may instead be a function of the URL's
    keyword arguments, for a scope known only per request). The scope is checked before the
    handler runs, which then reads the checked caller from `self.caller`. A method without a
    declaration is a configuration error (memories.checks at start-up, 500 at run time), never
    an open endpoint. `session_only` additionally refuses every token (dashboard-only endpoints).
    """

    authentication_classes = [
        PersonalAccessTokenAuthentication,
        OAuthBearerAuthentication,
        CsrfSessionAuthentication,
    ]
    permission_classes: list[Any] = []
    scopes: ClassVar[Mapping[str, str | ScopeOfRequest]] = {}
    session_only: ClassVar[bool] = False
    # GETs that show a caller their own recent writes (a job's status) read on the primary, never a
    # replica; config/replicas.py says why and which reads do go to a replica.
    primary_reads: ClassVar[bool] = False
    # Set by check_permissions before the handler runs.
    caller: Caller
    scope: str = ""
    _route: Token[str | None] | None = None

    def check_permissions(self, request: Request) -> None:
        super().check_permissions(request)
        method = (request.method or "").lower()
        if method == "options":
            return
        if method == "head":
            method = "get"
        declared = self.scopes.get(method)
        if declared is None:
            if hasattr(self, method):
                raise ImproperlyConfigured(f"{type(self).__name__} declares no scope for {method.upper()}")
            return  # not served here: the 405 follows
        caller = caller_from_request(request)
        # A scope known only per request is resolved after authentication, so that an
        # anonymous caller learns nothing from it (e.g. which operation names exist).
        scope = declared if isinstance(declared, str) else declared(**self.kwargs)
        if scope not in ALL_SCOPES:
            raise ImproperlyConfigured(f"{type(self).__name__} needs the unknown scope {scope!r}")
        require_scope(caller, scope)
        self.scope = scope
        if self.session_only and caller.via != "session":
            # A token that could manage tokens would let a leaked read-only one escalate itself.
            raise AppError(
                Code.SESSION_REQUIRED,
                "Access tokens are managed from the signed-in dashboard only.",
                agent_action="ask the user to manage tokens in the dashboard",
            )
        self.caller = caller

    @property
    def actor(self) -> Actor:
        """The checked caller as the author of a change, for the audit trail."""
        return self.caller.actor(request_id_of(self.request))

    def initial(self, request: Request, *args: object, **kwargs: object) -> None:
        super().initial(request, *args, **kwargs)
        # One gate for every endpoint: text PostgreSQL cannot store is the caller's error.
        values: list[Any] = [*request.query_params.keys(), *request.query_params.values()]
        data = request.data
        if isinstance(data, QueryDict):
            values += [v for key in data for v in data.getlist(key) if isinstance(v, str)] + list(data.keys())
        elif isinstance(data, (dict, list, str)):
            values.append(data)
        bad = bad_character(values)
        if bad is not None:
            raise AppError(
                Code.INVALID_CHARACTERS,
                "The request contains a NUL character or an unpaired surrogate.",
                agent_action="remove control characters and send valid Unicode text",
            )
        if request.method in _READS and self.scope == SCOPE_READ and not self.primary_reads:
            self._route = replicas.route_enter(self.caller.user.pk)

    def handle_exception(self, exc: Exception) -> Response:
        if replicas.route_failed(exc):
            # The replica failed under a read: the same read again, on the primary.
            handler = getattr(self, (self.request.method or "get").lower())
            try:
                response: Response = handler(self.request, *self.args, **self.kwargs)
            except Exception as again:
                return super().handle_exception(again)
            return response
        return super().handle_exception(exc)

    def finalize_response(self, request: Request, response: Any, *args: object, **kwargs: object) -> Any:
        replicas.route_leave(self._route)
        self._route = None
        response = super().finalize_response(request, response, *args, **kwargs)
        response[REQUEST_ID_HEADER] = request_id_of(request)
        written = request.method not in _READS and self.scope == SCOPE_WRITE
        if (written or (self.primary_reads and self.scope == SCOPE_READ)) and response.status_code < 400:
            # Made or saw its own writes on the primary: the caller's next reads see at least this much.
            replicas.writes_seen(self.caller.user.pk)
        return response


def json_error(request: HttpRequest, error: AppError) -> JsonResponse:
    """The error shape from a plain Django view (outside DRF), with the request id."""
    request_id = request_id_of(request)
    response = JsonResponse({"error": error.as_dict(request_id=request_id)}, status=error.http_status)
    response[REQUEST_ID_HEADER] = request_id
    return response


def handler404(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """URLs that match no route: the error shape under /api/, Django's page elsewhere."""
    if request.path.startswith("/api/"):
        return json_error(request, AppError(Code.NOT_FOUND, "Not found.", agent_action="check the URL"))
    return defaults.page_not_found(request, exception or Http404())


def handler400(request: HttpRequest, exception: Exception) -> HttpResponse:
    """A request Django refuses outside DRF's handler (over a limit in middleware, a bad Host):
    the error shape under /api/, with its own status (413 for a body too large); Django's page
    elsewhere."""
    if request.path.startswith("/api/"):
        error = request_limit_error(exception) or AppError(
            Code.INVALID_ARGUMENTS, "The request is not valid."
        )
        return json_error(request, error)
    return defaults.bad_request(request, exception)


def handler500(request: HttpRequest) -> HttpResponse:
    """An error outside DRF's handler: never a traceback, the error shape under /api/."""
    if request.path.startswith("/api/"):
        return json_error(request, errors.internal_error())
    return defaults.server_error(request)

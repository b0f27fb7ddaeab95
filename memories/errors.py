"""The error catalogue: every code a client or an agent can get, and the one error shape.

Every failure that leaves the service is an `AppError` whose `code` is a member of `Code`. The
catalogue says, once per code, its HTTP status, whether a retry can succeed (a promise: only where
retrying can succeed and cannot duplicate anything), what an agent should do next, and what it
means. A raise site gives the code, a message safe to show, and optionally details and a more
specific action; it never chooses a status or the retry flag. REST renders the error as JSON, MCP
as an `isError` result with the same object; both add the request id, never a traceback.

Job failures (`job.error.code`, `pipeline_readiness`) use the same codes, marked `job`.
`docs/api.md` shows this catalogue as a table, generated from it (`manage.py error_codes --write`);
a test fails when the two differ, and another when code raises a code the catalogue lacks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from memories.parsing import JSON_MAX_DEPTH


class Code(StrEnum):
    # Who is calling.
    NOT_AUTHENTICATED = "not_authenticated"
    INSUFFICIENT_SCOPE = "insufficient_scope"
    SESSION_REQUIRED = "session_required"
    FORBIDDEN = "forbidden"
    APP_PAUSED = "app_paused"
    # What was sent.
    INVALID_JSON = "invalid_json"
    PAYLOAD_TOO_LARGE = "payload_too_large"
    TOO_MANY_FIELDS = "too_many_fields"
    INVALID_ARGUMENTS = "invalid_arguments"
    UNKNOWN_FIELD = "unknown_field"
    MISSING_FIELD = "missing_field"
    WRONG_TYPE = "wrong_type"
    VALUE_TOO_LONG = "value_too_long"
    VALUE_TOO_SHORT = "value_too_short"
    VALUE_OUT_OF_RANGE = "value_out_of_range"
    INVALID_FORMAT = "invalid_format"
    INVALID_VALUE = "invalid_value"
    DUPLICATE_ITEMS = "duplicate_items"
    INVALID_CHARACTERS = "invalid_characters"
    CONFLICTING_FIELDS = "conflicting_fields"
    UNKNOWN_PARAMETER = "unknown_parameter"
    INVALID_PARAMETER = "invalid_parameter"
    INVALID_CURSOR = "invalid_cursor"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    NOT_ACCEPTABLE = "not_acceptable"
    # Documents.
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"
    DOCUMENT_TOO_LARGE = "document_too_large"
    DOCUMENT_UNREADABLE = "document_unreadable"
    DOCUMENT_EMPTY = "document_empty"
    DOCUMENT_TOO_COMPLEX = "document_too_complex"
    INVALID_BASE64 = "invalid_base64"
    # The evidence contract's own names for `ingest`'s two refusals of a body.
    BODY_TOO_LARGE = "body_too_large"
    EMPTY_BODY = "empty_body"
    SOURCE_REF_INCOMPLETE = "source_ref_incomplete"
    SOURCE_REF_REQUIRED = "source_ref_required"
    # Images.
    IMAGE_TOO_LARGE = "image_too_large"
    IMAGE_UNREADABLE = "image_unreadable"
    IMAGE_LINK_INVALID = "image_link_invalid"
    IMAGE_LINK_EXPIRED = "image_link_expired"
    IMAGE_NOT_FOUND = "image_not_found"
    # Imports.
    IMPORT_TOO_LARGE = "import_too_large"
    IMPORT_FORMAT_UNKNOWN = "import_format_unknown"
    IMPORT_SCHEMA_CHANGED = "import_schema_changed"
    IMPORT_ARCHIVE_INVALID = "import_archive_invalid"
    IMPORT_ARCHIVE_TOO_LARGE = "import_archive_too_large"
    IMPORT_EMPTY = "import_empty"
    IMPORT_NOT_FOUND = "import_not_found"
    IMPORT_RUNNING = "import_running"
    IMPORT_CANCELLED = "import_cancelled"
    IMPORT_QUEUE_FULL = "import_queue_full"
    # What was asked for does not exist (or is someone else's: existence is not revealed).
    NOT_FOUND = "not_found"
    MEMORY_NOT_FOUND = "memory_not_found"
    JOB_NOT_FOUND = "job_not_found"
    VERSION_NOT_FOUND = "version_not_found"
    SPACE_NOT_FOUND = "space_not_found"
    RELATION_NOT_FOUND = "relation_not_found"
    ENTITY_NOT_FOUND = "entity_not_found"
    TOKEN_NOT_FOUND = "token_not_found"  # noqa: S105 - an error code, not a secret
    APPLICATION_NOT_FOUND = "application_not_found"
    ACCOUNT_NOT_FOUND = "account_not_found"
    UNKNOWN_OPERATION = "unknown_operation"
    UNKNOWN_RESOURCE = "unknown_resource"
    # The request conflicts with what is stored.
    SPACE_NAME_TAKEN = "space_name_taken"
    SPACE_LIMIT_REACHED = "space_limit_reached"
    MEMORY_NOT_CURRENT = "memory_not_current"
    RELATION_NOT_RESTORABLE = "relation_not_restorable"
    INVALID_SPACE_NAME = "invalid_space_name"
    CANNOT_DELETE_DEFAULT_SPACE = "cannot_delete_default_space"
    SWITCH_SPACE_UNAVAILABLE = "switch_space_unavailable"
    INVALID_ENTITY_NAME = "invalid_entity_name"
    SAME_ENTITY = "same_entity"
    SAVE_FAILED = "save_failed"
    EMAIL_TAKEN = "email_taken"
    INVALID_TOKEN_NAME = "invalid_token_name"  # noqa: S105 - an error code, not a secret
    INVALID_SCOPE = "invalid_scope"
    INVALID_EXPIRY = "invalid_expiry"
    # The open query (evidence profile).
    QUERY_REJECTED = "query_rejected"
    QUERY_FAILED = "query_failed"
    QUERY_TIMEOUT = "query_timeout"
    QUERY_UNAVAILABLE = "query_unavailable"
    UNKNOWN_VIEW = "unknown_view"
    SAVED_QUERY_NOT_FOUND = "saved_query_not_found"
    # Too much, or our side.
    RATE_LIMITED = "rate_limited"
    INTERNAL_ERROR = "internal_error"
    DATABASE_UNAVAILABLE = "database_unavailable"
    # Job failures.
    SOURCE_MISSING = "source_missing"
    NOTHING_TO_REMEMBER = "nothing_to_remember"
    REMOTE_SERVICE_ERROR = "remote_service_error"
    RETRIES_EXHAUSTED = "retries_exhausted"


@dataclass(frozen=True)
class Entry:
    """What a code means, once: its HTTP status, whether a retry can succeed, the agent's next step."""

    # None for a job failure code, which is never an error response.
    status: int | None
    meaning: str
    action: str = "fix the request and try again"
    retryable: bool = False
    # The message when the raise site has nothing more specific to say.
    message: str = ""
    # Where it appears: an error response, a job's failure (`job.error.code`), or both.
    response: bool = True
    job: bool = False


_NOT_YOURS = "unknown id, or another account's (existence is not revealed)"

CATALOGUE: dict[Code, Entry] = {
    Code.NOT_AUTHENTICATED: Entry(
        401,
        "no credentials, or a token that is unknown, revoked or expired",
        "send an OAuth access token or a personal access token as a Bearer token",
        message="Authentication is required.",
    ),
    Code.INSUFFICIENT_SCOPE: Entry(
        403,
        "the token lacks the scope the operation needs (`details.required_scope`)",
        "ask the user to grant the scope in details.required_scope",
    ),
    Code.SESSION_REQUIRED: Entry(
        403,
        "access tokens are managed from the signed-in dashboard only",
        "ask the user to manage tokens in the dashboard",
        message="Access tokens are managed from the signed-in dashboard only.",
    ),
    Code.FORBIDDEN: Entry(403, "the caller may not do this", "stop", message="You may not do this."),
    Code.APP_PAUSED: Entry(
        403,
        "the account's owner paused this app in the dashboard: its tokens are refused until they resume it",
        "stop, and tell the user this app is paused in Deep Recall's dashboard (Agents)",
        message="The account's owner paused this app: its access is refused until they resume it.",
    ),
    Code.INVALID_JSON: Entry(
        400,
        f"the body is not JSON (in UTF-8), or nests arrays and objects more than {JSON_MAX_DEPTH} "
        "levels deep",
        "send a JSON body",
        message="The request body is not valid JSON.",
    ),
    Code.PAYLOAD_TOO_LARGE: Entry(
        413,
        "a REST request body over 2 MB, not counting an upload's file (`DATA_UPLOAD_MAX_MEMORY_SIZE`)",
        "send a smaller body: split the content into several saves, or upload a document as a file",
        message="The request body is too large.",
    ),
    Code.TOO_MANY_FIELDS: Entry(
        400,
        "more than 1,000 query parameters or form fields (`DATA_UPLOAD_MAX_NUMBER_FIELDS`), or more "
        "than 100 files (`DATA_UPLOAD_MAX_NUMBER_FILES`), in one request",
        "send only the parameters and fields the endpoint takes",
    ),
    Code.INVALID_ARGUMENTS: Entry(400, "the body or the arguments are not a JSON object, or not valid"),
    Code.UNKNOWN_FIELD: Entry(
        400,
        "a key the schema does not define (nothing is ignored silently)",
        "remove the unknown fields; see the operation's input schema",
    ),
    Code.MISSING_FIELD: Entry(400, "a required key is absent", "send the field in details.field"),
    Code.WRONG_TYPE: Entry(400, 'e.g. `true` where an integer is expected, `"5"` for 5'),
    Code.VALUE_TOO_LONG: Entry(
        400, "a string over its limit, measured after trimming", "shorten it (or split it into several saves)"
    ),
    Code.VALUE_TOO_SHORT: Entry(400, "an empty string (after trimming) or one under its minimum"),
    Code.VALUE_OUT_OF_RANGE: Entry(400, "a number or an array size outside its limits"),
    Code.INVALID_FORMAT: Entry(
        400,
        "not a canonical UUID; not an RFC 3339 date-time with an offset",
        "send the value in the form named",
    ),
    Code.INVALID_VALUE: Entry(400, "not one of the allowed values, or a value that cannot be stored"),
    Code.DUPLICATE_ITEMS: Entry(400, "an array that must be unique is not"),
    Code.INVALID_CHARACTERS: Entry(
        400,
        "text PostgreSQL cannot store (NUL, lone surrogates)",
        "remove control characters and send valid Unicode text",
    ),
    Code.CONFLICTING_FIELDS: Entry(400, "MCP `ingest`: both `content` and `document_base64`"),
    Code.UNKNOWN_PARAMETER: Entry(
        400,
        "a query parameter the endpoint does not take",
        "remove it; the allowed ones are in details.allowed",
    ),
    Code.INVALID_PARAMETER: Entry(
        400, "a query parameter given twice, empty, or malformed", "fix the parameter in details.parameter"
    ),
    Code.INVALID_CURSOR: Entry(
        400,
        "a cursor this service did not hand out",
        "send the next_cursor of the previous page unchanged, or leave cursor out",
        message="cursor is not a cursor this service returned.",
    ),
    Code.METHOD_NOT_ALLOWED: Entry(
        405,
        "this HTTP method is not served here",
        "use a method the endpoint serves",
        message="This method is not allowed here.",
    ),
    Code.NOT_ACCEPTABLE: Entry(
        406,
        "the Accept header asks for something other than JSON",
        "accept application/json",
        message="This endpoint answers in JSON only.",
    ),
    Code.UNSUPPORTED_MEDIA_TYPE: Entry(
        415,
        "a document that is not .txt/.md/.pdf/.html, an image that is not PNG/JPEG/WebP, or an "
        "upload whose bytes do not match its name or type",
        "send a supported document or image type",
    ),
    # The three below are also job failures: a document's text is extracted by the worker.
    Code.DOCUMENT_TOO_LARGE: Entry(
        413,
        "over `DOCUMENT_MAX_BYTES` (10 MB by default); a job: a PDF over 2,000 pages or 2,000,000 "
        "characters of text",
        "send a smaller document, or split it",
        job=True,
    ),
    Code.DOCUMENT_UNREADABLE: Entry(
        422,
        "a corrupt, encrypted or image-only PDF, or text that cannot be decoded",
        "send a readable document",
        job=True,
    ),
    Code.DOCUMENT_EMPTY: Entry(
        422, "nothing is left after extracting the text", "send a document with text", job=True
    ),
    Code.DOCUMENT_TOO_COMPLEX: Entry(
        None,
        "reading the document's text took more than the deployment's CPU, memory or time limit "
        "(`DOCUMENT_PARSE_*`; for an image `IMAGE_READ_*`); a crafted file does this on purpose",
        "re-save or print the document to a new PDF, or upload its text as a .txt file",
        message="This document is too complex to read within the limits of this service.",
        response=False,
        job=True,
    ),
    Code.INVALID_BASE64: Entry(
        400,
        "MCP `ingest`: `document_base64` is not strict, padded, standard base64",
        "encode the bytes again",
    ),
    Code.BODY_TOO_LARGE: Entry(
        413,
        "`ingest` (MCP or `POST /api/v1/ingest`): the document is over `DOCUMENT_MAX_BYTES` (10 MB by "
        "default); any MCP request: its body is over the endpoint's limit (1 MiB; a whole document "
        "in base64 where `ingest` is offered)",
        "split the document (or the content) into smaller parts and send them separately",
        message="The request body is too large.",
    ),
    Code.EMPTY_BODY: Entry(
        400,
        "`ingest`: `content` is blank, or `document_base64` decodes to nothing but whitespace",
        "send content that states something in words",
    ),
    Code.SOURCE_REF_INCOMPLETE: Entry(
        400,
        "`source_kind` without `source_ref` or the reverse",
        "send both source_kind and source_ref, or neither",
    ),
    Code.SOURCE_REF_REQUIRED: Entry(
        400,
        "a lineage field (`versioning_mode: living`, `source_modified_at`, `source_version_ref`) "
        "without `source_kind` + `source_ref` (they name the document across versions)",
        "send source_kind and source_ref, or use snapshot",
    ),
    Code.IMAGE_TOO_LARGE: Entry(
        413,
        "an image over `IMAGE_MAX_BYTES` (10 MB by default) or `IMAGE_MAX_PIXELS` (50,000,000 by "
        "default; `details` says which)",
        "scale the image down (or crop it) and upload it again",
        job=True,
    ),
    Code.IMAGE_UNREADABLE: Entry(
        422,
        "an image whose header or pixels cannot be decoded (damaged, truncated)",
        "export the image again and upload the new file",
        job=True,
    ),
    Code.IMAGE_LINK_INVALID: Entry(
        403,
        "an `image_url` whose signature does not match (altered, or not one this service made)",
        "use an image_url exactly as recall returned it",
        message="This image link is not valid.",
    ),
    Code.IMAGE_LINK_EXPIRED: Entry(
        410,
        "an `image_url` older than one hour",
        "recall again for a fresh image_url",
        message="This image link has expired.",
    ),
    Code.IMAGE_NOT_FOUND: Entry(
        404,
        "a valid `image_url` whose image was deleted since",
        "stop: the image was deleted",
        message="This image no longer exists.",
    ),
    Code.NOT_FOUND: Entry(404, "no such path or thing", "check the URL", message="Not found."),
    Code.MEMORY_NOT_FOUND: Entry(
        404,
        f"memory: {_NOT_YOURS}",
        "check the memory_id; recall to find the right one",
        message="No memory with this id exists in your account.",
    ),
    Code.JOB_NOT_FOUND: Entry(
        404,
        f"job: {_NOT_YOURS}",
        "check the job_id; it is returned by remember and document uploads",
        message="No job with this id exists in your account.",
    ),
    Code.IMPORT_NOT_FOUND: Entry(
        404,
        f"import: {_NOT_YOURS}",
        "check the import's id; POST /api/v1/imports returns it",
        message="No import with this id exists in your account.",
    ),
    Code.VERSION_NOT_FOUND: Entry(
        404,
        f"document version: {_NOT_YOURS}",
        "check the version_id; ingest returns it (pipeline.poll_with.version_ids)",
        message="No document version with this id exists in your account.",
    ),
    Code.SPACE_NOT_FOUND: Entry(
        404,
        f"space: {_NOT_YOURS}",
        "list your spaces and use one of their ids",
        message="No space with this id exists in your account.",
    ),
    Code.RELATION_NOT_FOUND: Entry(
        404,
        f"relation: {_NOT_YOURS}",
        "look the relation up again (get_context) and use its id",
        message="No relation with this id exists in your account.",
    ),
    Code.ENTITY_NOT_FOUND: Entry(
        404,
        "graph `get_context`: no entity of that name or alias in the space",
        "call list_entities to see the entities of this space, then use one of their names",
        message="No entity with this name or alias exists in the current space.",
    ),
    Code.TOKEN_NOT_FOUND: Entry(
        404,
        f"personal access token: {_NOT_YOURS}",
        "list your tokens to find the right id",
        message="No personal access token with this id exists in your account.",
    ),
    Code.APPLICATION_NOT_FOUND: Entry(
        404,
        "a connected app that holds nothing of this account",
        "list the connected apps",
        message="No connected app with this id in your account.",
    ),
    Code.ACCOUNT_NOT_FOUND: Entry(
        404, "the account is already deleted", "stop", message="This account no longer exists."
    ),
    Code.UNKNOWN_OPERATION: Entry(
        404, "no such operation in the registry", "list the operations and use one of their names"
    ),
    Code.UNKNOWN_RESOURCE: Entry(
        404,
        "an MCP resource URI that is not offered (JSON-RPC error `-32002`)",
        "list the resources and use one of their URIs",
        message="There is no resource with this URI here.",
    ),
    Code.SPACE_NAME_TAKEN: Entry(409, "a space with that name exists", "choose another name"),
    Code.SPACE_LIMIT_REACHED: Entry(
        409,
        "an account holds at most `SPACES_MAX` spaces (200, its default included); an import of our "
        "export counts the spaces it would make (`details.adding`) with those held (`details.held`)",
        "delete a space you no longer use, or import a file that names fewer new spaces",
        message="Your account cannot hold more spaces.",
    ),
    Code.RELATION_NOT_RESTORABLE: Entry(
        409,
        "restoring an invalidated relation while another holds in its place: the same relation said "
        "again, or a newer lives_in / works_at of its subject (`details.holding`)",
        "keep the relation that holds now, or invalidate it first and restore this one",
        message="Another relation holds in this one's place; restoring it would make two hold at once.",
    ),
    Code.MEMORY_NOT_CURRENT: Entry(
        409,
        "a revision of a memory that a newer version replaced, or that is suppressed (a job: the "
        "memory was deleted, suppressed or retired while the revision waited, so no version was made)",
        "revise the current version (restore a suppressed memory first)",
        message="Only the current, unsuppressed version of a memory can be revised.",
        job=True,
    ),
    Code.IMPORT_RUNNING: Entry(
        409,
        "an import can be undone once it has stopped (finished, failed or cancelled)",
        "cancel the import, wait until its status is no longer queued or running, then undo it",
        message="This import is still running: cancel it first, then undo it.",
    ),
    Code.IMPORT_QUEUE_FULL: Entry(
        409,
        "an account has `IMPORT_MAX_PENDING` imports (3 by default) queued or running already: each "
        "holds its file until it is done",
        "wait until one of your imports has finished (or cancel one), then send the file again",
        message="You have too many imports waiting or running: wait until one finishes.",
    ),
    Code.IMPORT_TOO_LARGE: Entry(
        413,
        "an import file over `IMPORT_MAX_BYTES` (200 MB by default), refused from its Content-Length "
        "or as soon as the upload passes it",
        "split the export (a smaller date range, fewer notes) and import the parts",
    ),
    Code.IMPORT_FORMAT_UNKNOWN: Entry(
        415,
        "an import file that is none of the formats imported (ChatGPT or Claude export, mem0 get_all "
        "JSON, Markdown notes, a Deep Recall export), or JSON that is not UTF-8 JSON",
        "send one of the supported exports as it was downloaded",
    ),
    Code.IMPORT_SCHEMA_CHANGED: Entry(
        422,
        "a known export whose fields are not where they were (`details.where`, `details.expected`): "
        "the exporter changed its format, or the file was edited",
        "send the export as downloaded; if it is, report the details so the reader can be updated",
    ),
    Code.IMPORT_ARCHIVE_INVALID: Entry(
        422, "a zip that is damaged or truncated", "download the export again and send the new file"
    ),
    Code.IMPORT_ARCHIVE_TOO_LARGE: Entry(
        413,
        "a zip that unpacks to more than `IMPORT_MAX_UNPACKED_BYTES` or to more than "
        "`IMPORT_MAX_RATIO` times its own size (a zip bomb), or holds over 20,000 files",
        "split the archive and import the parts",
    ),
    Code.IMPORT_EMPTY: Entry(
        422, "an import file with nothing in it to import", "send an export that holds conversations or notes"
    ),
    Code.INVALID_SPACE_NAME: Entry(
        400, "a space name that is empty or too long", "send a name of 1 to 100 characters"
    ),
    Code.CANNOT_DELETE_DEFAULT_SPACE: Entry(
        409,
        "the default space cannot be deleted",
        "make another space the default first, then delete this one",
        message="This is your default space; make another space the default before deleting it.",
    ),
    Code.SWITCH_SPACE_UNAVAILABLE: Entry(
        400,
        "graph `switch_agent` without a grant: only an OAuth agent or a personal token has a space to switch",
        "connect with an OAuth grant or a personal access token, or choose the space in the dashboard",
    ),
    Code.INVALID_ENTITY_NAME: Entry(
        400, "graph `relate`: a name with no letter or digit", "send the entity's name as it is written"
    ),
    Code.SAME_ENTITY: Entry(400, "graph `relate`: one entity at both ends", "relate two different entities"),
    Code.SAVE_FAILED: Entry(
        422,
        "graph `remember`: the save was processed and stored no memory (`details.job_error` says why)",
        "follow details.job_error.agent_action",
    ),
    Code.EMAIL_TAKEN: Entry(
        409,
        "another account uses this email",
        "use another email",
        message="Another account already uses this email.",
    ),
    Code.INVALID_TOKEN_NAME: Entry(
        400,
        "a token name that is empty or too long",
        "give the token a short name that says where it is used",
    ),
    Code.INVALID_SCOPE: Entry(
        400,
        "a scope that is not memory:read or memory:write, none, or one twice",
        "pass a list of scopes from: memory:read, memory:write",
    ),
    Code.INVALID_EXPIRY: Entry(
        400,
        "a token expiry without a time zone, or not in the future",
        "send an expiry later than now, with an offset, or none",
    ),
    Code.QUERY_REJECTED: Entry(
        400,
        "open query: not one read-only select statement over the documented views (`details.reason`: "
        "syntax_error, multiple_statements, not_select, select_into, locking_clause, writable_cte, "
        "forbidden_relation, forbidden_function, forbidden_type, forbidden_construct, unknown_column, "
        "field_selection, parameters, too_long)",
        "write a single select statement over the views query_space lists, with the functions it allows",
    ),
    Code.QUERY_FAILED: Entry(
        422,
        "open query: PostgreSQL refused to run an accepted select statement (an unknown column, a bad "
        "cast, a division by zero; `details.sqlstate`)",
        "fix the statement as the message says; describe_view lists the columns",
    ),
    Code.QUERY_TIMEOUT: Entry(
        422,
        "open query: the statement ran past the deployment's statement timeout and was stopped",
        "narrow the query (filter on a view's clocks, aggregate, or select fewer rows) and run it again",
        message="The query ran too long and was stopped.",
    ),
    Code.QUERY_UNAVAILABLE: Entry(
        503,
        "open query: this deployment's query role is missing or could do more than read the views "
        "(its operator must finish docs/deploy.md's database step); nothing was run",
        "use the other read tools (recall, facts_context); tell the user the open query is unavailable here",
        message="The open query is not available on this deployment.",
    ),
    Code.UNKNOWN_VIEW: Entry(
        404,
        "open query: no documented view of that name",
        "call query_space to see the views",
        message="There is no view with this name.",
    ),
    Code.SAVED_QUERY_NOT_FOUND: Entry(
        404,
        "open query: no saved query of that name",
        "call list_saved_queries and use one of their names",
        message="There is no saved query with this name.",
    ),
    Code.RATE_LIMITED: Entry(
        429, "too many requests", "wait details.retry_after seconds and retry", retryable=True
    ),
    Code.INTERNAL_ERROR: Entry(
        500,
        "our fault; logged with the request id (a job: it failed unexpectedly)",
        "retry later; report the request_id if it persists",
        retryable=True,
        message="Something went wrong on our side. It has been logged.",
        job=True,
    ),
    Code.DATABASE_UNAVAILABLE: Entry(
        503,
        "the database could not be reached (restarting, failing over); saving again is safe: the same"
        " content again is one memory",
        "retry in a few seconds",
        retryable=True,
        message="The service's database is briefly unavailable. Retry in a few seconds.",
    ),
    Code.SOURCE_MISSING: Entry(
        None,
        "the saved content was deleted before the job ran",
        "nothing to do: it was deleted",
        response=False,
        job=True,
    ),
    Code.NOTHING_TO_REMEMBER: Entry(
        422,
        "the content states nothing: only punctuation, symbols or a speaker's name (refused when"
        " saved; a job: no memory could be derived from it)",
        "send content that states something in words",
        message="The content states nothing to remember: it has no words, or only a speaker's name.",
        job=True,
    ),
    Code.REMOTE_SERVICE_ERROR: Entry(
        None,
        "a model service the deployment uses refused the request",
        "tell the operator; saving again may help",
        response=False,
        job=True,
    ),
    Code.IMPORT_CANCELLED: Entry(
        None,
        "the import was cancelled; what it stored before stays until it is undone",
        "undo the import to remove what it stored, or import the file again to carry on",
        response=False,
        job=True,
    ),
    Code.RETRIES_EXHAUSTED: Entry(
        None,
        "the database or a model service failed on every retry",
        "save again later",
        response=False,
        job=True,
    ),
}


@dataclass
class AppError(Exception):
    """A failure for the client: a catalogue code, a message safe to show, optional details and a
    more specific next step than the catalogue's. Status and retryability come from the catalogue."""

    code: Code
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    agent_action: str = ""

    def __post_init__(self) -> None:
        # An unknown code is a bug at the raise site: refuse it there, loudly, not at the client.
        self.code = Code(self.code)
        entry = CATALOGUE[self.code]
        if not entry.response:
            raise ValueError(f"{self.code} is a job failure code, not an error response")
        self.message = self.message or entry.message
        self.agent_action = self.agent_action or entry.action
        super().__init__(self.message)

    @property
    def http_status(self) -> int:
        status = CATALOGUE[self.code].status
        assert status is not None  # __post_init__ refuses job-only codes
        return status

    @property
    def retryable(self) -> bool:
        return CATALOGUE[self.code].retryable

    def as_dict(self, *, request_id: str = "") -> dict[str, object]:
        body: dict[str, object] = {
            "code": self.code.value,
            "message": self.message,
            "retryable": self.retryable,
            "agent_action": self.agent_action,
        }
        if self.details:
            body["details"] = self.details
        if request_id:
            body["request_id"] = request_id
        return body


def job_code(code: Code) -> str:
    """A job failure code, checked against the catalogue (what `job.error.code` may hold)."""
    if not CATALOGUE[Code(code)].job:
        raise ValueError(f"{code} is not a job failure code")
    return Code(code).value


def name_checked(value: object, *, max_length: int, code: Code, what: str) -> str:
    """`value` trimmed, when it is a string of 1 to `max_length` characters; else `code`, saying so."""
    cleaned = value.strip() if isinstance(value, str) else ""
    if not 1 <= len(cleaned) <= max_length:
        raise AppError(code, f"{what} has 1 to {max_length} characters.", details={"parameter": "name"})
    return cleaned


def internal_error() -> AppError:
    return AppError(Code.INTERNAL_ERROR)


def unexpected_error(exc: BaseException) -> AppError:
    """What an exception no handler expected becomes: `database_unavailable` when the database
    could not be reached (a retry is safe: a save said again is evidence for the same memory, not a
    second one), else `internal_error`."""
    from django.db import InterfaceError, OperationalError

    if isinstance(exc, (OperationalError, InterfaceError)) and _connection_lost(exc):
        return AppError(Code.DATABASE_UNAVAILABLE)
    return internal_error()


def _connection_lost(exc: BaseException) -> bool:
    # A lost or refused connection, not a statement the database refused (a deadlock, a timeout,
    # which are OperationalErrors too and may follow writes of the same request).
    from django.db import InterfaceError

    if isinstance(exc, InterfaceError):
        return True
    cause = exc.__cause__
    sqlstate = getattr(cause, "sqlstate", None)
    # Class 08: connection exceptions; 57P01-57P03: admin shutdown, crash shutdown, cannot connect now.
    return sqlstate is None or sqlstate.startswith("08") or sqlstate in ("57P01", "57P02", "57P03")


def markdown_table() -> str:
    """The catalogue as the table in docs/api.md (`manage.py error_codes --write` puts it there)."""
    rows = ["| code | status | retryable | when | what to do |", "|---|---|---|---|---|"]
    for code, entry in CATALOGUE.items():
        status = str(entry.status) if entry.response else "job"
        if entry.response and entry.job:
            status += ", job"
        retry = "yes" if entry.retryable else "no"
        rows.append(f"| `{code.value}` | {status} | {retry} | {entry.meaning} | {entry.action} |")
    return "\n".join(rows) + "\n"

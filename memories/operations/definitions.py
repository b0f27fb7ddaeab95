"""The operations themselves. Each is one registry row; handlers stay thin."""

from __future__ import annotations

from typing import Any

from accounts.caller import SCOPE_WRITE, Caller
from memories import services
from memories.operations.registry import EVERY_PROFILE, Operation, register
from memories.operations.schemas import UUID

REASON_CODES = ["duplicate", "incorrect", "private", "outdated", "other"]


def _remember(caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    job = services.remember(caller=caller, content=args["content"], session_id=args.get("session_id"))
    return {"job_id": str(job.id), "status": job.status}


register(
    Operation(
        name="remember",
        description=(
            "Save something worth remembering about the user: a fact, an event, a plan, or a whole "
            "conversation. Returns at once with a job id; the memories become recallable when the job "
            "succeeds (usually within a second)."
        ),
        input_schema={
            "type": "object",
            "additionalProperties": False,
            "required": ["content"],
            "properties": {
                "content": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 100_000,
                    "description": "What to remember, in plain language (trimmed; 1-100,000 characters).",
                },
                "session_id": {**UUID, "description": "Optional conversation/session id to group saves."},
            },
        },
        output_schema={
            "type": "object",
            "additionalProperties": False,
            "required": ["job_id", "status"],
            "properties": {"job_id": UUID, "status": {"type": "string", "enum": ["queued"]}},
        },
        scope=SCOPE_WRITE,
        profiles=EVERY_PROFILE,
        handler=_remember,
        annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False},
    )
)


def _forget(caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    memory_id = args["memory_id"]
    if args["hard"]:
        receipt = services.memory_hard_delete(
            owner=caller.user,
            memory_id=memory_id,
            reason=args["reason_code"],
            actor_user=caller.user,
            actor_agent_id=caller.agent_id,
        )
        return {
            "action": "hard_deleted",
            "memory_id": memory_id,
            "message": "The memory and everything derived from it were permanently deleted.",
            "receipt": receipt,
        }
    services.memory_suppress(
        owner=caller.user,
        memory_id=memory_id,
        reason=args["reason_code"],
        actor_user=caller.user,
        actor_agent_id=caller.agent_id,
    )
    return {
        "action": "suppressed",
        "memory_id": memory_id,
        "message": (
            "The memory is hidden from recall and answers; the user can restore it from the dashboard."
        ),
    }


register(
    Operation(
        name="forget",
        description=(
            "Forget one of the user's memories. By default it is suppressed (hidden, restorable by the "
            "user). Use hard=true only when the user explicitly asks for permanent deletion."
        ),
        input_schema={
            "type": "object",
            "additionalProperties": False,
            "required": ["memory_id"],
            "properties": {
                "memory_id": {**UUID, "description": "The id of a memory, as returned by recall."},
                "hard": {"type": "boolean", "default": False, "description": "Permanent deletion."},
                "reason_code": {"type": "string", "enum": REASON_CODES, "default": "other"},
            },
        },
        output_schema={
            "type": "object",
            "required": ["action", "memory_id", "message"],
            "properties": {
                "action": {"type": "string", "enum": ["suppressed", "hard_deleted"]},
                "memory_id": UUID,
                "message": {"type": "string"},
                "receipt": {"type": "object"},
            },
        },
        scope=SCOPE_WRITE,
        profiles=EVERY_PROFILE,
        handler=_forget,
        annotations={"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True},
    )
)

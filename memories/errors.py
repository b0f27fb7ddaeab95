"""The one error shape. Every failure that leaves the service is an AppError.

`code` is a stable string from this module; `message` is safe to show; the
`agent_action` tells a calling agent what to do next. REST renders it as JSON,
MCP as an `isError` result; both add the request id, never a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class AppError(Exception):
    code: str
    message: str
    http_status: int = 400
    retryable: bool = False
    agent_action: str = "fix the request and try again"
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def as_dict(self, *, request_id: str = "") -> dict[str, Any]:
        body: dict[str, Any] = {
            "code": self.code,
            "message": self.message,
            "retryable": self.retryable,
            "agent_action": self.agent_action,
        }
        if self.details:
            body["details"] = self.details
        if request_id:
            body["request_id"] = request_id
        return body


# Stable codes. Add here; never rename.
MEMORY_NOT_FOUND = "memory_not_found"
SPACE_NOT_FOUND = "space_not_found"
INVALID_STATE = "invalid_state"
INTERNAL_ERROR = "internal_error"
NOT_FOUND = "not_found"


def memory_not_found() -> AppError:
    # Also what an outsider gets for someone else's memory: existence is not revealed.
    return AppError(
        MEMORY_NOT_FOUND,
        "No memory with this id exists in your account.",
        http_status=404,
        agent_action="check the memory_id; recall to find the right one",
    )


def internal_error() -> AppError:
    return AppError(
        INTERNAL_ERROR,
        "Something went wrong on our side. It has been logged.",
        http_status=500,
        retryable=True,
        agent_action="retry later; report the request_id if it persists",
    )

"""Who is calling: the one object every surface (REST, MCP, dashboard) hands to operations.

Attribution and permissions come from here and never from request bodies.
"""

from __future__ import annotations

from dataclasses import dataclass

from accounts.models import User

SCOPE_READ = "memory:read"
SCOPE_WRITE = "memory:write"
ALL_SCOPES = frozenset({SCOPE_READ, SCOPE_WRITE})


@dataclass(frozen=True)
class Caller:
    user: User
    scopes: frozenset[str]
    # The OAuth application (oauth2_provider.Application pk) acting for the user:
    # the agent every write is attributed to. None for the dashboard and for
    # personal access tokens.
    agent_id: int | None = None
    # "session" (dashboard), "pat" (personal access token) or "oauth".
    via: str = "session"
    token_id: str = ""

    def has_scope(self, scope: str) -> bool:
        return scope in self.scopes

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

    @property
    def in_person(self) -> bool:
        """The owner themselves (the dashboard, their personal access token), not an app acting for
        them: only they see what they forgot (issue 40)."""
        return self.via != "oauth" and self.agent_id is None

    def actor(self, request_id: str = "") -> Actor:
        """The caller as the author of a change: its user, acting on their own data, with its agent."""
        return Actor(owner=self.user, user=self.user, agent_id=self.agent_id, request_id=request_id)


@dataclass(frozen=True)
class Actor:
    """Who makes a change, as the audit trail records it.

    `owner` is whose data changes; `user` the person acting (the owner, or an operator in the
    admin; None when nobody acts for them, e.g. a deleted account); `agent_id` the OAuth
    application acting for the user, if any; `request_id` ties the audit row to the request's logs.
    Every write service takes one, so attribution is passed as one value, never field by field.
    """

    owner: User
    user: User | None = None
    agent_id: int | None = None
    request_id: str = ""

    @classmethod
    def owner_acting(cls, owner: User, request_id: str = "") -> Actor:
        """The owner acting on their own data (the dashboard, a service acting for them)."""
        return cls(owner=owner, user=owner, request_id=request_id)

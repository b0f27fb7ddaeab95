"""All outbound HTTP (the LLM and embeddings endpoints) goes through here.

One place for timeouts, retries on transient failures and error mapping, so the
rest of the code never sees httpx and tests have one thing to point at a local
stand-in server.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import httpx

logger = logging.getLogger(__name__)

TIMEOUT_SECONDS = 30.0
ATTEMPTS = 3


class OutboundError(Exception):
    """A remote service failed. `transient` says whether retrying later may help."""

    def __init__(self, message: str, *, transient: bool) -> None:
        super().__init__(message)
        self.transient = transient


def post_json(
    url: str, payload: dict[str, Any], *, api_key: str = "", timeout: float = TIMEOUT_SECONDS
) -> Any:
    """POST JSON and return the decoded JSON answer, retrying 429/5xx/network errors."""
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    last: OutboundError | None = None
    for attempt in range(ATTEMPTS):
        try:
            response = httpx.post(url, json=payload, headers=headers, timeout=timeout)
        except httpx.HTTPError as exc:
            last = OutboundError(f"{exc.__class__.__name__} calling {httpx.URL(url).host}", transient=True)
        else:
            if response.status_code < 400:
                try:
                    return response.json()
                except ValueError:
                    raise OutboundError("the remote answer is not JSON", transient=False) from None
            transient = response.status_code == 429 or response.status_code >= 500
            last = OutboundError(
                f"HTTP {response.status_code} from {httpx.URL(url).host}", transient=transient
            )
            if not transient:
                raise last
        logger.warning("outbound call failed (attempt %d): %s", attempt + 1, last)
        time.sleep(min(2**attempt * 0.5, 4))
    assert last is not None
    raise last

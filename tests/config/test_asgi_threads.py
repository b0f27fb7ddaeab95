"""Each request's synchronous code runs on a thread kept for the next request (config.asgi), instead
of a thread the event loop starts and joins per request; requests in flight together still get a
thread each."""

from __future__ import annotations

import asyncio
import threading

import httpx
import pytest
from asgiref.current_thread_executor import CurrentThreadExecutor

from config import asgi

pytestmark = pytest.mark.django_db(transaction=True)


def _threads(executor: object) -> set[threading.Thread]:
    return set(executor._threads)  # type: ignore[attr-defined]


def test_requests_run_on_kept_threads_one_per_request_in_flight():
    executors = asgi.Handler.executors
    executors._idle.clear()

    async def run() -> None:
        transport = httpx.ASGITransport(app=asgi.application)  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            # A DRF view: synchronous code, on the request's thread (401: no token, no database).
            first = await client.get("/api/v1/memories")
            assert first.status_code == 401, first.text
            [kept] = executors._idle
            [thread] = _threads(kept)
            assert thread.is_alive()

            second = await client.get("/api/v1/memories")
            assert second.status_code == 401
            # The same executor, on the same thread, served the next request.
            assert executors._idle == [kept] and _threads(kept) == {thread}

            together = await asyncio.gather(*(client.get("/api/v1/memories") for _ in range(6)))
            assert [r.status_code for r in together] == [401] * 6
        # Six at once took up to six executors, each with its own thread, and gave them all back.
        assert kept in executors._idle and 1 <= len(executors._idle) <= 6
        threads = [_threads(executor) for executor in executors._idle]
        assert all(len(t) <= 1 for t in threads)
        assert len(set().union(*threads)) == sum(len(t) for t in threads)

    asyncio.run(run())


def test_idle_threads_beyond_the_limit_are_let_go(monkeypatch):
    executors = asgi.Handler.executors
    executors._idle.clear()
    monkeypatch.setattr(asgi._Executors, "KEEP", 2)
    taken = [executors.take() for _ in range(3)]
    for executor in taken:
        executor.submit(lambda: None).result()
    for executor in taken:
        executors.give_back(executor)
    assert executors._idle == taken[:2]
    # The third was shut down: it takes no more work, and its thread ends.
    with pytest.raises(RuntimeError):
        taken[2].submit(lambda: None)
    for thread in _threads(taken[2]):
        thread.join(timeout=5)
        assert not thread.is_alive()
    executors._idle.clear()


class _Counted:
    """A request's executor that counts the calls handed to its thread."""

    def __init__(self, executor: object) -> None:
        self.executor = executor
        self.calls = 0

    def submit(self, *args: object, **kwargs: object) -> object:
        self.calls += 1
        return self.executor.submit(*args, **kwargs)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self.executor, name)


def test_the_middleware_and_the_view_run_in_one_call_on_the_request_thread(monkeypatch):
    # Django's async mode hands every middleware's process_request and process_response to the
    # thread one by one; the handler here runs the whole chain in one call. What remains is
    # Django's own: the request_started signal (closing old connections), the chain, and closing
    # the response (the request_finished signal).
    executors = asgi.Handler.executors
    executors._idle.clear()
    counted: list[_Counted] = []
    take = executors.take

    def counting_take() -> object:
        executor = _Counted(take())
        counted.append(executor)
        return executor

    monkeypatch.setattr(executors, "take", counting_take)
    monkeypatch.setattr(executors, "give_back", lambda executor: None)
    # A synchronous middleware that calls on async code, which calls on synchronous code again,
    # reaches the request's thread through the executor the waiting thread runs (asgiref's
    # CurrentThreadExecutor), not through the request's executor: counted too.
    nested: list[object] = []
    submit = CurrentThreadExecutor.submit

    def counting_submit(self: CurrentThreadExecutor, *args: object, **kwargs: object) -> object:
        nested.append(args[0])
        return submit(self, *args, **kwargs)

    monkeypatch.setattr(CurrentThreadExecutor, "submit", counting_submit)

    async def run() -> None:
        transport = httpx.ASGITransport(app=asgi.application)  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            response = await client.get("/api/v1/memories")
            assert response.status_code == 401, response.text
            assert response.json()["error"]["code"] == "not_authenticated"

    asyncio.run(run())
    [executor] = counted
    assert executor.calls + len(nested) <= 3, (executor.calls, nested)

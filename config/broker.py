"""kombu's filesystem transport with atomic message files and a doorbell.

The stock transport creates a message file and then writes it; a worker polling
the folder can move the file away in between and read it empty, which kills the
worker with a JSONDecodeError (seen here while /healthz pinged a starting
worker). Writing to a temporary name and renaming it into place makes a message
appear whole or not at all: rename is atomic within one filesystem.

The stock transport is polled: a consumer with nothing to take sleeps `polling_interval` and looks
again, so a message sent to an idle worker, or one that has just finished a task, waited half the
interval on average before anyone looked (docs/pipeline.md). Here a consumer waits on doorbells
instead of sleeping, and still looks again after `polling_interval` at the latest:

- a queue's doorbell is a named pipe in the control folder (`.<queue>.doorbell`), made by the first
  consumer of the queue; a publisher writes a byte to it after the message is in place, if anyone
  has it open (a write that would block or finds no reader is skipped: the consumer polls anyway);
- a consumer also wakes itself when it acknowledges or rejects a message (a self-pipe), since a
  worker that held its prefetch limit may now take the next one.

A ring wakes one of the processes waiting on that queue, and maybe one that cannot take the message
(its prefetch is full); the others find it at their next poll, as before. Nothing is lost if a
ring is: the files are the queue, the doorbells only say when to look.

A broadcast (a fanout exchange: celery's control messages, such as the health report's ping) puts a
file in every bound queue. Each worker binds a queue of its own, named after it, and a worker that
dies or is killed never unbinds it, so every later broadcast left a file nobody would read, and
every poll of every consumer listed them all: on a folder through 35 restarts, 1,683 files and a
fifth of a core spent listing them while idle. Here a process that binds a queue to a fanout
exchange holds a shared lock on a file named after the queue (`.<queue>.consumer` in the control
folder) for as long as its channel is open; the kernel drops it when the process dies. A broadcast
skips a queue whose lock nobody holds, unbinds it and deletes its messages and files. A queue bound
before these locks existed has none: it counts as gone unless its doorbell has a reader (a consumer
that waits, alive).

A poll does not list the messages' folder. kombu's stock channel listed and sorted the whole folder at
every look for a message (100 looks a second per queue a worker reads): with a backlog of 45,000
messages the worker's main process spent most of a core listing, and the service fell to a few saves a
second. Here a channel lists the folder once into a list per queue, in the folder's order (oldest
first), and takes names off it until it is used up, so a backlog of n messages costs one listing per n
messages taken, not one per look. A queue found empty is listed again when its doorbell rang, when the
folder changed since a small listing (under LIST_FREELY names: what a look cost before), or at the
latest RELIST_AFTER after its last listing (a change in the same clock tick as the listing leaves the
folder's time unchanged; a consumer that does not wait on doorbells). So an empty queue beside a long
one (a worker's control queue beside its task queue) costs one stat() a look, and a listing a second at
most. A name another consumer took meanwhile fails to move and is skipped, as before.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import select
import shutil
import stat
import tempfile
import time
import uuid
from collections import deque
from collections.abc import Iterable, Iterator
from queue import Empty
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads

# A listing of fewer names than this is cheap (what every look cost before, on an idle folder): a
# queue found empty lists the folder again as soon as it changed.
LIST_FREELY = 1000
# A queue found empty lists a bigger folder again at the latest this long after its last listing,
# even with no ring (see the module's docstring).
RELIST_AFTER = 1.0


class Channel(filesystem.Channel):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The queue locks this channel holds (see the module's docstring), by queue.
        self._held: dict[str, int] = {}
        # The folder's last listing, by queue: the names not yet taken, oldest first.
        self._pending: dict[str, deque[str]] = {}
        self._listed: tuple[float, int, int] | None = None  # when (monotonic), the folder's mtime, names
        # The queues whose doorbell rang since the last listing (Transport._wait).
        self._rung: set[str] = set()

    def queue_bind(
        self,
        queue: str,
        exchange: str | None = None,
        routing_key: str = "",
        arguments: Any = None,
        **kwargs: Any,
    ) -> None:
        # The lock before the binding: a broadcast that sees the binding also sees its holder.
        if exchange and self.typeof(exchange).type == "fanout":
            self._hold(queue)
        super().queue_bind(queue, exchange, routing_key, arguments, **kwargs)

    def _hold(self, queue: str) -> None:
        if queue in self._held:
            return
        path = consumer_lock_path(str(self.control_folder), queue)
        for _ in range(10):
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
            except OSError:
                return  # no lock to be had: the doorbell then says whether this consumer lives
            # Blocking: a broadcast holds it exclusively only while it checks or unbinds.
            fcntl.flock(fd, fcntl.LOCK_SH)
            # A broadcast that found the queue's earlier consumer gone unlinks the file under its
            # exclusive lock; a lock on that unlinked file would prove nothing, so take the new one.
            with contextlib.suppress(OSError):
                if os.fstat(fd).st_ino == os.stat(path).st_ino:
                    self._held[queue] = fd
                    return
            os.close(fd)

    def close(self) -> None:
        super().close()
        for fd in self._held.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._held.clear()

    def _put_fanout(self, exchange: str, payload: dict[str, Any], routing_key: str, **kwargs: Any) -> None:
        folder = str(self.control_folder)
        for bound in self.get_table(exchange):
            with _if_gone(folder, bound.queue) as gone:
                if gone:
                    self._forget(exchange, bound)
                else:
                    self._put(bound.queue, payload, **kwargs)

    def _forget(self, exchange: str, bound: Any) -> None:
        """Unbinds a queue whose consumer is gone and deletes what it left: its messages, its lock
        and its doorbell. Under the queue's lock, held exclusively: a consumer of the same name
        starting now waits for it, then binds again."""
        self._delete(bound.queue, exchange, bound.routing_key, bound.pattern)
        self._purge(bound.queue)
        folder = str(self.control_folder)
        for path in (consumer_lock_path(folder, bound.queue), doorbell_path(folder, bound.queue)):
            with contextlib.suppress(OSError):
                os.unlink(path)

    # The stubs disagree between AbstractChannel and filesystem.Channel; we follow the latter.
    def _put(self, queue: str, payload: dict[str, Any], **kwargs: Any) -> None:  # type: ignore[override]
        # The reader only picks names ending in ".<queue>.msg"; ".part" is invisible to it.
        name = f"{round(time.monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = final + ".part"
        with open(partial, "wb") as fh:
            fh.write(str_to_bytes(dumps(payload)))
        os.replace(partial, final)
        _ring(doorbell_path(str(self.control_folder), queue))

    def _get(self, queue: str, timeout: float | None = None) -> Any:
        """The oldest message of `queue` (kombu's order: the names sort by time of publishing), taken
        off this channel's listing of the folder; the folder is listed again only as the module's
        docstring says."""
        pending = self._pending.get(queue)
        if not pending and self._list_due(queue):
            self._list()
            pending = self._pending.get(queue)
        while pending:
            payload = self._take(pending.popleft())
            if payload is not None:
                return loads(bytes_to_str(payload))
        raise Empty()

    def _list_due(self, queue: str) -> bool:
        if self._listed is None or queue in self._rung:
            return True
        at, mtime, names = self._listed
        if time.monotonic() - at >= RELIST_AFTER:
            return True
        if names >= LIST_FREELY:
            return False
        try:
            return os.stat(self.data_folder_in).st_mtime_ns != mtime
        except OSError:
            return True

    def _list(self) -> None:
        folder = str(self.data_folder_in)
        # The folder's time before its listing: a message put during the listing changes it again.
        mtime = os.stat(folder).st_mtime_ns
        names = os.listdir(folder)
        by_queue: dict[str, list[str]] = {}
        for name in names:
            # "<ms>_<uuid>.<queue>.msg": a queue's name may hold dots; ".part" files are half-written.
            rest = name.partition(".")[2]
            if rest.endswith(".msg"):
                by_queue.setdefault(rest[: -len(".msg")], []).append(name)
        self._pending = {queue: deque(sorted(found)) for queue, found in by_queue.items()}
        self._rung.clear()
        self._listed = (time.monotonic(), mtime, len(names))

    def _take(self, name: str) -> bytes | None:
        """The message file's content, moved out of the queue first (kombu's way): None when another
        consumer took it (or it was purged) since the listing."""
        processed = str(self.processed_folder) if self.store_processed else tempfile.gettempdir()
        try:
            shutil.move(os.path.join(str(self.data_folder_in), name), processed)
        except OSError:
            return None
        path = os.path.join(processed, name)
        try:
            with open(path, "rb") as fh:
                payload = fh.read()
            if not self.store_processed:
                os.remove(path)
        except OSError as exc:
            raise ChannelError(f"Cannot read file {path!r} from queue.") from exc
        return payload

    def basic_ack(self, delivery_tag: Any, multiple: bool = False) -> None:
        super().basic_ack(delivery_tag, multiple)
        _wake(self.connection)

    def basic_reject(self, delivery_tag: Any, requeue: bool = False) -> None:
        super().basic_reject(delivery_tag, requeue)
        _wake(self.connection)

    def get_table(self, exchange: str) -> Any:
        # The exchange table is rewritten in place when a queue binds (worker start);
        # a reader can catch it truncated. Retry briefly instead of crashing.
        for _ in range(20):
            try:
                return super().get_table(exchange)
            except json.JSONDecodeError:
                time.sleep(0.01)
        return super().get_table(exchange)


# The channel by a name of its own: in Transport's body, `Channel` is the class attribute.
_Consumer = Channel


def doorbell_path(folder: str, queue: str) -> str:
    """The named pipe a publisher rings after putting a message on `queue`. In the control folder,
    not beside the messages: every poll lists the messages' folder."""
    return os.path.join(folder, f".{queue}.doorbell")


def consumer_lock_path(folder: str, queue: str) -> str:
    """The file whose shared lock says that the consumer of `queue`, bound to a broadcast, lives."""
    return os.path.join(folder, f".{queue}.consumer")


@contextlib.contextmanager
def _if_gone(folder: str, queue: str) -> Iterator[bool]:
    """Whether nothing consumes `queue` any more, with its lock held exclusively while the caller
    acts on a yes: the lock file is held by no process or, without one (a consumer of a build
    before these locks), the doorbell has no reader. A doubt counts as alive: a broadcast is never
    withheld from a consumer that may be there."""
    try:
        fd = os.open(consumer_lock_path(folder, queue), os.O_RDWR)
    except FileNotFoundError:
        yield not _doorbell_heard(doorbell_path(folder, queue))
        return
    except OSError:
        yield False
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            gone = False  # held: the consumer lives
        else:
            gone = True
        yield gone
    finally:
        os.close(fd)  # drops the lock, if this took it


def _doorbell_heard(path: str) -> bool:
    """Whether a process has the doorbell open for reading: a consumer that has waited for
    messages and lives. No doorbell at all is not heard."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return False
    except OSError as exc:
        # ENXIO: a named pipe that no process has open for reading. Anything else: in doubt.
        return exc.errno != errno.ENXIO
    os.close(fd)
    return True


def _ring(path: str) -> None:
    try:
        # Non-blocking: with no consumer holding the pipe open this fails at once (ENXIO), and with
        # its buffer full (wake-ups already pending) the write fails instead of waiting.
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return
    try:
        os.write(fd, b"\0")
    except OSError:
        pass
    finally:
        os.close(fd)


def _wake(transport: Any) -> None:
    # The channel's transport is ours (Transport.Channel), typed by the stubs as kombu's base class.
    transport.wake()


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 4096):
            pass
    except BlockingIOError:
        pass


class Transport(filesystem.Transport):
    Channel = Channel

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Made by the first wait: a transport that only publishes (the web's) holds no descriptor.
        self._doorbells: dict[str, int] = {}
        self._wake_pipe: tuple[int, int] | None = None

    def wake(self) -> None:
        """Make this consumer's next (or current) wait for messages return at once."""
        if self._wake_pipe is not None:
            with contextlib.suppress(OSError):  # full: wake-ups are already pending; closed: gone
                os.write(self._wake_pipe[1], b"\0")

    # The signature of kombu's virtual.Transport.drain_events, which the stubs type more loosely.
    def drain_events(self, connection: object, timeout: float | None = None) -> None:  # type: ignore[override]
        # kombu's virtual.Transport.drain_events, waiting on the doorbells where it sleeps.
        assert self.cycle is not None  # set up by the virtual transport's __init__
        started = time.monotonic()
        interval = self.polling_interval
        if timeout and interval and interval > timeout:
            interval = timeout
        while True:
            try:
                self.cycle.get(self._deliver, timeout=timeout)
            except Empty:
                if timeout is not None and time.monotonic() - started >= timeout:
                    raise TimeoutError() from None
                if interval is not None:
                    self._wait(interval)
            else:
                return

    def _wait(self, seconds: float) -> None:
        if self._wake_pipe is None:
            self._wake_pipe = os.pipe()
            for fd in self._wake_pipe:
                os.set_blocking(fd, False)
        if not hasattr(select, "poll"):
            time.sleep(seconds)  # no poll(): polling only, as the stock transport does
            return
        # poll(), not select(): a process with over a thousand descriptors open is not refused.
        waiting = select.poll()
        rings = self._doorbell_fds(self._consumed())
        for fd in [self._wake_pipe[0], *rings]:
            waiting.register(fd, select.POLLIN)
        for fd, _ in waiting.poll(seconds * 1000):
            _drain(fd)
            # A ring says a message was put: the channels consuming that queue list the folder again.
            for channel, queue in rings.get(fd, ()):
                channel._rung.add(queue)

    def _consumed(self) -> Iterable[tuple[_Consumer, str]]:
        for channel in self.channels or []:
            if isinstance(channel, _Consumer):
                for queue in channel._active_queues:
                    yield channel, queue

    def _doorbell_fds(
        self, consumed: Iterable[tuple[_Consumer, str]]
    ) -> dict[int, list[tuple[_Consumer, str]]]:
        """The doorbells of the queues consumed, by descriptor, with who consumes each."""
        fds: dict[int, list[tuple[_Consumer, str]]] = {}
        for channel, queue in consumed:
            path = doorbell_path(str(channel.control_folder), queue)
            if path not in self._doorbells:
                # -1: no doorbell can be had here (no named pipes); not tried again at every wait.
                self._doorbells[path] = self._doorbell_open(path)
            if self._doorbells[path] >= 0:
                fds.setdefault(self._doorbells[path], []).append((channel, queue))
        return fds

    @staticmethod
    def _doorbell_open(path: str) -> int:
        """The doorbell opened for reading, made if missing; -1 where there can be none (no named
        pipes on this system, or something else has the name): the consumer then only polls."""
        try:
            os.mkfifo(path, 0o600)
        except FileExistsError:
            pass
        except (AttributeError, OSError):
            return -1
        try:
            if not stat.S_ISFIFO(os.stat(path).st_mode):
                return -1
            # Read and write: a pipe with no writer reads as end-of-file, which select() would report
            # as ready for ever; holding a write end ourselves keeps it quiet until a byte comes.
            return os.open(path, os.O_RDWR | os.O_NONBLOCK)
        except OSError:
            return -1

    def close_connection(self, connection: Any) -> None:
        super().close_connection(connection)
        for fd in [*self._doorbells.values(), *(self._wake_pipe or ())]:
            if fd < 0:
                continue
            with contextlib.suppress(OSError):
                os.close(fd)
        self._doorbells.clear()
        self._wake_pipe = None

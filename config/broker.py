"""kombu's filesystem transport with atomic message files.

The stock transport creates a message file and then writes it; a worker polling
the folder can move the file away in between and read it empty, which kills the
worker with a JSONDecodeError (seen here while /healthz pinged a starting
worker). Writing to a temporary name and renaming it into place makes a message
appear whole or not at all: rename is atomic within one filesystem.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from typing import Any

from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps


class Channel(filesystem.Channel):
    # The stubs disagree between AbstractChannel and filesystem.Channel; we follow the latter.
    def _put(self, queue: str, payload: dict[str, Any], **kwargs: Any) -> None:  # type: ignore[override]
        # The reader only picks names ending in ".<queue>.msg"; ".part" is invisible to it.
        name = f"{round(time.monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = final + ".part"
        with open(partial, "wb") as fh:
            fh.write(str_to_bytes(dumps(payload)))
        os.replace(partial, final)

    def get_table(self, exchange: str) -> Any:
        # The exchange table is rewritten in place when a queue binds (worker start);
        # a reader can catch it truncated. Retry briefly instead of crashing.
        for _ in range(20):
            try:
                return super().get_table(exchange)
            except json.JSONDecodeError:
                time.sleep(0.01)
        return super().get_table(exchange)


class Transport(filesystem.Transport):
    Channel = Channel

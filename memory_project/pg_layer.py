"""A channel layer for several web processes without Redis: messages cross processes by PostgreSQL NOTIFY.

Embedded mode has no Redis, and the in-memory layer only reaches consumers in its own process: with
several web worker processes, an event published in one (say, by the request that stored a turn)
would miss the WebSockets held by the others. This layer is the in-memory layer for the consumers
of its own process (delivered at once, exactly as before), and in addition sends every group
message, and every message for a channel of another process, through pg_notify on one notification
channel. Each process with consumers LISTENs there, on a thread and connection of its own, and hands
what other processes sent to its consumers, in the event loop they wait in.

NOTIFY carries at most 8,000 bytes: a longer message goes in parts, sent in one transaction, which
PostgreSQL delivers together and in order. Like the Redis layer, delivery is at-most-once: a process
whose listener is reconnecting misses what is sent meanwhile (live events, nothing durable).

channels_postgres (the PyPI package) was considered and not used: it writes every message to a
table, takes an advisory lock per channel on pooled connections that it never releases, and keeps
the group memberships of processes that died.
"""

import asyncio
import base64
import logging
import os
import threading
import time
import uuid
import weakref
from concurrent.futures import ThreadPoolExecutor

import msgpack
from channels.exceptions import ChannelFull
from channels.layers import InMemoryChannelLayer

from memory_project.dbconn import direct_connection_params

logger = logging.getLogger(__name__)

NOTIFY_CHANNEL = "memory_channel_layer"
PART_CHARS = 7000  # of base64 text per NOTIFY, under PostgreSQL's 8,000-byte payload limit
PARTS_TTL_SECONDS = 60
LISTEN_READY_SECONDS = 10

_layers: "weakref.WeakSet[PostgresChannelLayer]" = weakref.WeakSet()


class PostgresChannelLayer(InMemoryChannelLayer):
    def __init__(self, expiry=60, group_expiry=86400, capacity=100, channel_capacity=None, **kwargs):
        super().__init__(
            expiry=expiry, group_expiry=group_expiry, capacity=capacity, channel_capacity=channel_capacity, **kwargs
        )
        self._reset()
        _layers.add(self)

    def _reset(self) -> None:
        # This process's channel names carry the prefix, and so do the messages it sends: its
        # listener skips its own (already delivered here), and a channel of another process is
        # recognised as such.
        self.client_prefix = uuid.uuid4().hex[:12]
        self.channels, self.groups = {}, {}
        self._sender = ThreadPoolExecutor(max_workers=1, thread_name_prefix="channel-layer-notify")
        self._sender_connection = None
        self._queued: list[str] = []
        self._queued_lock = threading.Lock()
        self._flush_queued = False
        self._listener: threading.Thread | None = None
        self._listening = threading.Event()
        self._stopping = threading.Event()
        self._consumer_loop: asyncio.AbstractEventLoop | None = None
        self._parts: dict[str, tuple[float, list]] = {}

    # ---------------------------------------------------------------------------------------------
    # Channel layer API
    # ---------------------------------------------------------------------------------------------

    async def new_channel(self, prefix="specific"):
        return f"{prefix}.{self.client_prefix}!{uuid.uuid4().hex}"

    def _is_local(self, channel: str) -> bool:
        head, bang, _ = channel.partition("!")
        return not bang or head.endswith(f".{self.client_prefix}")

    async def send(self, channel, message):
        if self._is_local(channel):
            return await super().send(channel, message)
        assert isinstance(message, dict), "message is not a dict"
        self.require_valid_channel_name(channel)
        self._publish({"c": channel, "m": message})

    async def receive(self, channel):
        self._consumer_loop = asyncio.get_running_loop()
        return await super().receive(channel)

    async def group_add(self, group, channel):
        await super().group_add(group, channel)
        self._consumer_loop = asyncio.get_running_loop()
        # A member must not miss what another process sends right after it joined.
        await self._listen_started()

    async def group_send(self, group, message):
        await super().group_send(group, message)
        self._publish({"g": group, "m": message})

    def group_send_soon(self, group: str, message: dict) -> None:
        """group_send for synchronous code (a request's thread) that does not wait for it: this
        process's members get the message in their event loop, the other processes' with the sender
        thread's next NOTIFY. A request used to wait for both, two thread hops and a database round
        trip per group on every stored turn."""
        assert isinstance(message, dict), "message is not a dict"
        self.require_valid_group_name(group)
        if group in self.groups:
            self._deliver_here({"g": group, "m": message})
        self._publish({"g": group, "m": message})

    async def flush(self):
        await super().flush()
        self._parts = {}

    async def close(self):
        self._stopping.set()
        await asyncio.get_running_loop().run_in_executor(self._sender, self._close_sender)

    # ---------------------------------------------------------------------------------------------
    # Sending: NOTIFY on a connection of the layer's own, from one thread, so messages keep their order
    # ---------------------------------------------------------------------------------------------

    def _publish(self, envelope: dict) -> None:
        """Queue the envelope for the other processes and return: the sender thread sends whatever
        is queued when it gets to it, in order, in one statement (at-most-once, as Redis's layer)."""
        envelope["s"] = self.client_prefix
        text = base64.b64encode(msgpack.packb(envelope, use_bin_type=True)).decode("ascii")
        message_id = uuid.uuid4().hex
        chunks = [text[i : i + PART_CHARS] for i in range(0, len(text), PART_CHARS)]
        with self._queued_lock:
            self._queued.extend(f"{message_id}:{n}:{len(chunks)}:{chunk}" for n, chunk in enumerate(chunks))
            if self._flush_queued:
                return
            self._flush_queued = True
        self._sender.submit(self._send_queued)

    def _send_queued(self) -> None:
        with self._queued_lock:
            payloads, self._queued, self._flush_queued = self._queued, [], False
        try:
            self._notify(payloads)
        except Exception:
            logger.warning("the channel layer could not notify the other processes", exc_info=True)

    def _notify(self, payloads: list[str]) -> None:
        import psycopg

        for attempt in (1, 2):
            try:
                if self._sender_connection is None or self._sender_connection.closed:
                    self._sender_connection = psycopg.connect(autocommit=True, **direct_connection_params("notify"))
                # One statement, so one transaction: a message's parts are delivered together, and
                # the function scan notifies in the array's order.
                self._sender_connection.execute(
                    "SELECT pg_notify(%s, p) FROM unnest(%s::text[]) AS p", [NOTIFY_CHANNEL, payloads]
                )
                return
            except psycopg.OperationalError:
                # A connection the server closed (a restart, an idle timeout): one retry on a new one.
                self._close_sender()
                if attempt == 2:
                    raise

    def _close_sender(self) -> None:
        if self._sender_connection is not None:
            self._sender_connection.close()
        self._sender_connection = None

    # ---------------------------------------------------------------------------------------------
    # Receiving: a thread per process LISTENs on its own connection
    # ---------------------------------------------------------------------------------------------

    async def _listen_started(self) -> None:
        if self._listener is None or not self._listener.is_alive():
            self._stopping.clear()
            self._listener = threading.Thread(target=self._listen, name="channel-layer-listen", daemon=True)
            self._listener.start()
        if not self._listening.is_set():
            ready = await asyncio.get_running_loop().run_in_executor(None, self._listening.wait, LISTEN_READY_SECONDS)
            if not ready:
                raise TimeoutError("the channel layer could not LISTEN on the database")

    def _listen(self) -> None:
        import psycopg

        backoff = 0.5
        while not self._stopping.is_set():
            try:
                with psycopg.connect(autocommit=True, **direct_connection_params("listen")) as conn:
                    conn.execute(f"LISTEN {NOTIFY_CHANNEL}")
                    self._listening.set()
                    backoff = 0.5
                    while not self._stopping.is_set():
                        for notification in conn.notifies(timeout=1.0):
                            self._received(notification.payload)
            except Exception:
                self._listening.clear()
                logger.warning("the channel layer's listener lost its connection; reconnecting", exc_info=True)
                self._stopping.wait(backoff)
                backoff = min(backoff * 2, 10.0)
        self._listening.clear()

    def _received(self, payload: str) -> None:
        try:
            message_id, index, count, chunk = payload.split(":", 3)
            index, count = int(index), int(count)
        except ValueError:
            logger.warning("ignoring a malformed channel layer notification")
            return
        if count > 1:
            now = time.monotonic()
            for stale in [k for k, (at, _) in self._parts.items() if now - at > PARTS_TTL_SECONDS]:
                del self._parts[stale]
            _, parts = self._parts.setdefault(message_id, (now, [None] * count))
            parts[index] = chunk
            if any(part is None for part in parts):
                return
            del self._parts[message_id]
            chunk = "".join(parts)
        envelope = msgpack.unpackb(base64.b64decode(chunk), raw=False)
        if envelope.get("s") == self.client_prefix:
            return  # sent from here, and delivered here when it was sent
        self._deliver_here(envelope)

    def _deliver_here(self, envelope: dict) -> None:
        """Hand the envelope to this process's consumers, in the event loop they wait in, from any thread."""
        loop = self._consumer_loop
        if loop is not None and loop.is_running():
            asyncio.run_coroutine_threadsafe(self._deliver(envelope), loop)
        else:
            # No event loop is waiting on a queue right now, so none can be disturbed.
            asyncio.run(self._deliver(envelope))

    async def _deliver(self, envelope: dict) -> None:
        message = envelope["m"]
        if "g" in envelope:
            await InMemoryChannelLayer.group_send(self, envelope["g"], message)
        elif self._is_local(envelope["c"]):
            try:
                await InMemoryChannelLayer.send(self, envelope["c"], message)
            except ChannelFull:
                logger.warning("channel %s is full; a message for it was dropped", envelope["c"])


def channel_layers_close(timeout: float = 5) -> None:
    """Stop the listeners and close the connections of every layer of this process (test teardown,
    before the test database is dropped)."""
    for layer in list(_layers):
        layer._stopping.set()
        if layer._listener is not None:
            layer._listener.join(timeout)
        layer._sender.submit(layer._close_sender).result(timeout)


def _after_fork_in_child() -> None:
    # A forked web worker inherits the layer but not its listener or sender threads, nor may it use
    # their connections: it starts its own, under a prefix of its own.
    for layer in list(_layers):
        layer._reset()


os.register_at_fork(after_in_child=_after_fork_in_child)

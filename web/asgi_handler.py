"""Django's ASGI handler, serving each request in one call on a long-lived thread.

Every middleware here and every view is synchronous. Django's ASGIHandler would load the chain in
async mode, start a thread for each request (its ThreadSensitiveContext) and hop between the event
loop and that thread four times: the request_started signal, the middlewares, the async-capable
django-axes middleware, the view, and the response's close (request_finished). Each hop waits for
the event loop and a thread to be scheduled, which on two busy cores cost milliseconds a request,
and each new thread built its own database wrapper. Here the body is read on the event loop, then
one call on a thread of a fixed pool (WEB_THREADS per process, as a WSGI server's threads) sends
request_started, runs the chain in sync mode and closes the response, so the database connection
the request borrowed is given back by the thread that borrowed it, before the answer is sent.
"""

from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import async_to_sync, sync_to_async
from django.conf import settings
from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.core.handlers.base import BaseHandler
from django.http import FileResponse
from django.urls import set_script_prefix


class SyncChainASGIHandler(ASGIHandler):
    def __init__(self):
        # ASGIHandler.__init__ would load the chain in async mode; this is BaseHandler's own init.
        BaseHandler.__init__(self)
        self.load_middleware(is_async=False)
        executor = ThreadPoolExecutor(max_workers=settings.WEB_THREADS, thread_name_prefix="request")
        # thread_sensitive=False is what allows an executor of our own; each call still records the
        # event loop, so async_to_sync in the request (events' group_send) runs on it. Built once.
        self._respond_on_thread = sync_to_async(self._respond, thread_sensitive=False, executor=executor)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        try:
            response = await self._respond_on_thread(scope, body_file, send)
            if response is not None:
                await self.send_response(response, send)
        finally:
            body_file.close()

    def _respond(self, scope, body_file, send):
        """The request from request_started to request_finished; returns a response still to be
        sent (its content is in memory), or None when a streamed one was sent from here."""
        set_script_prefix(get_script_prefix(scope))
        signals.request_started.send(sender=self.__class__, scope=scope)
        request, response = self.create_request(scope, body_file)
        if request is not None:
            response = self.get_response(request)
            response._handler_class = self.__class__
        try:
            if not response.streaming:
                return response
            if isinstance(response, FileResponse):
                response.block_size = self.chunk_size
            # Sent from this thread, whose connection the stream's iterator may use (Django reads a
            # synchronous iterator whole before sending it, on this thread through async_to_sync).
            async_to_sync(self.send_response)(response, send)
            return None
        finally:
            response.close()

"""Django's ASGI handler with the middleware chain and the view run as one synchronous call.

Every middleware here and every view is synchronous, but Django's ASGIHandler loads the chain in
async mode: the sync middlewares then run in one thread, hop back to the event loop for the
async-capable django-axes middleware, and hop to a thread again for the view. Each hop waits for
the event loop and a thread to be scheduled, which on two busy cores cost a few milliseconds per
request (a third of what a search adds over HTTP). Loaded in sync mode, as under WSGI, the chain
and the view run in one thread call; the request's other steps (body, signals, sending the
response) stay as Django's handler does them.
"""

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler


class SyncChainASGIHandler(ASGIHandler):
    def __init__(self):
        # ASGIHandler.__init__ would load the chain in async mode; this is BaseHandler's own init.
        super(ASGIHandler, self).__init__()
        self.load_middleware(is_async=False)

    async def get_response_async(self, request):
        # thread_sensitive: inside the request's ThreadSensitiveContext, the same thread as the
        # request_started signal's and the response's close, so the database connection the
        # request borrowed is the one given back.
        return await sync_to_async(self.get_response, thread_sensitive=True)(request)

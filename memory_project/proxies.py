"""The client's real address and scheme behind a reverse proxy, trusted only from TRUSTED_PROXIES.

daphne was started with --proxy-headers, which took X-Forwarded-For from any client: anyone could
choose the address that rate limits and the login lockout count against (issue 12). This ASGI
middleware wraps the whole application, so it holds whichever server runs it: X-Forwarded-For and
X-Forwarded-Proto are read only when the connecting peer is one of TRUSTED_PROXIES, and the client
is the right-most address in X-Forwarded-For that is not itself a trusted proxy.
"""

import ipaddress
from functools import lru_cache

from django.conf import settings


@lru_cache(maxsize=8)
def _networks(entries: tuple[str, ...]) -> tuple:
    return tuple(ipaddress.ip_network(e, strict=False) for e in entries)


def is_trusted_proxy(address: str | None) -> bool:
    if not address:
        return False
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    return any(ip in network for network in _networks(tuple(settings.TRUSTED_PROXIES)))


def forwarded_client(peer: str, forwarded_for: str) -> str:
    """The address a trusted `peer` forwarded for: the right-most untrusted hop."""
    hops = [h.strip() for h in forwarded_for.split(",") if h.strip()]
    for hop in reversed(hops):
        if not is_trusted_proxy(hop):
            try:
                return str(ipaddress.ip_address(hop))
            except ValueError:
                return peer  # garbage in the header: keep the proxy's own address
    return hops[0] if hops else peer


class TrustedProxyMiddleware:
    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] in ("http", "websocket") and scope.get("client"):
            peer = scope["client"][0]
            if is_trusted_proxy(peer):
                headers = dict(scope.get("headers") or [])
                forwarded_for = headers.get(b"x-forwarded-for", b"").decode("latin1")
                proto = headers.get(b"x-forwarded-proto", b"").decode("latin1").split(",")[0].strip().lower()
                scope = dict(scope)
                if forwarded_for:
                    scope["client"] = (forwarded_client(peer, forwarded_for), 0)
                if proto in ("http", "https"):
                    secure = proto == "https"
                    scope["scheme"] = (
                        ("https" if secure else "http") if scope["type"] == "http" else ("wss" if secure else "ws")
                    )
        return await self.app(scope, receive, send)

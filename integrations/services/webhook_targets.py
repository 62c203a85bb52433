"""Where a webhook may be sent: public addresses only, checked after DNS resolution (issue 12, SSRF).

An owner chooses the URL, so without this check the service would POST, from inside the operator's
network, to loopback, link-local (cloud metadata at 169.254.169.254), private and multicast
addresses. The check runs twice: when the subscription is created (a clear 400) and when each
connection is opened, on the very addresses the socket connects to, so a name that resolves
elsewhere later (DNS rebinding) is refused too. A self-hoster whose receivers live on a private
network lists those networks in WEBHOOK_ALLOWED_NETWORKS.
"""

import ipaddress
import socket
from collections.abc import Iterable
from functools import lru_cache
from urllib.parse import urlsplit

import httpcore2
import httpx2
from django.conf import settings
from httpcore2._backends.sync import SyncBackend

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class TargetRefused(httpcore2.ConnectError):
    """The address a webhook would connect to is not a public one."""


@lru_cache(maxsize=8)
def _allowed(networks: tuple[str, ...]) -> tuple:
    return tuple(ipaddress.ip_network(n, strict=False) for n in networks)


def address_problem(ip: IPAddress) -> str | None:
    """Why a webhook may not connect to `ip`, or None when it may."""
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if any(ip in network for network in _allowed(tuple(settings.WEBHOOK_ALLOWED_NETWORKS))):
        return None
    for label, flag in (
        ("a loopback", ip.is_loopback),
        ("a link-local", ip.is_link_local),
        ("a multicast", ip.is_multicast),
        ("an unspecified", ip.is_unspecified),
        ("a private", ip.is_private),
        ("a reserved", ip.is_reserved),
    ):
        if flag:
            return f"{ip} is {label} address"
    if not ip.is_global:  # shared (100.64/10), documentation and other non-public ranges
        return f"{ip} is not a public address"
    return None


def _resolve(host: str, port: int) -> list[IPAddress]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(ipaddress.ip_address(info[4][0].split("%", 1)[0]) for info in infos))


def url_problem(url: str) -> str | None:
    """Why the webhook client cannot send to `url` at all, or None when it can.

    Django's URLField takes hosts httpx2 cannot encode (a zero-width space, a lone U+3002), and every
    delivery to such a subscription would fail: the URL is parsed by httpx2 itself, as each
    delivery parses it, rather than by a rule of ours that could disagree with it.
    """
    try:
        parsed = httpx2.URL(url)
    except httpx2.InvalidURL as exc:
        return str(exc)
    # What httpcore2's connection pool refuses (UnsupportedProtocol) before it connects.
    if parsed.scheme not in ("http", "https") or not parsed.host:
        return "use an http:// or https:// URL with a host"
    return None


def target_problem(url: str) -> str | None:
    """Why `url` may not receive webhooks (its host is, or resolves to, a refused address), or None.

    A name that does not resolve now is let through: it is checked again at each delivery.
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return "the port is not a number between 0 and 65535"
    try:
        addresses = _resolve(host, port)
    except (OSError, UnicodeError, ValueError):
        return None
    return _first_problem(addresses)


def _first_problem(addresses: Iterable[IPAddress]) -> str | None:
    for ip in addresses:
        problem = address_problem(ip)
        if problem:
            return problem
    return None


class GuardedBackend(SyncBackend):
    """Opens TCP connections only to addresses `address_problem` accepts; every address the name
    resolves to must pass (one private record among public ones is enough to refuse)."""

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        try:
            addresses = _resolve(host, port)
        except (OSError, UnicodeError) as exc:
            raise httpcore2.ConnectError(f"cannot resolve {host}: {exc}") from exc
        problem = _first_problem(addresses)
        if problem:
            raise TargetRefused(f"refused: {host} resolves to {problem} (WEBHOOK_ALLOWED_NETWORKS)")
        last: Exception | None = None
        for ip in addresses:
            try:
                return super().connect_tcp(str(ip), port, timeout, local_address, socket_options)
            except httpcore2.ConnectError as exc:
                last = exc
        raise last or httpcore2.ConnectError(f"no address for {host}")


class GuardedTransport(httpx2.HTTPTransport):
    """httpx2's transport on `GuardedBackend`. Environment proxies are ignored (trust_env=False): a
    proxy would make the connection on the service's behalf, past the address check."""

    def __init__(self, **kwargs):
        super().__init__(trust_env=False, **kwargs)
        self._pool = httpcore2.ConnectionPool(
            ssl_context=self._pool._ssl_context,
            max_connections=20,
            max_keepalive_connections=10,
            keepalive_expiry=30,
            network_backend=GuardedBackend(),
        )

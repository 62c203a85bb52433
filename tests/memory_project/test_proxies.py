"""Issue 12, finding 7: X-Forwarded-For is believed only from TRUSTED_PROXIES, whatever server runs."""

import asyncio

from memory_project.proxies import TrustedProxyMiddleware


def scope_for(peer: str, **headers) -> dict:
    return {
        "type": "http",
        "scheme": "http",
        "client": (peer, 5555),
        "headers": [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()],
    }


async def seen_by_app(scope) -> dict:
    seen = {}

    async def app(scope, receive, send):
        seen.update(scope)

    await TrustedProxyMiddleware(app)(scope, None, None)
    return seen


def test_a_client_cannot_choose_its_address_or_scheme(settings):
    settings.TRUSTED_PROXIES = ["10.0.0.2"]

    seen = asyncio.run(seen_by_app(scope_for("203.0.113.5", x_forwarded_for="1.2.3.4", x_forwarded_proto="https")))

    assert (seen["client"], seen["scheme"]) == (("203.0.113.5", 5555), "http")


def test_a_trusted_proxy_forwards_the_right_most_untrusted_address_and_the_scheme(settings):
    settings.TRUSTED_PROXIES = ["10.0.0.0/24"]

    seen = asyncio.run(
        seen_by_app(scope_for("10.0.0.2", x_forwarded_for="6.6.6.6, 198.51.100.7, 10.0.0.9", x_forwarded_proto="https"))
    )

    # 6.6.6.6 was written by the client itself; 198.51.100.7 is who connected to the first proxy
    assert (seen["client"], seen["scheme"]) == (("198.51.100.7", 0), "https")


def test_garbage_from_a_trusted_proxy_keeps_the_proxy_address(settings):
    settings.TRUSTED_PROXIES = ["10.0.0.2"]

    seen = asyncio.run(seen_by_app(scope_for("10.0.0.2", x_forwarded_for="not-an-ip")))

    assert seen["client"] == ("10.0.0.2", 0)


def test_serve_no_longer_passes_proxy_headers_to_daphne():
    from pathlib import Path

    source = Path(__file__).resolve().parents[2] / "web" / "management" / "commands" / "serve.py"
    assert '"--proxy-headers"' not in source.read_text()

"""POST JSON to a model server within bounds: one origin, a capped reply, a total deadline.

A model server is reached over the network and may be misconfigured or hostile; what the
agent sends (``OPENAI_API_KEY``) and what it accepts are therefore bounded here, on httpx:

- Origin: the request goes to the URL's origin (scheme, host, port) and nowhere else. A
  redirect within it is followed (at most :data:`MAX_REDIRECTS`); one to another origin is
  refused before anything is sent there (an httpx request hook), so neither the key nor the
  conversation leaves for it.
- Size: the reply is read as a stream and refused past ``max_reply_bytes`` (a declared
  ``Content-Length`` over it is refused before reading). The client asks for the identity
  encoding and refuses a compressed reply, whose size on the wire says nothing of its size.
- Time: each attempt (connect, send, the whole reply) has one deadline of ``timeout_s``; a
  server that trickles bytes is cut at it. httpx's own timeouts bound each read, not the
  total, so the attempt runs under ``asyncio.wait_for``.
- Retries: connection failures, deadlines and HTTP 429/5xx are retried ``retries`` times.

Every failure is an :class:`~wikigym.errors.EvalError` of one line that names the URL.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine, Mapping
from typing import Any, TypeVar

import httpx

from wikigym.errors import EvalError

__all__ = ["DEFAULT_MAX_REPLY_BYTES", "MAX_REDIRECTS", "post_json"]

#: The default cap on a reply's size (a chat completion of thousands of tokens is far smaller).
DEFAULT_MAX_REPLY_BYTES = 16 * 1024 * 1024
MAX_REDIRECTS = 5
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
_DETAIL_CHARS = 300

T = TypeVar("T")


class _Refused(Exception):
    """A reply or redirect that no retry can fix (the message is the one line)."""


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    default = {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host, url.port or default


async def _attempt(
    client: httpx.AsyncClient, url: str, body: bytes, headers: Mapping[str, str], cap: int
) -> tuple[int, bytes]:
    """One POST: the status and the body, read within ``cap`` bytes."""
    async with client.stream("POST", url, content=body, headers=dict(headers)) as response:
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            raise _Refused(
                f"{url} sent a {encoding!r}-encoded reply though the agent asked for none "
                "(Accept-Encoding: identity); configure the server or proxy not to compress"
            )
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > cap:
            raise _Refused(_too_large(url, cap, f"declares {int(declared):,} bytes"))
        data = bytearray()
        async for chunk in response.aiter_raw():
            data += chunk
            if len(data) > cap:
                raise _Refused(_too_large(url, cap, "sent more"))
        return response.status_code, bytes(data)


def _too_large(url: str, cap: int, what: str) -> str:
    return (
        f"{url}: the reply {what} than the cap of {cap:,} bytes; refused (a chat completion "
        "is far smaller: check the URL, or raise max_reply_bytes)"
    )


async def _post(
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    timeout_s: float,
    retries: int,
    cap: int,
) -> bytes:
    origin = _origin(httpx.URL(url))

    async def same_origin(request: httpx.Request) -> None:
        if _origin(request.url) != origin:
            raise _Refused(
                f"{url} redirected to {str(request.url)[:200]}, another origin; refused (the "
                "agent sends its API key and the conversation only to the URL's own origin): "
                "pass the final URL"
            )

    async with httpx.AsyncClient(
        follow_redirects=True,
        max_redirects=MAX_REDIRECTS,
        timeout=httpx.Timeout(timeout_s),
        event_hooks={"request": [same_origin]},
    ) as client:
        for attempt in range(retries + 1):
            last = attempt == retries
            try:
                status, data = await asyncio.wait_for(
                    _attempt(client, url, body, headers, cap), timeout_s
                )
            except _Refused as exc:
                raise EvalError(str(exc)) from None
            except httpx.TooManyRedirects:
                raise EvalError(
                    f"{url} redirected more than {MAX_REDIRECTS} times; pass the final URL"
                ) from None
            except (asyncio.TimeoutError, httpx.TimeoutException):
                if not last:
                    await asyncio.sleep(0.5 * (attempt + 1))
                    continue
                raise EvalError(
                    f"{url} sent no complete reply within {timeout_s:g} s (the deadline of "
                    f"each of {retries + 1} attempts; see --timeout)"
                ) from None
            except httpx.HTTPError as exc:  # connection refused, reset, bad HTTP, ...
                if not last:
                    await asyncio.sleep(0.5 * (attempt + 1))
                    continue
                reason = str(exc) or type(exc).__name__
                raise EvalError(
                    f"cannot reach {url} ({reason}) after {retries + 1} attempts; is the server "
                    f"running? (timeout {timeout_s:g} s, see --timeout)"
                ) from None
            if status < 300:
                return data
            if status in RETRY_STATUS and not last:
                await asyncio.sleep(0.5 * (attempt + 1))
                continue
            detail = data[:_DETAIL_CHARS].decode("utf-8", errors="replace")
            raise EvalError(
                f"{url} answered HTTP {status}: {detail or 'no body'}; check the URL, the "
                "--model name and the server log"
            )
    raise AssertionError("unreachable: the last attempt returns or raises")


def _run(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to its end from synchronous code, even where an event loop is running."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="wikigym-http") as pool:
        return pool.submit(asyncio.run, coro).result()


def post_json(
    url: str,
    body: bytes,
    *,
    headers: Mapping[str, str] | None = None,
    timeout_s: float,
    retries: int,
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
) -> bytes:
    """POST the JSON ``body`` to ``url``; the reply's body (not parsed: the caller checks it).

    Args:
        url: An ``http://`` or ``https://`` URL.
        body: The request's JSON, encoded.
        headers: Extra headers (``Authorization``: sent to ``url``'s origin only).
        timeout_s: The deadline of each attempt, from connecting to the reply's last byte.
        retries: Extra attempts after connection failures, deadlines and HTTP 429/5xx.
        max_reply_bytes: The largest reply accepted.

    Raises:
        EvalError: No reply within the bounds, an HTTP error status, a redirect to another
            origin, a reply too large or compressed (one line, naming ``url``).
    """
    sent = {
        "Content-Type": "application/json",
        "Accept": "application/json",
        "Accept-Encoding": "identity",
        **(headers or {}),
    }
    return _run(_post(url, body, sent, timeout_s, retries, max_reply_bytes))

"""Tests against a fake control plane: every request the SDK's httpx clients (sync and async) send is
answered by ``answer`` in the test's process, with nothing on the network."""

from __future__ import annotations

from typing import Any, Callable

import httpx
import pytest


def answer_httpx_with(monkeypatch: pytest.MonkeyPatch, answer: Callable[[httpx.Request], httpx.Response]) -> None:
    """Routes ``httpx.Client.send`` and ``httpx.AsyncClient.send`` to ``answer`` for this test, and
    unsets ``SDK_ISOLATION`` so a create sends only what the test gives it."""

    def send(client: httpx.Client, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        return answer(request)

    async def asend(client: httpx.AsyncClient, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        return answer(request)

    monkeypatch.setattr(httpx.Client, "send", send)
    monkeypatch.setattr(httpx.AsyncClient, "send", asend)
    monkeypatch.delenv("SDK_ISOLATION", raising=False)

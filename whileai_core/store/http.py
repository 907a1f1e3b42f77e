"""The `Store` over HTTP: a `whileai serve` (or any server speaking the original SDK's wire
format) at WHILEAI_API_URL.

Dataset bodies go to and come from the signed links the server hands out, without the
key, exactly as the original SDK does it; both directions stream in chunks. A non-2xx
answer becomes the `StoreError` subclass of its status, with the server's `error` text.
The account calls that need no key (signup, the device flow) are module functions.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import IO, Any
from urllib.parse import quote

import httpx

from .. import __version__
from .base import (
    ERRORS_BY_STATUS,
    TRACE_PAGE_SIZE,
    NewDataset,
    NotFound,
    Signal,
    StoreError,
    Unauthorized,
    check_score,
)
from .runs import NewRun

TIMEOUT = httpx.Timeout(60.0, connect=10.0)


def _raise_for(response: httpx.Response) -> None:
    if response.is_success:
        return
    try:
        body = response.json()
        message = body.get("message") or body.get("error")
    except (ValueError, AttributeError):
        message = None
    if not message:
        message = f"HTTP {response.status_code} from {response.request.url}"
    raise ERRORS_BY_STATUS.get(response.status_code, StoreError)(str(message))


def _json_of(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        raise StoreError(
            f"{response.request.url} did not answer JSON: is WHILEAI_API_URL a whileai server?"
        ) from None


def _client(base_url: str, api_key: str | None = None) -> httpx.Client:
    headers = {"User-Agent": f"whileai/{__version__}"}
    if api_key:
        headers["X-Api-Key"] = api_key
    return httpx.Client(base_url=base_url, headers=headers, timeout=TIMEOUT)


def _seg(value: str) -> str:
    """An id as one path segment: `a/b` or `..` must not reach another route."""
    if value in ("", ".", ".."):
        raise NotFound(f"{value!r} not found")
    return quote(value, safe="")


RETRY_STATUSES = frozenset({429, 502, 503, 504})
RETRY_DELAYS = (0.5, 1.5)


def _call(client: httpx.Client, method: str, path: str, **kwargs: Any) -> Any:
    """One request; JSON-bodied and bodiless calls are retried on a dropped connection or a
    429/502/503/504 (safe: a dataset create carries an idempotency key). A streamed body
    cannot be replayed, so it gets one attempt and the caller retries the whole push."""
    delays = () if "content" in kwargs else RETRY_DELAYS
    attempt = 0
    while True:
        try:
            response = client.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            if attempt >= len(delays):
                raise StoreError(f"cannot reach {client.base_url}: {exc}") from None
        else:
            if (
                response.status_code not in RETRY_STATUSES
                or attempt >= len(delays)
                or _retry_after(response) > RETRY_DELAYS[-1]  # a rate limit: no use waiting
            ):
                _raise_for(response)
                return _json_of(response)
        time.sleep(delays[attempt])
        attempt += 1


def _retry_after(response: httpx.Response) -> float:
    try:
        return float(response.headers.get("retry-after", 0))
    except ValueError:
        return 0.0


class HttpStore:
    kind = "server"

    def __init__(self, base_url: str, api_key: str | None, key_source: str | None = None) -> None:
        """`api_key` None: a store for what the server gives anyone (the catalog, public
        datasets); every other call is refused as the server refuses it."""
        self.location = base_url.rstrip("/")
        self._keyed = bool(api_key)
        self._http = _client(self.location, api_key)
        self._bare = _client(self.location)  # signed links carry no key
        self._upload_urls: dict[str, str] = {}
        self._key_source = key_source

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        """A keyed call; a refused key says which server refused it and where the key came
        from, since a stale WHILEAI_API_KEY and a saved key look alike otherwise."""
        try:
            return _call(self._http, method, path, **kwargs)
        except Unauthorized as exc:
            source = f" from {self._key_source}" if self._key_source else ""
            raise Unauthorized(
                f"{self.location} refused the API key{source} ({exc}): run `whileai login`, "
                "or pass the right one with --api-key / WHILEAI_API_KEY"
            ) from None

    def _get(self, path: str, **params: Any) -> Any:
        clean = {k: v for k, v in params.items() if v is not None}
        return self._call("GET", path, params=clean)

    # datasets
    def create_dataset(self, spec: NewDataset) -> dict[str, Any]:
        record: dict[str, Any] = self._call("POST", "/datasets", json=spec.wire())
        if record.get("uploadUrl"):
            self._upload_urls[record["datasetId"]] = record["uploadUrl"]
        return record

    def upload(self, dataset_id: str, chunks: Iterable[bytes], size: int | None = None) -> int:
        url = self._upload_urls.get(dataset_id)
        if url is None:
            raise StoreError(f"no upload link for {dataset_id}: create the dataset first")
        sent = 0

        def counted() -> Iterator[bytes]:
            nonlocal sent
            for chunk in chunks:
                sent += len(chunk)
                yield chunk

        headers = {"Content-Type": "application/jsonl"}
        if size is not None:  # sent as a length, so an over-limit body is refused up front
            headers["Content-Length"] = str(size)
        _call(self._bare, "PUT", url, content=counted(), headers=headers)
        return sent

    def finalize(self, dataset_id: str) -> dict[str, Any]:
        record: dict[str, Any] = self._call("POST", f"/datasets/{_seg(dataset_id)}/finalize")
        self._upload_urls.pop(dataset_id, None)
        return record

    def list_datasets(self, status: str = "ready") -> list[dict[str, Any]]:
        params = {"status": status} if status != "ready" else {}
        return list(self._get("/datasets", **params).get("datasets", []))

    def get_dataset(self, dataset_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self._get(f"/datasets/{_seg(dataset_id)}")
        return result

    def download(self, dataset_id: str) -> Iterator[bytes]:
        """Your own dataset, or else a public one of that id (as the original SDK pulls)."""
        if not self._keyed:
            return self.download_public(dataset_id)
        try:
            links = self._get(f"/datasets/{_seg(dataset_id)}/download")
        except NotFound:
            try:
                self.public_card(dataset_id)
            except NotFound:
                raise NotFound(
                    f"dataset {dataset_id} not found (not yours, and not public)"
                ) from None
            return self.download_public(dataset_id)
        parts = links.get("parts") or [links["downloadUrl"]]
        return self._stream_parts(parts)

    def _stream_parts(self, parts: list[str]) -> Iterator[bytes]:
        return _stream(self._bare, parts, self.location)

    def delete_dataset(self, dataset_id: str) -> None:
        self._call("DELETE", f"/datasets/{_seg(dataset_id)}")

    def update_meta(self, dataset_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = self._call(
            "POST", f"/datasets/{_seg(dataset_id)}/meta", json=fields
        )
        return result

    def preview(self, dataset_id: str, n: int = 3) -> dict[str, Any]:
        result: dict[str, Any] = self._get(f"/datasets/{_seg(dataset_id)}/preview", n=n)
        return result

    def profile(self, dataset_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self._get(f"/datasets/{_seg(dataset_id)}/profile")["profile"]
        return result

    # agents
    def list_agents(self) -> list[dict[str, Any]]:
        return list(self._get("/agents").get("agents", []))

    def create_agent(
        self, slug: str, description: str | None = None, spec: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"slug": slug, "description": description, **(spec or {})}
        result: dict[str, Any] = self._call("POST", "/agents", json=body)
        return result

    def delete_agent(self, slug: str) -> None:
        self._call("DELETE", f"/agents/{_seg(slug)}")

    # traces
    def ingest_otlp(
        self,
        body: bytes | IO[bytes],
        content_type: str,
        content_encoding: str | None = None,
        signal: Signal = "traces",
    ) -> dict[str, Any]:
        if not isinstance(body, bytes):
            body = body.read()
        headers = {"Content-Type": content_type}
        if content_encoding:
            headers["Content-Encoding"] = content_encoding
        path = f"/v1/{signal}"
        result: dict[str, Any] = self._call("POST", path, content=body, headers=headers)
        return result

    def list_traces(
        self,
        agent: str | None = None,
        page: int = 1,
        since: float | None = None,
        limit: int = TRACE_PAGE_SIZE,
    ) -> dict[str, Any]:
        limit_param = limit if limit != TRACE_PAGE_SIZE else None
        result: dict[str, Any] = self._get(
            "/traces", agent=agent, page=page, since=since, limit=limit_param
        )
        return result

    def get_trace(self, trace_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self._get(f"/traces/{_seg(trace_id)}")
        return result

    def delete_trace(self, trace_id: str) -> None:
        self._call("DELETE", f"/traces/{_seg(trace_id)}")

    def score_trace(self, trace_id: str, value: float, name: str = "score") -> dict[str, Any]:
        body = {"value": check_score(value, name), "name": name}
        result: dict[str, Any] = self._call("POST", f"/traces/{_seg(trace_id)}/score", json=body)
        return result

    # training runs
    def create_run(self, spec: NewRun) -> dict[str, Any]:
        result: dict[str, Any] = self._call("POST", "/runs", json=spec.wire())
        return result

    def log_run(
        self, run_id: str, points: list[dict[str, Any]], total_steps: int | None = None
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"points": points}
        if total_steps is not None:
            body["total_steps"] = total_steps
        result: dict[str, Any] = self._call("POST", f"/runs/{_seg(run_id)}/log", json=body)
        return result

    def finish_run(
        self,
        run_id: str,
        status: str,
        summary: dict[str, Any] | None = None,
        adapter: str | None = None,
        error: str | None = None,
    ) -> dict[str, Any]:
        body = {"status": status, "summary": summary, "adapter": adapter, "error": error}
        clean = {k: v for k, v in body.items() if v is not None}
        result: dict[str, Any] = self._call("POST", f"/runs/{_seg(run_id)}/finish", json=clean)
        return result

    def attach_delta(self, run_id: str, report: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = self._call("POST", f"/runs/{_seg(run_id)}/delta", json=report)
        return result

    def get_run(self, run_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self._get(f"/runs/{_seg(run_id)}")
        return result

    def list_runs(self) -> list[dict[str, Any]]:
        return list(self._get("/runs").get("runs", []))

    def delete_run(self, run_id: str) -> None:
        self._call("DELETE", f"/runs/{_seg(run_id)}")

    # public cards
    def publish(
        self, dataset_id: str, agent: str, description: str | None = None
    ) -> dict[str, Any]:
        body = {"agent": agent, **({"description": description} if description else {})}
        result: dict[str, Any] = self._call(
            "POST", f"/datasets/{_seg(dataset_id)}/publish", json=body
        )
        return result

    def unpublish(self, dataset_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self._call("POST", f"/datasets/{_seg(dataset_id)}/unpublish")
        return result

    def catalog(self) -> dict[str, Any]:
        """The public cards, over the store's keyless client (a new one per call, as the
        module's `catalog` makes, would open a connection each time `public_card` looks)."""
        result: dict[str, Any] = _call(self._bare, "GET", "/catalog")
        return result

    def public_card(self, dataset_id: str) -> dict[str, Any]:
        for card in self.catalog().get("datasets", []):
            if card.get("datasetId") == dataset_id:
                return dict(card)
        raise NotFound(f"dataset {dataset_id} not found among the public ones")

    def download_public(self, dataset_id: str) -> Iterator[bytes]:
        return public_download(self.location, dataset_id)

    # the account
    def me(self) -> dict[str, Any]:
        result: dict[str, Any] = self._get("/me")
        return result

    def usage(self) -> dict[str, Any]:
        return self.me()

    def issue_credential(self, ttl: int, name: str | None = None) -> dict[str, Any]:
        body = {"ttlSeconds": ttl, **({"name": name} if name else {})}
        result: dict[str, Any] = self._call("POST", "/auth/issue-credential", json=body)
        return result

    def revoke_credential(self, credential: str) -> dict[str, Any]:
        body = {"credential": credential}
        result: dict[str, Any] = self._call("POST", "/auth/revoke-credential", json=body)
        return result

    def close(self) -> None:
        self._http.close()
        self._bare.close()


# --- calls that need no key ------------------------------------------------------------


def catalog(base_url: str) -> dict[str, Any]:
    with _client(base_url) as client:
        result: dict[str, Any] = _call(client, "GET", "/catalog")
        return result


def public_download(base_url: str, dataset_id: str) -> Iterator[bytes]:
    """A public dataset's rows, streamed, without a key (the catalog's signed link)."""
    with _client(base_url) as client:
        links = _call(client, "GET", f"/catalog/{_seg(dataset_id)}/download")
        yield from _stream(client, links.get("parts") or [links["downloadUrl"]], base_url)


def _stream(client: httpx.Client, parts: list[str], where: str) -> Iterator[bytes]:
    for url in parts:
        try:
            with client.stream("GET", url) as response:
                if not response.is_success:
                    response.read()
                    _raise_for(response)
                yield from response.iter_bytes(1024 * 1024)
        except httpx.HTTPError as exc:
            raise StoreError(f"download from {where} failed: {exc}") from None


def signup(
    base_url: str, email: str, name: str | None = None, invite: str | None = None
) -> dict[str, Any]:
    body = {"email": email, "name": name, **({"invite": invite} if invite else {})}
    with _client(base_url) as client:
        result: dict[str, Any] = _call(client, "POST", "/signup", json=body)
        return result


def device_code(base_url: str, name: str | None = None) -> dict[str, Any]:
    with _client(base_url) as client:
        result: dict[str, Any] = _call(client, "POST", "/device/code", json={"name": name})
        return result


def device_token(base_url: str, device_code: str, user_code: str) -> tuple[str, dict[str, Any]]:
    """One poll: ("ok", key record) or (error code, {}) for the RFC 8628 waiting states."""
    with _client(base_url) as client:
        try:
            response = client.post(
                "/device/token", json={"device_code": device_code, "user_code": user_code}
            )
        except httpx.HTTPError as exc:
            raise StoreError(f"cannot reach {base_url}: {exc}") from None
    if response.status_code == 400:
        error = _json_of(response).get("error", "")
        if error in ("authorization_pending", "slow_down", "expired_token"):
            return error, {}
    _raise_for(response)
    result: dict[str, Any] = _json_of(response)
    return "ok", result

"""The keyed routes: datasets, agents and traces, each one call on the account's `Store`.

Dataset bodies travel over signed, expiring links that need no key and stream to and
from the blob store in chunks (a download from an S3 bucket goes to it directly); export
requests wait their turn spooled to a temporary file and are decoded one at a time.
Another account's dataset, trace or agent answers 404, the same as one that does not
exist.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from whileai_core.store.agents import SPEC_FIELDS
from whileai_core.store.base import TRACE_PAGE_SIZE, BadRequest, NewDataset, Signal

from .server import Server
from .wire import (
    MAX_NAME,
    MAX_TEXT,
    Handler,
    body_chunks,
    declared_length,
    int_param,
    json_body,
    since_param,
    spooled_body,
    text_field,
)


class StoreRoutes:
    def __init__(self, server: Server) -> None:
        self.s = server

    def table(self) -> list[tuple[str, Handler, list[str]]]:
        return [
            ("/datasets", self.list_datasets, ["GET"]),
            ("/datasets", self.create_dataset, ["POST"]),
            ("/datasets/{id}", self.get_dataset, ["GET"]),
            ("/datasets/{id}", self.delete_dataset, ["DELETE"]),
            ("/datasets/{id}/finalize", self.finalize, ["POST"]),
            ("/datasets/{id}/download", self.download, ["GET"]),
            ("/datasets/{id}/meta", self.meta, ["POST"]),
            ("/datasets/{id}/preview", self.preview, ["GET"]),
            ("/datasets/{id}/profile", self.profile, ["GET"]),
            ("/datasets/{id}/publish", self.publish, ["POST"]),
            ("/datasets/{id}/unpublish", self.unpublish, ["POST"]),
            ("/catalog", self.catalog, ["GET"]),
            ("/catalog/{id}/download", self.public_download, ["GET"]),
            ("/catalog/{id}/rows", self.public_rows, ["GET"]),
            ("/upload/{id}", self.upload, ["PUT"]),
            ("/files/{id}", self.file, ["GET"]),
            ("/agents", self.list_agents, ["GET"]),
            ("/agents", self.create_agent, ["POST"]),
            # `path`: an agent named `team/bot` arrives as /agents/team%2Fbot, decoded.
            ("/agents/{slug:path}", self.delete_agent, ["DELETE"]),
            ("/v1/traces", self.ingest, ["POST"]),
            ("/v1/logs", self.ingest_logs, ["POST"]),
            ("/traces", self.list_traces, ["GET"]),
            ("/traces/{id}", self.get_trace, ["GET"]),
            ("/traces/{id}", self.delete_trace, ["DELETE"]),
            ("/traces/{id}/score", self.score, ["POST"]),
        ]

    # --- datasets ------------------------------------------------------------------

    async def create_dataset(self, request: Request) -> Response:
        account = (await self.s.account(request)).id
        async with self.s.store(request, account) as store:
            body = await json_body(request, self.s.limits)
            spec = NewDataset(
                name=text_field(body, "name") or "",
                purpose=text_field(body, "purpose") or "train",
                mode=text_field(body, "mode"),
                agent=text_field(body, "agent"),
                description=text_field(body, "description", MAX_TEXT),
                parent=text_field(body, "parentDatasetId"),
                idempotency_key=text_field(body, "idempotencyKey"),
            )
            record = await self.s.thread(store.create_dataset, spec)
        if not record.get("existing"):
            path = f"/upload/{record['datasetId']}"
            record["uploadUrl"] = self.s.signed(request, "PUT", path, account)
        return JSONResponse(record, status_code=200 if record.get("existing") else 201)

    async def upload(self, request: Request) -> Response:
        """The body streams to the blob store on an upload thread (see `Server.uploads_of`),
        at the pace `wire.paced_stream` holds it to."""
        account = self.s.link_account(request, "PUT")
        dataset_id = request.path_params["id"]
        async with self.s.uploads_of(account, request), self.s.store(request, account) as store:
            size = await self.s.upload_thread(
                store.upload, dataset_id, body_chunks(request), declared_length(request)
            )
        return JSONResponse({"datasetId": dataset_id, "bytes": size})

    async def finalize(self, request: Request) -> Response:
        async with self.s.store(request) as store:
            return JSONResponse(await self.s.thread(store.finalize, request.path_params["id"]))

    async def list_datasets(self, request: Request) -> Response:
        status = request.query_params.get("status", "ready")
        async with self.s.store(request) as store:
            records = await self.s.thread(store.list_datasets, status)
        used = sum(int(d["sizeBytes"]) for d in records)
        return JSONResponse({"datasets": records, "storageBytes": used})

    async def get_dataset(self, request: Request) -> Response:
        async with self.s.store(request) as store:
            return JSONResponse(await self.s.thread(store.get_dataset, request.path_params["id"]))

    async def delete_dataset(self, request: Request) -> Response:
        async with self.s.store(request) as store:
            await self.s.thread(store.delete_dataset, request.path_params["id"])
        return JSONResponse({"deleted": request.path_params["id"]})

    async def download(self, request: Request) -> Response:
        dataset_id = request.path_params["id"]
        account = (await self.s.account(request)).id
        url = await self.s.thread(self.s.download_link, request, account, dataset_id)
        expires = int(self.s.config.url_ttl)
        return JSONResponse({"downloadUrl": url, "parts": [url], "expiresIn": expires})

    async def file(self, request: Request) -> Response:
        account = self.s.link_account(request, "GET")
        dataset_id = request.path_params["id"]
        async with self.s.store(request, account) as store:

            def open_body() -> tuple[Any, int]:
                chunks = store.download(dataset_id)
                return chunks, int(store.get_dataset(dataset_id)["sizeBytes"])

            chunks, size = await self.s.thread(open_body)
        headers = {
            "content-length": str(size),
            "content-disposition": f'attachment; filename="{dataset_id}.jsonl"',
        }
        return StreamingResponse(chunks, media_type="application/x-ndjson", headers=headers)

    async def meta(self, request: Request) -> Response:
        async with self.s.store(request) as store:
            body = await json_body(request, self.s.limits)
            fields = {k: v for k, v in body.items() if k != "datasetId"}
            for key in fields:  # a value that is not a string is the store's to refuse
                if isinstance(fields[key], str):
                    text_field(fields, key, MAX_TEXT if key == "description" else MAX_NAME)
            record = await self.s.thread(store.update_meta, request.path_params["id"], fields)
        return JSONResponse(record)

    async def preview(self, request: Request) -> Response:
        n = int_param(request, "n", 3)
        async with self.s.store(request) as store:
            return JSONResponse(await self.s.thread(store.preview, request.path_params["id"], n))

    async def profile(self, request: Request) -> Response:
        async with self.s.store(request) as store:
            report = await self.s.thread(store.profile, request.path_params["id"])
        return JSONResponse({"profile": report})

    # --- public cards --------------------------------------------------------------

    async def publish(self, request: Request) -> Response:
        async with self.s.store(request) as store:
            body = await json_body(request, self.s.limits)
            agent, description = body.get("agent"), body.get("description")
            if isinstance(agent, str):
                text_field(body, "agent")
            if isinstance(description, str):
                text_field(body, "description", MAX_TEXT)
            card = await self.s.thread(store.publish, request.path_params["id"], agent, description)
        return JSONResponse(card)

    async def unpublish(self, request: Request) -> Response:
        async with self.s.store(request) as store:
            return JSONResponse(await self.s.thread(store.unpublish, request.path_params["id"]))

    async def catalog(self, request: Request) -> Response:
        """Every public card, no key needed (cards span accounts and never name one)."""
        with self.s.public_store() as store:
            return JSONResponse(await self.s.thread(store.catalog))

    async def public_download(self, request: Request) -> Response:
        """The original SDK's grant shape, pointing at the public rows route."""
        dataset_id = request.path_params["id"]
        with self.s.public_store() as store:
            await self.s.thread(store.public_card, dataset_id)  # 404 unless public
        url = f"{str(request.base_url).rstrip('/')}/catalog/{dataset_id}/rows"
        return JSONResponse({"downloadUrl": url, "parts": [url], "expiresIn": None})

    async def public_rows(self, request: Request) -> Response:
        dataset_id = request.path_params["id"]
        with self.s.public_store() as store:
            card = await self.s.thread(store.public_card, dataset_id)
            chunks = await self.s.thread(store.download_public, dataset_id)
        headers = {
            "content-length": str(card["sizeBytes"]),
            "content-disposition": f'attachment; filename="{dataset_id}.jsonl"',
        }
        return StreamingResponse(chunks, media_type="application/x-ndjson", headers=headers)

    # --- agents --------------------------------------------------------------------

    async def list_agents(self, request: Request) -> Response:
        async with self.s.store(request) as store:
            return JSONResponse({"agents": await self.s.thread(store.list_agents)})

    async def create_agent(self, request: Request) -> Response:
        async with self.s.store(request) as store:
            body = await json_body(request, self.s.limits)
            slug = text_field(body, "slug") or text_field(body, "name")
            if not slug:
                raise BadRequest("an agent needs a slug")
            description = text_field(body, "description", MAX_TEXT)
            spec = {k: body[k] for k in SPEC_FIELDS if body.get(k) is not None}
            agent = await self.s.thread(store.create_agent, slug, description, spec or None)
        return JSONResponse(agent, status_code=201)

    async def delete_agent(self, request: Request) -> Response:
        async with self.s.store(request) as store:
            await self.s.thread(store.delete_agent, request.path_params["slug"])
        return JSONResponse({"deleted": request.path_params["slug"]})

    # --- traces --------------------------------------------------------------------

    async def ingest(self, request: Request) -> Response:
        return await self._ingest(request, "traces")

    async def ingest_logs(self, request: Request) -> Response:
        """What GenAI instrumentations send message content as: log events, each joined
        to the span (and so the trace) it names."""
        return await self._ingest(request, "logs")

    async def _ingest(self, request: Request, signal: Signal) -> Response:
        content_type = request.headers.get("content-type", "application/json")
        encoding = request.headers.get("content-encoding")
        async with self.s.store(request) as store:
            body = await spooled_body(request, self.s.limits.max_otlp_bytes, "max_otlp_bytes")
            try:
                async with self.s.ingest_gate:
                    result = await self.s.thread(
                        store.ingest_otlp, body, content_type, encoding, signal
                    )
            finally:
                body.close()
        # Spans a full trace could not take are counted as OTLP says (`partialSuccess`).
        rejected, problem = int(result.get("rejected", 0)), str(result.get("problem", ""))
        if content_type.split(";")[0].strip().lower() == "application/x-protobuf":
            if signal == "logs":
                from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
                    ExportLogsServiceResponse,
                )

                return Response(
                    ExportLogsServiceResponse().SerializeToString(),
                    media_type="application/x-protobuf",
                )
            from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
                ExportTracePartialSuccess,
                ExportTraceServiceResponse,
            )

            answer = ExportTraceServiceResponse()
            if rejected:
                answer.partial_success.CopyFrom(
                    ExportTracePartialSuccess(rejected_spans=rejected, error_message=problem)
                )
            return Response(answer.SerializeToString(), media_type="application/x-protobuf")
        partial = {"rejectedSpans": rejected, "errorMessage": problem} if rejected else {}
        return JSONResponse({"partialSuccess": partial, **result})

    async def list_traces(self, request: Request) -> Response:
        agent = request.query_params.get("agent")
        page = int_param(request, "page", 1)
        limit = int_param(request, "limit", TRACE_PAGE_SIZE)
        since = since_param(request)
        async with self.s.store(request) as store:
            result = await self.s.thread(store.list_traces, agent, page, since, limit)
        return JSONResponse(result)

    async def get_trace(self, request: Request) -> Response:
        async with self.s.store(request) as store:
            result = await self.s.thread(store.get_trace, request.path_params["id"])
        return JSONResponse(result)

    async def delete_trace(self, request: Request) -> Response:
        async with self.s.store(request) as store:
            await self.s.thread(store.delete_trace, request.path_params["id"])
        return JSONResponse({"deleted": request.path_params["id"]})

    async def score(self, request: Request) -> Response:
        async with self.s.store(request) as store:
            body = await json_body(request, self.s.limits)
            value = body.get("value", body.get("score"))
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise BadRequest("value must be a number")
            name = text_field(body, "name") or "score"
            trace_id = request.path_params["id"]
            result = await self.s.thread(store.score_trace, trace_id, value, name)
        return JSONResponse(result)

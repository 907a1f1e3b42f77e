"""Training-run routes: the original SDK's plain HTTP contract for a trainer's records.

    POST   /runs                {"name", "dataset_id"?, "base_model"?, "total_steps"?, "config"?}
    POST   /runs/{id}/log       {"points": [{"step", <metric>: number, ...}], "total_steps"?}
    POST   /runs/{id}/finish    {"status": "done|failed|stopped", "summary"?, "adapter"?, "error"?}
    POST   /runs/{id}/delta     a delta report (or {"report": ...}), kept as summary.delta
    GET    /runs                {"runs": [...]}, newest first
    GET    /runs/{id}           the run with `series` (its points, oldest first) and `holdout`
    DELETE /runs/{id}

Each is one call on the key's `Store`; another account's run answers 404.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from whileai_core.store.runs import NewRun

from .server import Server
from .wire import Handler, json_body


class RunRoutes:
    def __init__(self, server: Server) -> None:
        self.s = server

    def table(self) -> list[tuple[str, Handler, list[str]]]:
        return [
            ("/runs", self.list_runs, ["GET"]),
            ("/runs", self.create, ["POST"]),
            ("/runs/{id}", self.get, ["GET"]),
            ("/runs/{id}", self.delete, ["DELETE"]),
            ("/runs/{id}/log", self.log, ["POST"]),
            ("/runs/{id}/finish", self.finish, ["POST"]),
            ("/runs/{id}/delta", self.delta, ["POST"]),
        ]

    async def create(self, request: Request) -> Response:
        async with self.s.store(request) as store:
            spec = NewRun.from_wire(await json_body(request, self.s.limits))
            record = await self.s.thread(store.create_run, spec)
        return JSONResponse(record, status_code=201)

    async def log(self, request: Request) -> Response:
        async with self.s.store(request) as store:
            body = await json_body(request, self.s.limits)
            result = await self.s.thread(
                store.log_run,
                request.path_params["id"],
                body.get("points"),
                body.get("total_steps"),
            )
        return JSONResponse(result)

    async def finish(self, request: Request) -> Response:
        async with self.s.store(request) as store:
            body = await json_body(request, self.s.limits)
            record = await self.s.thread(
                store.finish_run,
                request.path_params["id"],
                body.get("status"),
                body.get("summary"),
                body.get("adapter"),
                body.get("error"),
            )
        return JSONResponse(record)

    async def delta(self, request: Request) -> Response:
        async with self.s.store(request) as store:
            body = await json_body(request, self.s.limits)
            report = body["report"] if isinstance(body.get("report"), dict) else body
            record = await self.s.thread(store.attach_delta, request.path_params["id"], report)
        return JSONResponse(record)

    async def get(self, request: Request) -> Response:
        async with self.s.store(request) as store:
            return JSONResponse(await self.s.thread(store.get_run, request.path_params["id"]))

    async def list_runs(self, request: Request) -> Response:
        async with self.s.store(request) as store:
            return JSONResponse({"runs": await self.s.thread(store.list_runs)})

    async def delete(self, request: Request) -> Response:
        async with self.s.store(request) as store:
            await self.s.thread(store.delete_run, request.path_params["id"])
        return JSONResponse({"deleted": request.path_params["id"]})

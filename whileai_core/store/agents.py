"""Agents in the store: the record everything on the platform hangs off.

An agent exists the moment a push names it or a trace declares it (`ensure_agent`);
`create` attaches what it is (a description, its tool schemas, its system prompt) to the
same record, before or after.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import orjson

from .base import BadRequest

if TYPE_CHECKING:
    from .local import Storage
    from .sql import Conn

SPEC_FIELDS = ("tools", "system_prompt")


def ensure_agent(db: Conn, account: str, slug: str) -> None:
    db.execute(
        "INSERT INTO agents (account, slug, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
        (account, slug, time.time()),
    )


def carry_context(
    db: Conn, account: str, slug: str, tools: list[dict[str, Any]], system_prompt: str | None
) -> None:
    """What an agent's traces carried (the tool schemas offered to the model, its system
    prompt) onto its record, the latest trace's winning; written only when it changed."""
    fields: dict[str, Any] = {}
    if tools:
        fields["tools"] = tools
    if system_prompt:
        fields["system_prompt"] = system_prompt
    if not fields:
        return
    prior = db.execute(
        "SELECT spec FROM agents WHERE account = ? AND slug = ?", (account, slug)
    ).fetchone()
    held = orjson.loads(prior["spec"]) if prior is not None and prior["spec"] else {}
    merged = {**held, **fields}
    if merged != held:
        db.execute(
            "UPDATE agents SET spec = ? WHERE account = ? AND slug = ?",
            (orjson.dumps(merged).decode(), account, slug),
        )


def check_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """`tools` a list of tool schemas, `system_prompt` a string; nothing else."""
    unknown = sorted(set(spec) - set(SPEC_FIELDS))
    if unknown:
        raise BadRequest(f"an agent's spec holds {' and '.join(SPEC_FIELDS)}, not {unknown}")
    if spec.get("tools") is not None and not isinstance(spec["tools"], list):
        raise BadRequest("tools must be a list of tool schemas")
    if spec.get("system_prompt") is not None and not isinstance(spec["system_prompt"], str):
        raise BadRequest("system_prompt must be a string")
    return {k: v for k, v in spec.items() if v is not None}


class AgentTable:
    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    def list(self, account: str) -> list[dict[str, Any]]:
        query = self.storage.query
        agents = query(
            "SELECT slug, description, spec, created_at FROM agents WHERE account = ?"
            " ORDER BY slug",
            (account,),
        )
        traces: dict[str, int] = {
            r[0]: r[1]
            for r in query(
                "SELECT agent, COUNT(*) FROM traces WHERE account = ? GROUP BY agent", (account,)
            )
        }
        sets: dict[str, dict[str, int]] = {}
        cards: dict[str, int] = {}
        for r in query(
            "SELECT agent, purpose, COUNT(*) AS n, COUNT(published_at) AS public FROM datasets"
            " WHERE account = ? AND status = 'ready' GROUP BY agent, purpose",
            (account,),
        ):
            sets.setdefault(r["agent"], {})[r["purpose"]] = r["n"]
            cards[r["agent"]] = cards.get(r["agent"], 0) + r["public"]
        return [
            {
                "slug": a["slug"],
                "description": a["description"],
                "traces": traces.get(a["slug"], 0),
                "datasets": sets.get(a["slug"], {}),
                "cards": cards.get(a["slug"], 0),
                "createdAt": iso(a["created_at"]),
                **(orjson.loads(a["spec"]) if a["spec"] else {}),
            }
            for a in agents
        ]

    def create(
        self,
        account: str,
        slug: str,
        description: str | None,
        spec: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Create or update an agent; a spec given replaces the fields it names and keeps
        the others (a push that only knows the tools keeps the system prompt)."""
        slug = slug.strip()
        if not slug:
            raise BadRequest("an agent needs a slug")
        fields = check_spec(spec or {})
        with self.storage.tx() as db:
            ensure_agent(db, account, slug)
            if description is not None:
                db.execute(
                    "UPDATE agents SET description = ? WHERE account = ? AND slug = ?",
                    (description, account, slug),
                )
            if fields:
                prior = db.execute(
                    "SELECT spec FROM agents WHERE account = ? AND slug = ? FOR UPDATE",
                    (account, slug),
                ).fetchone()
                merged = {**(orjson.loads(prior["spec"]) if prior["spec"] else {}), **fields}
                db.execute(
                    "UPDATE agents SET spec = ? WHERE account = ? AND slug = ?",
                    (orjson.dumps(merged).decode(), account, slug),
                )
        return next(a for a in self.list(account) if a["slug"] == slug)

    def delete(self, account: str, slug: str) -> None:
        sql = "DELETE FROM agents WHERE account = ? AND slug = ?"
        self.storage.delete_one("agent", sql, account, slug)


def iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))

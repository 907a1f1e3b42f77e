"""Public cards: datasets an account publishes for anyone to read and pull without a key.

A card is the dataset's record plus the profile's numbers, measured once when it is
published (a finalized dataset's rows never change, so neither do they). Cards are listed
across every account on the store, grouped by agent, and never name the account; a
public dataset's rows are pulled without a key. Only a finalized
dataset that holds rows may be published: an empty card, or one whose rows are still
arriving, tells a reader nothing.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import orjson

from .agents import ensure_agent, iso
from .base import BadRequest, NotFound

if TYPE_CHECKING:
    from .local import Storage

# The profile numbers a card carries (the per-task table stays on the dataset page).
CARD_PROFILE = ("rows", "graded", "passRate", "tasks", "mixedTasks", "unanimousTasks", "toolUse")


class Catalog:
    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    def publish(
        self, account: str, dataset_id: str, agent: Any, description: Any = None
    ) -> dict[str, Any]:
        if not isinstance(agent, str) or not agent.strip():
            raise BadRequest("publishing needs an agent: cards are grouped by agent")
        if description is not None and not isinstance(description, str):
            raise BadRequest("description must be a string")
        record = self.storage.get_dataset(account, dataset_id)
        if record["status"] != "ready":
            raise BadRequest(
                f"dataset {dataset_id} is not finalized: only a finished push publishes"
            )
        if not record["rows"]:
            raise BadRequest(f"dataset {dataset_id} holds no rows: there is nothing to publish")
        profile = self.storage.profile(account, dataset_id)
        card = {k: profile.get(k) for k in CARD_PROFILE}
        with self.storage.tx() as db:
            ensure_agent(db, account, agent.strip())
            db.execute(
                "UPDATE datasets SET agent = ?, description = COALESCE(?, description),"
                " card = ?, published_at = COALESCE(published_at, ?)"
                " WHERE id = ? AND account = ?",
                (
                    agent.strip(),
                    description,
                    orjson.dumps(card).decode(),
                    time.time(),
                    dataset_id,
                    account,
                ),
            )
        return self.card(dataset_id)

    def unpublish(self, account: str, dataset_id: str) -> dict[str, Any]:
        self.storage.get_dataset(account, dataset_id)
        with self.storage.tx() as db:
            db.execute(
                "UPDATE datasets SET published_at = NULL, card = NULL WHERE id = ? AND account = ?",
                (dataset_id, account),
            )
        return {**self.storage.get_dataset(account, dataset_id), "unpublished": True}

    @staticmethod
    def _card(row: Any) -> dict[str, Any]:
        return {
            "datasetId": row["id"],
            "name": row["name"],
            "agent": row["agent"],
            "description": row["description"],
            "purpose": row["purpose"],
            "mode": row["mode"],
            "rows": row["rows"],
            "sizeBytes": row["bytes"],
            "profile": orjson.loads(row["card"]) if row["card"] else {},
            "publishedAt": iso(row["published_at"]),
        }

    def _public_row(self, dataset_id: str) -> Any:
        found = self.storage.query(
            "SELECT * FROM datasets WHERE id = ? AND published_at IS NOT NULL AND status = 'ready'",
            (dataset_id,),
        )
        if not found:
            raise NotFound(
                f"dataset {dataset_id} not found among the public ones (a private one needs"
                " its account's key)"
            )
        return found[0]

    def card(self, dataset_id: str) -> dict[str, Any]:
        return self._card(self._public_row(dataset_id))

    def list(self) -> dict[str, Any]:
        """`{"datasets": [card, ...], "agents": [{agent, datasets, rows, sizeBytes}, ...]}`,
        cards newest first, agents by name."""
        rows = self.storage.query(
            "SELECT * FROM datasets WHERE published_at IS NOT NULL AND status = 'ready'"
            " ORDER BY published_at DESC, id"
        )
        cards = [self._card(r) for r in rows]
        agents: dict[str, dict[str, Any]] = {}
        for card in cards:
            name = card["agent"] or ""
            entry = agents.setdefault(
                name, {"agent": card["agent"], "datasets": [], "rows": 0, "sizeBytes": 0}
            )
            entry["datasets"].append(card["datasetId"])
            entry["rows"] += card["rows"]
            entry["sizeBytes"] += card["sizeBytes"]
        return {"datasets": cards, "agents": [agents[k] for k in sorted(agents)]}

"""Writing an ask's opener: novel within the run, and never a near copy of a source trace.

Openers are written concurrently but judged in ask order (each waits for the previous
ask's verdict), so the batch is the same however the writers race. A near-duplicate of
an earlier opener is redrawn with a new seed (8 tries, then kept); on a run aimed by
traces, an opener that near-copies a source trace (cosine of prompt embeddings at the
leakage threshold, or the same text) is redrawn too, and after 8 tries the ask is
dropped: source traces shape the grid and never enter the output.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..agents.base import Writer
from ..errors import Failure
from ..seeding import seed_int
from ..text.similarity import SimilarityIndex
from .config import Report
from .novelty import NearDuplicateFilter

TRIES = 8


class SourceCopy(Failure):
    """Every draft of this ask's opener near-copied a source trace: the ask is dropped
    (counted as source_copies_dropped, not as an agent error)."""


class Openers:
    def __init__(
        self,
        writer: Writer,
        novelty: NearDuplicateFilter,
        report: Report,
        seed: int,
        sources: SimilarityIndex | None = None,
    ) -> None:
        self.writer = writer
        self.novelty = novelty
        self.report = report
        self.seed = seed
        self.sources = sources if sources is not None and len(sources) else None

    async def remember(self, prompt: str, before: asyncio.Future[Any] | None) -> None:
        """A prompt already chosen (resumed, pinned, seeded) still counts for novelty."""
        if before is not None:
            await asyncio.wait([before])
        self.novelty.admit(prompt, force=True)

    def _copies_a_source(self, text: str) -> bool:
        if self.sources is None or self.sources.nearest(text) is None:
            return False
        self.report.source_copies_redrawn += 1
        return True

    async def write(
        self, situation: dict[str, Any], before: asyncio.Future[Any] | None
    ) -> tuple[str, str]:
        """(opener, why it was chosen); raises SourceCopy when no draft is clean."""
        pinned = situation.get("pinned_prompt")
        if isinstance(pinned, str):
            await self.remember(pinned, before)
            return pinned, "the pinned task's own prompt"
        seeded_prompt = situation.get("seed_prompt")
        if isinstance(seeded_prompt, str) and situation["phrasing"] == 0:
            await self.remember(seeded_prompt, before)
            if self._copies_a_source(seeded_prompt):
                raise SourceCopy(seeded_prompt)
            return seeded_prompt, "seed situation from the spec"

        def seed(attempt: int) -> int:
            return seed_int(self.seed, situation["scenario_id"], "opener", attempt)

        text = await self.writer.opener(situation, seed(0))
        if before is not None:
            await asyncio.wait([before])
        copied = False
        for attempt in range(TRIES):
            if attempt:
                text = await self.writer.opener(situation, seed(attempt))
            copied = self._copies_a_source(text)
            if copied:
                continue
            if self.novelty.admit(text):
                return text, f"novel opener on attempt {attempt + 1}"
            self.report.near_duplicates_rejected += 1
        if copied:
            raise SourceCopy(text)
        self.novelty.admit(text, force=True)
        return text, f"kept after {TRIES} near-duplicate openers"

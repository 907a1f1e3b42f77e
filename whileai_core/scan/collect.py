"""Reading rows for the hack scan: two passes, compact columns, never the rows themselves.

Pass one picks the auto tier's vocabulary (the most common words and word pairs, in
bounded memory). Pass two keeps, per row, only its ask (an integer), reward, a trajectory
digest, its nonzero hand features as (row, column, value) triples and its vocabulary hits
as (row, item) pairs: a few hundred bytes a row whatever the row's size. The rows of an
ask need not be adjacent (the ask is a column, grouped after reading), but the scan says
when they were not, since simulate writes them adjacent and a shuffled file is usually a
sign of a merge that interleaved runs.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..metrics.sketch import TopCounts
from ..metrics.tally import reward_of
from ..select.records import trajectory_key
from .features import FeatureOptions, Vocabulary, auto_items, hand_features

Row = dict[str, Any]
RowSource = Callable[[], Iterable[Row]]


def choose_vocabulary(sources: Iterable[RowSource], size: int) -> Vocabulary:
    from ..markers.view import view  # loaded with the first row: see FeatureOptions.trace

    counts = TopCounts(capacity=max(20_000, 50 * size))
    rows = 0
    for source in sources:
        for row in source():
            rows += 1
            counts.update(auto_items(view(row).agent_text))
    return Vocabulary.choose(counts, rows, size)


@dataclass
class ScanData:
    vocabulary: Vocabulary
    rows: int = 0
    asks: array[int] = field(default_factory=lambda: array("q"))
    rewards: array[float] = field(default_factory=lambda: array("d"))
    traj: array[int] = field(default_factory=lambda: array("Q"))
    hand_names: list[str] = field(default_factory=list)
    hand_row: array[int] = field(default_factory=lambda: array("i"))
    hand_col: array[int] = field(default_factory=lambda: array("i"))
    hand_val: array[float] = field(default_factory=lambda: array("d"))
    auto_row: array[int] = field(default_factory=lambda: array("i"))
    auto_col: array[int] = field(default_factory=lambda: array("i"))
    ask_names: list[str] = field(default_factory=list)
    adjacent: bool = True
    errors: dict[str, int] = field(default_factory=dict)
    first_error: str | None = None

    @property
    def judged(self) -> int:
        return sum(1 for r in self.rewards if r == r)  # NaN marks an unjudged row


def collect(source: RowSource, vocabulary: Vocabulary, opts: FeatureOptions) -> ScanData:
    from ..markers.view import view

    data = ScanData(vocabulary)
    vocab = vocabulary.index()
    hand_index: dict[str, int] = {}
    ask_index: dict[str, int] = {}
    finished: set[int] = set()
    last = -1
    for row in source():
        i = data.rows
        data.rows += 1
        v = view(row)
        ask = ask_index.get(v.task)
        if ask is None:
            ask = ask_index[sys.intern(v.task)] = len(data.ask_names)
            data.ask_names.append(v.task)
        if ask != last:
            if ask in finished:
                data.adjacent = False
            if last >= 0:
                finished.add(last)
            last = ask
        data.asks.append(ask)
        reward = reward_of(row)
        data.rewards.append(float("nan") if reward is None else reward)
        data.traj.append(int.from_bytes(trajectory_key(row)[:8], "big"))
        try:
            for name, value in hand_features(v, opts):
                if not value:
                    continue
                col = hand_index.get(name)
                if col is None:
                    col = hand_index[name] = len(data.hand_names)
                    data.hand_names.append(name)
                data.hand_row.append(i)
                data.hand_col.append(col)
                data.hand_val.append(value)
        except Exception as exc:  # a user feature that raises loses its row's hand tier
            kind = type(exc).__name__
            data.errors[kind] = data.errors.get(kind, 0) + 1
            data.first_error = data.first_error or f"{v.label()}: {kind}: {exc}"
        for item in auto_items(v.agent_text):
            col = vocab.get(item)
            if col is not None:
                data.auto_row.append(i)
                data.auto_col.append(col)
    return data

"""The difficulty band: the pass rates a grouped update can learn from.

An ask the policy always or never solves gives every rollout the same advantage, zero;
one it solves some of the time carries signal. The band (0.2-0.8 by default, edges
included, the reasoning-model recipes' offline filter) is a heuristic, so every command
that applies it takes `--band` and parses it here, in either spelling.
"""

from __future__ import annotations

import re
from typing import Literal

from ..errors import ConfigError

Band = tuple[float, float]
DEFAULT_BAND: Band = (0.2, 0.8)
# Pass rates are ratios of small integers; an inclusive edge must not lose 0.2 to float noise.
_EPS = 1e-9
Side = Literal["in_band", "too_easy", "too_hard"]
_NUMBER = r"(\d+(?:\.\d*)?|\.\d+)"
_BAND = re.compile(rf"\s*{_NUMBER}\s*[,:-]\s*{_NUMBER}\s*")


def parse_band(text: str) -> Band:
    """`0.2,0.8`, `0.2-0.8` or `0.2:0.8` -> (0.2, 0.8)."""
    match = _BAND.fullmatch(text)
    if match is None:
        raise ConfigError(f"{text!r}: expected LOW,HIGH such as 0.2,0.8")
    lo, hi = float(match.group(1)), float(match.group(2))
    if not 0.0 <= lo <= hi <= 1.0:
        raise ConfigError(f"{text!r}: need 0 <= LOW <= HIGH <= 1")
    return lo, hi


def in_band(rate: float, band: Band) -> bool:
    return band_side(rate, band) == "in_band"


def band_side(rate: float, band: Band) -> Side:
    if rate > band[1] + _EPS:
        return "too_easy"
    if rate < band[0] - _EPS:
        return "too_hard"
    return "in_band"

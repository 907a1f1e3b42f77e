"""What one account may hold and push: its tier's quotas, and the per-day usage counters.

The per-request limits (`limits.py`) bound what one request may cost; these bound what an
account may accumulate. Every quota is off (None) unless the server sets it, by flag or
`WHILEAI_<NAME>` (the embedded store reads the same variables).

| quota              | checked                                     | refused with |
|--------------------|---------------------------------------------|--------------|
| `max_datasets`     | when a dataset is created                   | 413          |
| `max_stored_bytes` | while an upload streams, and at finalize    | 413          |
| `max_push_rows`    | at finalize (rows in one dataset)           | 413          |
| `max_daily_rows`   | at finalize (rows finalized today, UTC)     | 429          |
| `max_daily_bytes`  | while an upload streams, and at finalize    | 429          |
| `max_daily_traces` | at ingest (new traces today)                | 429          |
| `max_daily_tokens` | at ingest (tokens those traces report)      | 429          |

A daily refusal says when the day turns over (`Retry-After`); a refusal of what the
account holds says what to delete. A push refused by a quota leaves nothing behind: the
pending dataset and its files go, and an ingest refused is written not at all.

Tiers name sets of quotas: an account's `tier` column picks one (`--tiers FILE` on the
server, an invite minted with `--tier`), and an account without one, or with a tier the
server no longer defines, gets the server's default quotas.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..row.limits import env_name, flag, format_size, parse_size
from ..settings import read
from .base import TooLarge, TooManyRequests

if TYPE_CHECKING:
    from .sql import Conn

DEFAULT_TIER = "self-hosted"
DAILY = ("max_daily_rows", "max_daily_bytes", "max_daily_traces", "max_daily_tokens")
OFF = ("off", "none", "unlimited")
# The usage_daily column each daily quota counts.
COUNTER_OF = {
    "max_daily_rows": "rows_pushed",
    "max_daily_bytes": "bytes_pushed",
    "max_daily_traces": "traces",
    "max_daily_tokens": "tokens",
}


@dataclass(frozen=True)
class Quotas:
    max_datasets: int | None = None
    max_stored_bytes: int | None = None
    max_push_rows: int | None = None
    max_daily_rows: int | None = None
    max_daily_bytes: int | None = None
    max_daily_traces: int | None = None
    max_daily_tokens: int | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 0
            ):
                raise ConfigError(f"{flag(f.name)} must be a whole number or off, got {value!r}")

    def wire(self) -> dict[str, int | None]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def parse(cls, values: Mapping[str, Any], where: str = "quotas") -> Quotas:
        """Quotas from text or numbers (`16MB`, `10`, `off`), as flags, variables and a
        tiers file give them."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ConfigError(
                f"{where}: unknown quota {', '.join(unknown)} (known: {sorted(known)})"
            )
        return cls(**{k: parse_quota(v, f"{where}: {k}") for k, v in values.items()})

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Quotas:
        found = {f.name: read(env_name(f.name), env) for f in fields(cls)}
        given = {name: value for name, value in found.items() if value is not None}
        return cls.parse(given, "environment")


NAMES: tuple[str, ...] = tuple(f.name for f in fields(Quotas))


def parse_quota(value: Any, what: str) -> int | None:
    if value is None or (isinstance(value, str) and value.strip().lower() in OFF):
        return None
    if isinstance(value, bool):
        raise ConfigError(f"{what}: expected a number, a size like 100MB, or off; got {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ConfigError(f"{what}: must not be negative, got {value}")
        return value
    text = str(value).strip()
    if text == "0":
        return 0
    return parse_size(text, what)


@dataclass(frozen=True)
class QuotaPolicy:
    """The server's quotas: the default tier's, and any named tiers."""

    default: Quotas = field(default_factory=Quotas)
    tiers: Mapping[str, Quotas] = field(default_factory=dict)
    default_tier: str = DEFAULT_TIER

    def for_tier(self, tier: str | None) -> tuple[str, Quotas]:
        if tier and tier in self.tiers:
            return tier, self.tiers[tier]
        return self.default_tier, self.default


def load_tiers(path: str) -> dict[str, Quotas]:
    """A tiers file: `{"trial": {"max_datasets": 10, "max_stored_bytes": "100MB"}, ...}`
    (JSON, or YAML for a file ending .yaml/.yml)."""
    import orjson

    try:
        raw = open(path, "rb").read()  # noqa: SIM115
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the tiers file ({exc.strerror})") from None
    try:
        if path.endswith((".yaml", ".yml")):
            import yaml

            data = yaml.safe_load(raw)
        else:
            data = orjson.loads(raw)
    except Exception as exc:
        raise ConfigError(f"{path}: not valid JSON/YAML ({exc})") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise ConfigError(f"{path}: expected an object of tier name -> quotas")
    return {
        str(name): Quotas.parse(values, f"{path}: tier {name}") for name, values in data.items()
    }


# --- usage ---------------------------------------------------------------------------


def today(now: float | None = None) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(time.time() if now is None else now))


def seconds_to_midnight(now: float | None = None) -> float:
    now = time.time() if now is None else now
    return 86400 - now % 86400


def add_usage(db: Conn, account: str, **counts: int) -> None:
    """Add to today's counters (`rows_pushed=`, `bytes_pushed=`, `traces=`, `tokens=`)."""
    columns = [c for c, n in counts.items() if n]
    if not columns:
        return
    names = ", ".join(columns)
    marks = ", ".join("?" for _ in columns)
    updates = ", ".join(f"{c} = usage_daily.{c} + excluded.{c}" for c in columns)
    db.execute(
        f"INSERT INTO usage_daily (account, day, {names}) VALUES (?, ?, {marks})"
        f" ON CONFLICT (account, day) DO UPDATE SET {updates}",
        (account, today(), *(counts[c] for c in columns)),
    )


def usage_today(db: Conn, account: str) -> dict[str, int]:
    row = db.execute(
        "SELECT rows_pushed, bytes_pushed, traces, tokens FROM usage_daily"
        " WHERE account = ? AND day = ?",
        (account, today()),
    ).fetchone()
    names = ("rows_pushed", "bytes_pushed", "traces", "tokens")
    return {n: int(row[i]) if row else 0 for i, n in enumerate(names)}


def stored(db: Conn, account: str) -> tuple[int, int]:
    """(datasets, bytes) the account holds: every dataset counts toward the number, the
    finalized ones toward the bytes (a pending upload's bytes are counted as it streams)."""
    count, size = db.execute(
        "SELECT COUNT(*), COALESCE(SUM(CASE WHEN status = 'ready' THEN bytes ELSE 0 END), 0)"
        " FROM datasets WHERE account = ?",
        (account,),
    ).fetchone()
    return int(count), int(size)


def shown(name: str, value: int) -> str:
    return format_size(value) if name.endswith("_bytes") else f"{value:,}"


def over(
    name: str, quotas: Quotas, used: int, adding: int, what: str
) -> TooLarge | TooManyRequests | None:
    """The refusal when `used + adding` passes quota `name`, else None. `what` says what
    was refused and by how much; the refusal adds the quota and how to raise it."""
    cap = getattr(quotas, name)
    if cap is None or used + adding <= cap:
        return None
    how = f"quota {name} = {shown(name, cap)}; the server's {flag(name)} / {env_name(name)}"
    if name in DAILY:
        wait = seconds_to_midnight()
        turn = f"the day (UTC) turns over in {math.ceil(wait / 60)} min"
        message = f"{what}: {shown(name, used)} already today ({how}); {turn}"
        return TooManyRequests(message, wait, name)
    return TooLarge(f"{what} ({how})", name)


def refuse_if_over(name: str, quotas: Quotas, used: int, adding: int, what: str) -> None:
    refusal = over(name, quotas, used, adding, what)
    if refusal is not None:
        raise refusal


def report(db: Conn, account: str, tier: str, quotas: Quotas) -> dict[str, Any]:
    """What `/me` and `whileai status` show: the tier, its quotas and the usage they count."""
    datasets, size = stored(db, account)
    day = usage_today(db, account)
    return {
        "tier": tier,
        "limits": quotas.wire(),
        "usage": {
            "datasets": datasets,
            "storedBytes": size,
            "today": {
                "day": today(),
                "rowsPushed": day["rows_pushed"],
                "bytesPushed": day["bytes_pushed"],
                "traces": day["traces"],
                "tokens": day["tokens"],
            },
        },
    }

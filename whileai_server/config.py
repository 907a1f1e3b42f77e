"""Everything `whileai serve` can be told, in one place, with its defaults.

The CLI's flags (and their WHILEAI_* variables) fill a `ServerConfig`; tests build one
directly, usually with the rate limits off, since every request in a test comes from
127.0.0.1.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from whileai_core.errors import ConfigError
from whileai_core.store.base import STALE_UPLOAD_SECONDS
from whileai_core.store.limits import Limits
from whileai_core.store.quotas import QuotaPolicy

from .ratelimit import Rate

SIGNUP_MODES = ("open", "invite", "closed")
SIGNUP_RATE = Rate(10, 3600)  # accounts a client may try to make, per hour
BAD_KEY_RATE = Rate(20, 60)  # wrong keys a client may send, per minute
APPROVE_RATE = Rate(10, 60)  # approval forms a client may post, per minute
DEVICE_CODE_RATE = Rate(20, 60)  # login codes a client may ask for, per minute


@dataclass(frozen=True)
class BodyPace:
    """How slowly a request body may arrive before the server stops waiting for it: no gap
    between chunks longer than `idle` seconds, and after the first `grace` seconds an
    average of at least `min_rate` bytes a second since the body began. A client sending a
    byte every two seconds is refused (408) once the grace is over, instead of holding a
    worker for as long as it likes; an honest slow link (tens of KB/s) is far above it."""

    idle: float = 30.0
    min_rate: float = 1024.0
    grace: float = 10.0


@dataclass(frozen=True)
class UploadSlots:
    """Dataset bodies streamed at once: per account, per client address, and in all. An
    upload holds a thread while its body arrives, so these bound what slow uploads can
    hold; uploads run on threads of their own (`total`), never the ones reads answer on.
    One past a bound waits up to `wait` seconds for a slot, then is refused (429)."""

    per_account: int = 4
    per_address: int = 8
    total: int = 16
    wait: float = 30.0


@dataclass(frozen=True)
class ServerConfig:
    # Where the metadata lives: None is SQLite under the data directory; a
    # postgresql://user@host/dbname URL is that database
    # (`pip install 'whileai-toolkit[postgres]'`).
    database: str | None = None
    # Where dataset bodies live: None is the data directory's `datasets/`;
    # s3://bucket/prefix a bucket (`pip install 'whileai-toolkit[s3]'`), at
    # `blobs_endpoint` for an S3-compatible store.
    blobs: str | None = None
    blobs_endpoint: str | None = None
    # The secret that signs upload/download links and form tokens: None is a file the
    # server makes in its data directory; replicas behind one address share one file.
    secret_file: str | None = None
    limits: Limits = field(default_factory=Limits)
    # What an account may hold and push (`quotas.py`): the default tier's and named tiers.
    quotas: QuotaPolicy = field(default_factory=QuotaPolicy)
    # open: anyone may create an account; invite: only with a code `whileai invite` minted;
    # closed: no new accounts (existing ones still sign in).
    signup: str = "open"
    signup_rate: Rate | None = SIGNUP_RATE
    bad_key_rate: Rate | None = BAD_KEY_RATE
    approve_rate: Rate | None = APPROVE_RATE
    device_code_rate: Rate | None = DEVICE_CODE_RATE
    body_pace: BodyPace = field(default_factory=BodyPace)
    uploads: UploadSlots = field(default_factory=UploadSlots)
    # Whose X-Forwarded-For / X-Forwarded-Proto to believe: None believes nobody's (the
    # client is the connection's peer); a comma-separated list of proxy addresses (or
    # `*`) believes those proxies' (`serve --forwarded-allow-ips`).
    forwarded_allow_ips: str | None = None
    url_ttl: float = STALE_UPLOAD_SECONDS
    device_interval: float = 5.0
    device_ttl: float = 900.0
    # `whileai token --ttl`: the longest a delegated credential may live.
    max_credential_ttl: float = 7 * 86400.0
    # A dashboard sign-in lasts this long (or until the credential it used expires).
    session_ttl: float = 12 * 3600.0

    def __post_init__(self) -> None:
        if self.signup not in SIGNUP_MODES:
            raise ConfigError(
                f"--signup must be one of {', '.join(SIGNUP_MODES)}, got {self.signup!r}"
            )

    @classmethod
    def relaxed(cls, **changes: object) -> ServerConfig:
        """No rate limits: for tests and benches, where every client is 127.0.0.1."""
        base = {
            "signup_rate": None,
            "bad_key_rate": None,
            "approve_rate": None,
            "device_code_rate": None,
        }
        return cls(**{**base, **changes})  # type: ignore[arg-type]

"""`whileai serve` (the platform server) and `whileai invite` (its admin's invite codes).

Every limit on what one request may cost, and every rate limit on the open routes, is a
flag here with a WHILEAI_* variable; the defaults live in `whileai_core.store.limits`
and `whileai_server.config`, once.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import typer

from ..options import bad_flag

# `serve --help` in panels: where it listens and keeps its data, who may sign up (and the
# per-client rates on those open routes), what one request may cost, what an account may hold.
_WHERE = "Where it listens and keeps data"
_SIGNUP = "Accounts and sign-up"
_LIMITS = "What one request may cost"
_QUOTAS = "Account quotas (the default tier)"


# Defaults are the library's (`Limits`, `ServerConfig`); the help repeats them so this
# module imports nothing at start-up (a test checks the two agree).
def _limit(flag: str, what: str) -> Any:
    env = "WHILEAI_" + flag[2:].replace("-", "_").upper()
    return typer.Option(flag, envvar=env, help=what, rich_help_panel=_LIMITS, show_default=False)


def _quota(flag: str, what: str) -> Any:
    env = "WHILEAI_" + flag[2:].replace("-", "_").upper()
    return typer.Option(
        flag, envvar=env, help=f"{what} Default off (no limit); `off` turns it off.",
        rich_help_panel=_QUOTAS, show_default=False,
    )  # fmt: skip


_DATABASE = typer.Option(
    "--database",
    envvar="WHILEAI_DATABASE",
    rich_help_panel=_WHERE,
    # Typer's help reads a bare [postgres] as markup and drops it: \[ keeps it.
    help="postgresql://user:pass@host/dbname (needs whileai\\[postgres]). Default SQLite in DATA.",
    show_default=False,
)


def _rate(flag: str, env: str, what: str) -> Any:
    return typer.Option(
        flag,
        envvar=env,
        help=f"{what}: N/PERIOD (10/h, 5/10min) or off.",
        rich_help_panel=_SIGNUP,
        show_default=False,
    )


def serve(
    host: Annotated[
        str,
        typer.Option(
            "--host",
            envvar="WHILEAI_HOST",
            rich_help_panel=_WHERE,
            help="Address to listen on (0.0.0.0: every interface).",
        ),
    ] = "127.0.0.1",
    port: Annotated[
        int,
        typer.Option("--port", envvar="WHILEAI_PORT", rich_help_panel=_WHERE, help="Port."),
    ] = 8321,
    data: Annotated[
        str | None,
        typer.Option(
            "--data",
            envvar="WHILEAI_DATA",
            rich_help_panel=_WHERE,
            help="Store directory (default WHILEAI_HOME/server).",
        ),
    ] = None,
    database: Annotated[str | None, _DATABASE] = None,
    blobs: Annotated[
        str | None,
        typer.Option(
            "--blobs",
            rich_help_panel=_WHERE,
            envvar="WHILEAI_BLOBS",
            help="Where dataset bodies live: s3://bucket/prefix (needs whileai\\[s3]) or a"
            " directory. Default DATA/datasets.",
            show_default=False,
        ),
    ] = None,
    blobs_endpoint: Annotated[
        str | None,
        typer.Option(
            "--blobs-endpoint",
            rich_help_panel=_WHERE,
            envvar="WHILEAI_BLOBS_ENDPOINT",
            help="URL of an S3-compatible store (MinIO, R2, ...). Default AWS S3.",
            show_default=False,
        ),
    ] = None,
    secret_file: Annotated[
        str | None,
        typer.Option(
            "--secret-file",
            rich_help_panel=_WHERE,
            envvar="WHILEAI_SECRET_FILE",
            help="The secret that signs links and forms; replicas behind one address share"
            " it. Default DATA/server-secret (made on first start).",
            show_default=False,
        ),
    ] = None,
    poll_interval: Annotated[
        float,
        typer.Option(
            "--poll-interval",
            rich_help_panel=_WHERE,
            envvar="WHILEAI_POLL_INTERVAL",
            help="Device-login poll interval (s).",
        ),
    ] = 5.0,
    signup: Annotated[
        Literal["open", "invite", "closed"],
        typer.Option(
            "--signup",
            rich_help_panel=_SIGNUP,
            envvar="WHILEAI_SIGNUP",
            help="Who may make an account: anyone, holders of an invite code, or nobody.",
        ),
    ] = "open",
    max_spans: Annotated[
        str | None, _limit("--max-spans", "Spans in one export request. Default 10,000.")
    ] = None,
    max_attributes: Annotated[
        str | None,
        _limit("--max-attributes", "Attributes of one span (list entries count). Default 128."),
    ] = None,
    max_depth: Annotated[
        str | None,
        _limit("--max-depth", "Nesting depth of an export request or a row. Default 64."),
    ] = None,
    max_otlp_bytes: Annotated[
        str | None, _limit("--max-otlp-bytes", "One export request, decompressed. Default 16MiB.")
    ] = None,
    max_upload_bytes: Annotated[
        str | None, _limit("--max-upload-bytes", "One dataset body. Default 512MiB.")
    ] = None,
    max_line_bytes: Annotated[
        str | None, _limit("--max-line-bytes", "One row of a dataset body. Default 4MiB.")
    ] = None,
    max_run_points: Annotated[
        str | None, _limit("--max-run-points", "Points in one run log batch. Default 500.")
    ] = None,
    max_trace_spans: Annotated[
        str | None,
        _limit("--max-trace-spans", "Spans one trace may gather over requests. Default 10,000."),
    ] = None,
    max_trace_bytes: Annotated[
        str | None,
        _limit("--max-trace-bytes", "One trace's stored spans, over requests. Default 16MiB."),
    ] = None,
    max_datasets: Annotated[
        str | None, _quota("--max-datasets", "Datasets an account may hold.")
    ] = None,
    max_stored_bytes: Annotated[
        str | None, _quota("--max-stored-bytes", "Bytes an account may store (e.g. 5GB).")
    ] = None,
    max_push_rows: Annotated[
        str | None, _quota("--max-push-rows", "Rows in one pushed dataset.")
    ] = None,
    max_daily_rows: Annotated[
        str | None, _quota("--max-daily-rows", "Rows an account may push a day (UTC).")
    ] = None,
    max_daily_bytes: Annotated[
        str | None, _quota("--max-daily-bytes", "Bytes an account may push a day.")
    ] = None,
    max_daily_traces: Annotated[
        str | None, _quota("--max-daily-traces", "Traces an account may send a day.")
    ] = None,
    max_daily_tokens: Annotated[
        str | None, _quota("--max-daily-tokens", "Tokens those traces may report a day.")
    ] = None,
    tiers: Annotated[
        str | None,
        typer.Option(
            "--tiers",
            rich_help_panel=_QUOTAS,
            envvar="WHILEAI_TIERS",
            help="JSON/YAML file of named tiers' quotas; `invite --tier` gives one to an account.",
        ),
    ] = None,
    signup_rate: Annotated[
        str | None,
        _rate("--signup-rate", "WHILEAI_SIGNUP_RATE", "Signups per client (default 10/h)"),
    ] = None,
    bad_key_rate: Annotated[
        str | None,
        _rate("--bad-key-rate", "WHILEAI_BAD_KEY_RATE", "Wrong keys per client (default 20/min)"),
    ] = None,
    approve_rate: Annotated[
        str | None,
        _rate(
            "--approve-rate", "WHILEAI_APPROVE_RATE", "Login approvals per client (default 10/min)"
        ),
    ] = None,
    device_code_rate: Annotated[
        str | None,
        _rate(
            "--device-code-rate",
            "WHILEAI_DEVICE_CODE_RATE",
            "Login codes asked for per client (default 20/min)",
        ),
    ] = None,
    forwarded_allow_ips: Annotated[
        str | None,
        typer.Option(
            "--forwarded-allow-ips",
            help="The reverse proxies (comma-separated addresses, or *) whose X-Forwarded-For"
            " names the client; rate limits key on it. Default none: the connection's peer"
            " is the client. Also WHILEAI_FORWARDED_ALLOW_IPS.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Run the platform server (multi-account) over a store directory.

    Metadata in SQLite under --data, or PostgreSQL (--database); dataset bodies under
    --data, or in an S3 bucket (--blobs)."""
    import dataclasses
    import os
    import socket

    from whileai_core.errors import ConfigError
    from whileai_core.row.limits import flag, parse_size
    from whileai_core.settings import forwarded_allow_ips as forwarded_from_env
    from whileai_core.settings import home
    from whileai_core.store.limits import Limits
    from whileai_core.store.quotas import QuotaPolicy, Quotas, load_tiers, parse_quota
    from whileai_server import create_app
    from whileai_server.app import uvicorn_config
    from whileai_server.config import ServerConfig
    from whileai_server.ratelimit import parse_rate

    from ..console import say

    given = {
        "max_spans": max_spans,
        "max_attributes": max_attributes,
        "max_depth": max_depth,
        "max_otlp_bytes": max_otlp_bytes,
        "max_upload_bytes": max_upload_bytes,
        "max_line_bytes": max_line_bytes,
        "max_run_points": max_run_points,
        "max_trace_spans": max_trace_spans,
        "max_trace_bytes": max_trace_bytes,
    }
    given_quotas = {
        "max_datasets": max_datasets,
        "max_stored_bytes": max_stored_bytes,
        "max_push_rows": max_push_rows,
        "max_daily_rows": max_daily_rows,
        "max_daily_bytes": max_daily_bytes,
        "max_daily_traces": max_daily_traces,
        "max_daily_tokens": max_daily_tokens,
    }
    try:
        limits = Limits(**{k: parse_size(v, flag(k)) for k, v in given.items() if v is not None})
        given_rates = {
            "signup_rate": signup_rate,
            "bad_key_rate": bad_key_rate,
            "approve_rate": approve_rate,
            "device_code_rate": device_code_rate,
        }
        rates: dict[str, Any] = {
            k: parse_rate(v, flag(k)) for k, v in given_rates.items() if v is not None
        }
        quotas = Quotas(
            **{k: parse_quota(v, flag(k)) for k, v in given_quotas.items() if v is not None}
        )
    except ConfigError as exc:
        text = str(exc)
        bad_flag(text.split(":")[0].split()[0], text)
    policy = QuotaPolicy(default=quotas, tiers=load_tiers(tiers) if tiers else {})
    config = ServerConfig(
        database=database,
        blobs=blobs,
        blobs_endpoint=blobs_endpoint,
        secret_file=secret_file,
        limits=limits,
        signup=signup,
        device_interval=poll_interval,
        quotas=policy,
        forwarded_allow_ips=forwarded_allow_ips or forwarded_from_env(),
    )
    config = dataclasses.replace(config, **rates)
    directory = data or str(home() / "server")
    app = create_app(directory, config)
    # Bind here, so a taken port is one line before anything claims to be listening.
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        sock = socket.create_server((host, port), family=family)
    except OSError as exc:
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        raise ConfigError(f"cannot listen on {host}:{port}: {reason}") from None
    where = app.state.server.storage.where
    proxies = config.forwarded_allow_ips
    trusting = f"; X-Forwarded-For believed from {proxies}" if proxies else ""
    say(f"whileai serve: {where}, listening on http://{host}:{port} (signup {signup}{trusting})")
    import uvicorn

    server = uvicorn.Server(uvicorn_config(app))
    server.run(sockets=[sock])


def invite(
    count: Annotated[
        int, typer.Option("--count", "-n", min=1, max=1000, help="How many codes to mint.")
    ] = 1,
    expires: Annotated[
        str, typer.Option("--expires", help="How long each code stays valid: 7d, 12h, 2w.")
    ] = "7d",
    note: Annotated[
        str | None, typer.Option("--note", help="Who the codes are for (kept with them).")
    ] = None,
    tier: Annotated[
        str | None,
        typer.Option("--tier", help="The tier (from serve --tiers) an account made with it gets."),
    ] = None,
    data: Annotated[
        str | None,
        typer.Option(
            "--data", envvar="WHILEAI_DATA", help="The server's store directory (as for serve)."
        ),
    ] = None,
    database: Annotated[str | None, _DATABASE] = None,
) -> None:
    """Mint one-use invite codes for a server run with --signup invite.

    Run it on the server's machine; it prints the codes, one a line. A running server sees
    them at once."""
    import time
    from pathlib import Path

    from whileai_core.errors import ConfigError
    from whileai_core.settings import home
    from whileai_core.store.base import parse_since
    from whileai_core.store.local import Storage
    from whileai_server.accounts import mint_invites

    from ..console import out, say

    try:
        ttl = time.time() - (parse_since(expires) or 0)
    except ConfigError:
        bad_flag("--expires", f"{expires!r}: expected a span like 7d, 12h or 2w")
    directory = data or str(home() / "server")
    # A typo must not start a new store (a PostgreSQL database must exist to connect to).
    if not database and not (Path(directory) / "store.db").is_file():
        raise ConfigError(
            f"{directory}: no server store here (pass the --data, or the --database, that"
            " `whileai serve` uses)"
        )
    storage = Storage(directory, database=database)
    try:
        codes = mint_invites(storage, count, ttl, note, tier)
    finally:
        storage.close()
    for code in codes:
        out().print(code, markup=False, highlight=False)
    where = storage.db.where if database else directory
    say(f"{count} invite code{'s' if count != 1 else ''} for {where}, valid {expires}")

"""Who you are on the platform, and the server itself: serve, login, logout, status, signup."""

from __future__ import annotations

from typing import Annotated

import typer

from ..options import JsonOpt
from .platform import ApiKeyOpt


def _server_url() -> str:
    from whileai_core.errors import ConfigError
    from whileai_core.store import api_url

    url = api_url()
    if url is None:
        raise ConfigError(
            "WHILEAI_API_URL is not set: the embedded store needs no login "
            "(set WHILEAI_API_URL to a `whileai serve` to use a server)"
        )
    return url


def login(
    name: Annotated[
        str | None, typer.Option("--name", help="A name for the key (e.g. this machine).")
    ] = None,
    no_wait: Annotated[
        bool, typer.Option("--no-wait", help="Print the link and code, then exit without polling.")
    ] = False,
) -> None:
    """Sign in to the server at WHILEAI_API_URL: prints a link and a code, waits for approval."""
    import socket

    from whileai_core.platform.login import start_or_resume, wait_for_key
    from whileai_core.store import credentials

    from ..console import say

    url = _server_url()
    pending, resumed = start_or_resume(url, name or socket.gethostname())
    say(("Resuming your login. " if resumed else "") + "Open this link and approve:")
    say(f"  {pending['verification_uri_complete']}")
    say(f"Code: [bold]{pending['user_code']}[/bold]")
    if no_wait:
        return
    record = wait_for_key(pending)
    say(
        f"Signed in ({credentials.mask(record['api_key'])}); key saved to "
        f"{credentials.credentials_path()}"
    )


def logout() -> None:
    """Remove the saved key (WHILEAI_API_KEY and --api-key are not touched)."""
    from whileai_core.store import credentials

    from ..console import say

    removed = credentials.remove()
    credentials.pending_login_path().unlink(missing_ok=True)
    say("logged out: saved key removed" if removed else "no saved key to remove")


def status(json: JsonOpt = False, api_key: ApiKeyOpt = None) -> None:
    """Which store is in use, and which key (masked) from where."""
    from whileai_core.store import describe

    from ..console import out, print_json

    info = describe(api_key)
    if json:
        print_json(info)
        return
    from whileai_core.store.profile import usage_lines

    console = out()
    console.print(f"store: {info['store']} ({info['location']})", markup=False)
    if info["store"] == "embedded":
        for line in usage_lines(info.get("account") or {}):
            console.print(line, markup=False)
        return
    if info["key"] is None:
        console.print(f"key: none ({info['error']}; run `whileai login`)", markup=False)
        return
    console.print(f"key: {info['key']} from {info['keySource']}", markup=False)
    account = info.get("account")
    if info.get("error"):
        console.print(f"account: unavailable ({info['error']})", markup=False)
    if isinstance(account, dict):
        console.print(
            f"account: {account.get('email')} ({account.get('user_id')}), "
            f"tier {account.get('tier')}, {account.get('datasets')} datasets",
            markup=False,
        )
        credential = account.get("credential")
        if isinstance(credential, dict):
            console.print(
                f"delegated credential, expires {credential.get('expiresAt')}", markup=False
            )
        for line in usage_lines(account):
            console.print(line, markup=False)


def signup(
    email: Annotated[str, typer.Option("--email", help="Your email address.")],
    name: Annotated[str | None, typer.Option("--name", help="Display name.")] = None,
    invite: Annotated[
        str | None,
        typer.Option(
            "--invite",
            envvar="WHILEAI_INVITE",
            help="Invite code, for a server that takes new accounts by invite.",
        ),
    ] = None,
) -> None:
    """Create an account and key on the server (no browser needed); saves the key."""
    from whileai_core.store import credentials
    from whileai_core.store.http import signup as wire_signup

    from ..console import say

    url = _server_url()
    record = wire_signup(url, email, name, invite)
    path = credentials.save(
        record["api_key"], api_url=url, name=record.get("name"), user_id=record.get("user_id")
    )
    say(
        f"account {record['user_id']} for {email}; key {credentials.mask(record['api_key'])} "
        f"saved to {path}"
    )


def token(
    ttl: Annotated[
        int,
        typer.Option(
            "--ttl", min=60, envvar="WHILEAI_TOKEN_TTL", help="Seconds the credential lives."
        ),
    ] = 3600,
    name: Annotated[
        str | None, typer.Option("--name", help="What it is for (kept with it).")
    ] = None,
    revoke: Annotated[
        str | None,
        typer.Option("--revoke", help="Revoke this delegated credential instead of minting one."),
    ] = None,
    json: JsonOpt = False,
    api_key: ApiKeyOpt = None,
) -> None:
    """Mint a short-lived delegated credential (zp_dc_...) from your key; prints it once.

    Use it as WHILEAI_DELEGATED_CREDENTIAL where the key itself should not go:
    export WHILEAI_DELEGATED_CREDENTIAL=$(whileai token --ttl 3600)"""
    from whileai_core.errors import ConfigError
    from whileai_core.store.http import HttpStore

    from ..console import print_json, say
    from .platform import opened

    url = _server_url()
    with opened(api_key) as store:
        if not isinstance(store, HttpStore):
            raise ConfigError(f"{url}: not a server store")
        if revoke is not None:
            store.revoke_credential(revoke)
            say("revoked: the credential is refused from now on")
            return
        issued = store.issue_credential(ttl, name)
    if json:
        print_json(issued)
        return
    print(issued["credential"])
    say(f"delegated credential for {url}, expires {issued['expiresAt']} (shown once)")

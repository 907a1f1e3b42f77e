"""The HTML page a person opens to approve a `whileai login` (the device flow's other half).

The page loads nothing and runs no script: its one stylesheet is inline and allowed by
its hash in the Content-Security-Policy, and the form posts only to this server.
"""

from __future__ import annotations

import base64
import hashlib
from html import escape

_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem}"
    "input{display:block;width:100%;padding:.5rem;margin:.3rem 0 1rem;font-size:1rem}"
    "button{padding:.6rem 1.4rem;font-size:1rem}code{font-size:1.4rem;letter-spacing:.1em}"
    ".err{color:#b00}fieldset{border:1px solid #ccc;margin:0 0 1rem;padding:.5rem 1rem}"
)
_STYLE_HASH = base64.b64encode(hashlib.sha256(_STYLE.encode()).digest()).decode()
CSP = (
    f"default-src 'none'; style-src 'sha256-{_STYLE_HASH}'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)


def _page(title: str, body: str) -> str:
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)}</title>"
        f"<style>{_STYLE}</style></head><body><h1>{escape(title)}</h1>{body}</body></html>"
    )


def approval_form(user_code: str, csrf: str, signup: str, error: str | None = None) -> str:
    """The form; `signup` (the server's mode) decides whether a new account can be made
    here and whether it needs an invite code."""
    problem = f"<p class='err'>{escape(error)}</p>" if error else ""
    new_account = ""
    if signup != "closed":
        invite = (
            "<label>Invite code<input name='invite' autocomplete='off'></label>"
            if signup == "invite"
            else ""
        )
        new_account = (
            "<fieldset><legend>New account</legend>"
            "<label>Email<input name='email' type='email' autocomplete='email'></label>"
            f"{invite}</fieldset>"
        )
    return _page(
        "Approve whileai login",
        f"{problem}<p>Check that this code matches the one in your terminal, then approve.</p>"
        "<form method='post' action='/device/approve'>"
        f"<input type='hidden' name='csrf' value='{escape(csrf)}'>"
        f"<label>Code<input name='user_code' value='{escape(user_code)}' required></label>"
        "<fieldset><legend>Existing account</legend>"
        "<label>One of its API keys<input name='api_key' type='password' autocomplete='off'>"
        "</label></fieldset>"
        f"{new_account}"
        "<button type='submit'>Approve</button></form>",
    )


def approved(email: str) -> str:
    return _page(
        "Approved",
        f"<p>Signed in as {escape(email)}. Go back to your terminal: the login finishes there.</p>",
    )


def refused(message: str) -> str:
    """A refusal that has no form to show again (a form from another site, a rate limit)."""
    return _page("Not approved", f"<p class='err'>{escape(message)}</p>")

"""The HTML page a person opens to approve a `whileai login` (the device flow's other half)."""

from __future__ import annotations

from html import escape

_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem}"
    "input{display:block;width:100%;padding:.5rem;margin:.3rem 0 1rem;font-size:1rem}"
    "button{padding:.6rem 1.4rem;font-size:1rem}code{font-size:1.4rem;letter-spacing:.1em}"
    ".err{color:#b00}"
)


def _page(title: str, body: str) -> str:
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)}</title>"
        f"<style>{_STYLE}</style></head><body><h1>{escape(title)}</h1>{body}</body></html>"
    )


def approval_form(user_code: str, error: str | None = None) -> str:
    problem = f"<p class='err'>{escape(error)}</p>" if error else ""
    return _page(
        "Approve whileai login",
        f"{problem}<p>Check that this code matches the one in your terminal, then approve.</p>"
        "<form method='post' action='/device/approve'>"
        f"<label>Code<input name='user_code' value='{escape(user_code)}' required></label>"
        "<label>Email<input name='email' type='email' required></label>"
        "<label>Existing API key (only if this email already has an account)"
        "<input name='api_key' type='password' autocomplete='off'></label>"
        "<button type='submit'>Approve</button></form>",
    )


def approved(email: str) -> str:
    return _page(
        "Approved",
        f"<p>Signed in as {escape(email)}. Go back to your terminal: the login finishes there.</p>",
    )

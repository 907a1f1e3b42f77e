"""The dashboard's HTML: the page frame and the small pieces every page is built from.

Pages are plain server-rendered HTML; every value is escaped here. Charts are a canvas
plus their data in one `<script type="application/json">` island per page, which the
page's own script (`static/dashboard.js`) hands to Chart.js: no inline script, so the
Content-Security-Policy allows scripts and styles from this server only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from html import escape
from typing import Any

import orjson

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
NAV = (("datasets", "Datasets"), ("runs", "Runs"), ("traces", "Traces"), ("agents", "Agents"))


def e(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def number(value: Any, digits: int = 4) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    if isinstance(value, int):
        return f"{value:,}"
    return e(value)


def percent(value: Any) -> str:
    return "–" if not isinstance(value, (int, float)) else f"{value:.1%}"


def size(n: Any) -> str:
    if not isinstance(n, int):
        return "–"
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def link(href: str, text: Any, cls: str = "") -> str:
    klass = f" class='{e(cls)}'" if cls else ""
    return f"<a href='{e(href)}'{klass}>{e(text)}</a>"


def table(
    headers: Iterable[str], rows: Iterable[Iterable[str]], cls: str = "", empty: str = ""
) -> str:
    """A table of cells already rendered (escape values with `e`, or build with `link`)."""
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    if not body:
        return f"<p class='empty'>{e(empty)}</p>" if empty else ""
    head = "".join(f"<th>{e(h)}</th>" for h in headers)
    return f"<table class='{e(cls)}'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def facts(pairs: Iterable[tuple[str, str]], cls: str = "facts") -> str:
    """A definition list of (label, rendered value)."""
    items = "".join(f"<dt>{e(k)}</dt><dd>{v}</dd>" for k, v in pairs)
    return f"<dl class='{e(cls)}'>{items}</dl>"


def chart(chart_id: str, title: str, caption: str = "") -> str:
    """A chart's place on the page; its data goes in the page's chart island under
    `chart_id`."""
    note = f"<figcaption>{e(caption)}</figcaption>" if caption else ""
    return (
        f"<figure class='chart'><h3>{e(title)}</h3><div class='canvas'>"
        f"<canvas id='{e(chart_id)}' role='img' aria-label='{e(title)}'></canvas></div>"
        f"{note}</figure>"
    )


def json_island(data: Mapping[str, Any]) -> str:
    """Data for the page's script; `<` is escaped so no value can close the element."""
    text = orjson.dumps(data).decode().replace("<", "\\u003c")
    return f"<script type='application/json' id='chart-data'>{text}</script>"


def page(
    title: str,
    body: str,
    *,
    section: str = "",
    who: str | None = None,
    csrf: str = "",
    charts: Mapping[str, Any] | None = None,
    refresh: int | None = None,
) -> str:
    """The frame: a header with the sections and the sign-out form, then `body`. With
    `refresh` the page reloads itself every that many seconds (a run still running)."""
    nav = "".join(
        f"<a href='/ui/{key}'{' aria-current=page' if key == section else ''}>{label}</a>"
        for key, label in NAV
    )
    account = ""
    if who is not None:
        account = (
            f"<span class='who'>{e(who)}</span>"
            "<form method='post' action='/ui/signout' class='signout'>"
            f"<input type='hidden' name='csrf' value='{e(csrf)}'>"
            "<button type='submit' id='signout'>Sign out</button></form>"
        )
    scripts = ""
    if charts:
        scripts = (
            json_island(charts) + "<script src='/ui/static/chart.umd.min.js'></script>"
            "<script src='/ui/static/dashboard.js'></script>"
        )
    header = (
        f"<header><a class='brand' href='/ui/datasets'>whileai</a><nav>{nav}</nav>{account}"
        "</header>"
        if who is not None
        else "<header><span class='brand'>whileai</span></header>"
    )
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        + (f"<meta http-equiv='refresh' content='{int(refresh)}'>" if refresh else "")
        + f"<title>{e(title)} · whileai</title><link rel='icon' href='data:,'>"
        "<link rel='stylesheet' href='/ui/static/dashboard.css'></head>"
        f"<body>{header}<main><h1>{e(title)}</h1>{body}</main>{scripts}</body></html>"
    )


def signin(csrf: str, problem: str | None = None) -> str:
    error = f"<p class='err' role='alert'>{e(problem)}</p>" if problem else ""
    form = (
        f"{error}<p>Sign in with one of your account's API keys (the one `whileai login` or"
        " `whileai signup` saved, or a delegated credential).</p>"
        "<form method='post' action='/ui/signin' class='signin'>"
        f"<input type='hidden' name='csrf' value='{e(csrf)}'>"
        "<label>API key<input name='api_key' type='password' autocomplete='off' required"
        " id='api_key'></label><button type='submit' id='signin'>Sign in</button></form>"
    )
    return page("Sign in", form)


def refused(message: str) -> str:
    return page(
        "Not signed in", f"<p class='err'>{e(message)}</p><p>{link('/ui/signin', 'Sign in')}</p>"
    )

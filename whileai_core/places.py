"""The places the mock world knows: airports by their codes, and the cities they serve.

Two stages read the same table. The simulation draws origins and destinations from it
(`simulate/values.py`), and the person's voice check (`people/voice.py`) reads a place
a drafted turn names against the person's brief: "from Denver to Oslo" for a trip from
DEN to LYS names a city the brief does not hold. Below every package that uses it.
"""

from __future__ import annotations

# Code -> the names a person may call it by (lower case). Order is the draw order.
AIRPORTS: dict[str, tuple[str, ...]] = {
    "LIS": ("lisbon",),
    "DEN": ("denver",),
    "KIX": ("osaka", "kansai"),
    "NBO": ("nairobi",),
    "YYZ": ("toronto", "pearson"),
    "LYS": ("lyon",),
    "SFO": ("san francisco",),
    "AMS": ("amsterdam", "schiphol"),
}
# Cities a drawn value may name instead of a code.
CITIES = ("Lisbon", "Denver", "Osaka", "Nairobi", "Toronto", "Lyon")


# Any name of a place (its code or a city, lower case) -> all of that place's names.
_NAMES: dict[str, frozenset[str]] = {
    name: frozenset((code.lower(), *names))
    for code, names in AIRPORTS.items()
    for name in (code.lower(), *names)
}


def place_names(value: str) -> frozenset[str]:
    """Every lower-case name of the place `value` (a code or a city): DEN is "den" and
    "denver"; Osaka is "osaka", "kix" and "kansai". Empty for a value that is no place
    the world knows."""
    return _NAMES.get(value.strip().lower(), frozenset())

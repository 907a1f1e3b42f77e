"""Public cards: publish a dataset for anyone to read and pull, take it back, browse them."""

from __future__ import annotations

from typing import Annotated

import typer

from ..options import JsonOpt
from .platform import ApiKeyOpt, opened


def publish(
    dataset_id: Annotated[str, typer.Argument(help="Dataset id (ds_…).")],
    agent: Annotated[
        str, typer.Option("--agent", envvar="WHILEAI_AGENT_NAME", help="Cards group by agent.")
    ],
    description: Annotated[
        str | None, typer.Option("--description", help="What the set holds, for the card.")
    ] = None,
    json: JsonOpt = False,
    api_key: ApiKeyOpt = None,
) -> None:
    """Publish a finalized dataset as a public card; anyone can then pull it without a key."""
    from ..console import print_json, say

    with opened(api_key) as store:
        card = store.publish(dataset_id, agent, description)
    if json:
        print_json(card)
        return
    say(f"{dataset_id} is public under {card['agent']}: {card['rows']} rows")


def unpublish(
    dataset_id: Annotated[str, typer.Argument(help="Dataset id (ds_…).")],
    api_key: ApiKeyOpt = None,
) -> None:
    """Take a dataset off the public catalog (it stays on your account)."""
    from ..console import say

    with opened(api_key) as store:
        store.unpublish(dataset_id)
    say(f"{dataset_id} is private again")


def catalog(json: JsonOpt = False) -> None:
    """Every public card, grouped by agent: rows, size and the profile's numbers."""
    from whileai_core.store.profile import card_lines

    from ..console import print_json, print_lines

    with opened(None, public=True) as store:
        result = store.catalog()
    if json:
        print_json(result)
        return
    print_lines(card_lines(result))

"""The package layering of `whileai_core`, written down once and enforced by
`tests/test_layers.py`.

A module imports, at module level, only from its own layer and the layers below it;
`whileai_core` never imports `whileai_cli` or `whileai_server` (the CLI and the server
import the core, never the other way); and module-level imports form no cycle. A
function-local import may reach up (to keep an optional or heavy backend out of a light
path) only where `LAZY_UPWARD` lists it, with the reason; a new one fails the test until it
is moved down or listed. `UPWARD` lists the module-level upward imports that remain from
before the layering was enforced, each with the step that removes it; the list only
shrinks (an entry that no longer occurs fails the test too).

    layer        holds
    -----------  ----------------------------------------------------------------------
    foundation   errors, settings, the event loop (aio), the registry and plug-in
                 loading, the spec, the row (`row/`: model, rules, limits, privileged,
                 buffer, validate), JSONL i/o, seeding, schemas, and the package root
                 (whose names all load lazily)
    text         tokens, shingles, MinHash, coverage, prompt similarity (a leaf)
    models       the one model client: references, providers, client, cache (a leaf)
    metrics      statistics over rows: pass@k, intervals, tallies, correlations
    scale        executors (this process, Ray) and the shards a run splits into
    store        the store itself (protocol, SQL, backends, blobs, its tables, quotas and
                 request limits) and OTLP decoding (otlp): rows in and out of a store,
                 which the stages read from (a dataset id, agent:NAME traces)
    agents       the agent protocols and the agents: seeded, callable, command, model
    judges       the judge contract, the built-in judges and verifiers, grading files
    people       the simulated person: the writers, their side of a conversation, the
                 voice check
    simulate     the simulation: grid, situations, world, scheduler, rows
    traces       traces in: load, mine, aim a run, infer a spec, leakage, split
    stages       what runs over rows after simulate: compare, select, export, trust,
                 markers, audit, the hack scan (scan), curate
    platform     the platform operations (push, pull, cut, purge, login), run handles
    front door   `api` (the library's one-call stages and `plan_run`), `testing`, `train`
"""

from __future__ import annotations

LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("foundation", frozenset({
        "__init__", "_lazy", "errors", "settings", "layers", "registry", "plugins", "schemas",
        "spec", "row", "jsonl", "seeding", "aio", "procs", "places",
    })),
    # Tokens, shingles, MinHash, coverage and prompt similarity: a leaf every stage asks.
    ("text", frozenset({"text"})),
    # A leaf: the model client, cache, specs and providers (what metrics' self-judged check
    # asks: whether two references name one model).
    ("models", frozenset({"models"})),
    ("metrics", frozenset({"metrics"})),
    ("scale", frozenset({"scale"})),
    ("store", frozenset({"store", "otlp"})),
    ("agents", frozenset({"agents"})),
    ("judges", frozenset({"judges"})),
    ("people", frozenset({"people"})),
    ("simulate", frozenset({"simulate"})),
    ("traces", frozenset({"traces"})),
    ("stages", frozenset({
        "compare", "select", "export", "trust", "markers", "audit", "scan", "curate",
    })),
    ("platform", frozenset({"platform", "runs"})),
    # Training over the stages' outputs (TRL, PEFT as an optional extra): it plays the
    # holdout through the front door's `plan_run`, like any caller of the library.
    ("front door", frozenset({"api", "testing", "train"})),
)  # fmt: skip

# Module-level imports that still go up: (importer, imported) -> what removes it.
UPWARD: dict[tuple[str, str], str] = {}

# Function-local imports that reach up on purpose: (importer, imported) -> why.
LAZY_UPWARD: dict[tuple[str, str], str] = {
    ("whileai_core.judges.registry", "whileai_core.train.rm"):
        "the rm:RUN judge is a trained reward model: torch and the run's adapter load only "
        "when a user names one",
}

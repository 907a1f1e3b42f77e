"""One worked example for every command, shown at the foot of its `--help`.

Kept apart from the commands so the table is read in one place: `tests/test_docs.py`
checks that every command in the tree has an example and that each names real commands
and options (a renamed flag fails the test, not a user). An example is one line, without
square brackets: Typer's help reads `[...]` as markup and would swallow it.
"""

from __future__ import annotations

from typing import Any

EXAMPLES: dict[str, str] = {
    "": "whileai simulate specs/orders --mode rl | whileai grade | whileai optimize --mode rl "
    "-o train.jsonl",
    # Make data
    "simulate": "whileai simulate specs/orders --mode rl --repeats 8 --budget 2000 -o rows.jsonl",
    "merge": "whileai merge shard1.jsonl shard2.jsonl shard3.jsonl shard4.jsonl -o rows.jsonl",
    "grid": "whileai grid specs/orders --json",
    "recommend": "whileai recommend specs/orders --mode rl --target 800 --mixed-rate 0.4",
    "grade": "whileai grade rows.jsonl -j 'numeric(tolerance=0.01)' --field meta.total "
    "-o graded.jsonl",
    "report": "whileai report graded.jsonl --k 8 --json",
    "optimize": "whileai optimize graded.jsonl --mode rl --band 0.3,0.7 -o train.jsonl",
    "export": "whileai export sft train.jsonl --spec specs/orders --format trl -o sft.jsonl",
    "export sft": "whileai export sft train.jsonl --spec specs/orders --format trl -o sft.jsonl",
    "export pairs": "whileai export pairs graded.jsonl --spec specs/orders --format trl "
    "--length-matched -o dpo.jsonl",
    "export hub": "whileai export hub graded.jsonl --spec specs/orders --format trl "
    "-o hub/orders-sft",
    "export env": "whileai export env graded.jsonl --spec specs/orders --band 0.2,0.8 "
    "-o envs/orders",
    # Train and serve
    "train": "whileai train graded.jsonl --method sft --base-model Qwen/Qwen2.5-0.5B-Instruct "
    "--spec specs/orders --steps 200 --lora-r 16",
    "reward-model": "whileai reward-model run_0123abcd rows.jsonl -o scored.jsonl",
    "serve-model": "whileai serve-model run_0123abcd --port 8001",
    "models": "whileai models --json",
    # What the policy will learn
    "mark": "whileai mark graded.jsonl --trace --kinds deploy=command -o marked.jsonl",
    "rank": "whileai rank graded.jsonl --sort -o ranked.jsonl",
    "scan": "whileai scan graded.jsonl --endorsed tool:lookup_order",
    "audit": "whileai audit refusals graded.jsonl --json",
    "curriculum": "whileai curriculum graded.jsonl --retire-solved -o trainable.jsonl",
    "decontaminate": "whileai decontaminate train.jsonl --against evals.jsonl "
    "--fields prompt,final_text -o clean.jsonl",
    # Measure
    "evaluate": "whileai evaluate holdout.jsonl -j checklist -o after.jsonl "
    "--failed-traces fails.jsonl",
    "compare": "whileai compare before.jsonl after.jsonl -m marker:argument_grounding",
    "delta": "whileai delta --before before.jsonl --after after.jsonl "
    "--must-not-regress argument_grounding --run-std noise.json",
    "variance": "whileai variance eval1.jsonl eval2.jsonl eval3.jsonl --report noise.json",
    "logprobs": "whileai logprobs report rows.jsonl",
    "logprobs report": "whileai logprobs report rows.jsonl --json",
    "logprobs ref": "whileai logprobs ref rows.jsonl --model vllm:Qwen/Qwen3-4B@http://gpu:8000/v1 "
    "--spec specs/orders -o ref.jsonl",
    "logprobs kl": "whileai logprobs kl ref.jsonl -o calibrated.jsonl",
    "logprobs staleness": "whileai logprobs staleness rows.jsonl --base-model Qwen/Qwen3-4B",
    # Trust the numbers
    "label": "whileai label graded.jsonl --labels labels.jsonl --annotator ana -o labelled.jsonl",
    "trust": "whileai trust labelled.jsonl --judge checklist --probes all --min-kappa 0.6",
    "probes": "whileai probes graded.jsonl --judge checklist --threshold 0.1",
    "agreement": "whileai agreement run-a.jsonl run-b.jsonl --json",
    "pairs": "whileai pairs pairs.jsonl --judge openai:gpt-4.1-mini -o judged-pairs.jsonl",
    "rubrics": "whileai rubrics rows.jsonl -o rubricked.jsonl",
    # Rows and specs
    "validate": "whileai validate rows.jsonl --max-errors 10",
    "schema": "whileai schema",
    "spec": "whileai spec specs/orders --json",
    "split": "whileai split graded.jsonl --pseudo-production 0.2 --production prod.jsonl "
    "-o train.jsonl",
    "leakage": "whileai leakage aimed.jsonl --sources prod.jsonl --drop -o clean.jsonl",
    # Platform
    "push": "whileai push graded.jsonl --name orders-rl-v1 --mode rl --holdout 0.2",
    "pull": "whileai pull ds_0123abcd -o train.jsonl",
    "datasets": "whileai datasets --json",
    "profile": "whileai profile ds_0123abcd --json",
    "preview": "whileai preview ds_0123abcd -n 3",
    "update": "whileai update ds_0123abcd --purpose holdout",
    "delete": "whileai delete ds_0123abcd",
    "purge": "whileai purge --agent demo-agent --dry-run",
    "publish": "whileai publish ds_0123abcd --agent orders-bot --description 'Graded refunds'",
    "unpublish": "whileai unpublish ds_0123abcd",
    "catalog": "whileai catalog --json",
    "agents": "whileai agents --json",
    "agents register": "whileai agents register orders-bot --description 'Looks up orders' "
    "--spec specs/orders",
    "runs": "whileai runs --json",
    "runs show": "whileai runs show run_0123abcd",
    "runs delete": "whileai runs delete run_0123abcd",
    "traces": "whileai traces list --agent shop --since 7d",
    "traces ingest": "whileai traces ingest export.json.gz",
    "traces list": "whileai traces list --agent shop --since 7d --page 2",
    "traces report": "whileai traces report agent:shop --since 7d --spec specs/orders",
    "traces delete": "whileai traces delete 4bf92f3577b34da64a4ce4e8d2b3c1f0",
    "score": "whileai score 4bf92f3577b34da6 0.7 --name quality",
    "cut": "whileai cut --agent shop --kind rl --band 0.2,0.8 --holdout 0.2 --since 7d",
    # Account and server
    "serve": "whileai serve --host 0.0.0.0 --port 8321 --data /srv/whileai --signup invite",
    "invite": "whileai invite --data /srv/whileai --count 3 --expires 7d --note 'ml team'",
    "login": "whileai login --no-wait --name laptop",
    "logout": "whileai logout",
    "status": "whileai status --json",
    "signup": "whileai signup --email you@example.com --invite inv_0123abcd",
    "token": "whileai token --ttl 3600 --name ci",
    "cache": "whileai cache stats",
    "cache stats": "whileai cache stats --json",
    "cache clear": "whileai cache clear",
}


def epilog(path: str) -> str:
    """The line shown under a command's options: its example, if it has one."""
    example = EXAMPLES.get(path)
    return f"Example: {example}" if example else ""


def attach(command: Any, path: str) -> Any:
    """Set the example on `command` and on every subcommand a Typer group holds (their
    paths: `"logprobs ref"`); returns `command`."""
    if not getattr(command, "epilog", None):
        command.epilog = epilog(path)
    for name, sub in (getattr(command, "commands", None) or {}).items():
        attach(sub, f"{path} {name}".strip())
    return command

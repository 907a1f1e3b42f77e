"""The command tree, loaded one command at a time, and the one place library errors become
a line on stderr with an exit code.

Every command lives in a module under `commands/`; `COMMANDS` below names it with the
one-line summary `--help` shows, in the order a run happens. Nothing behind a command is
imported until that command runs (or its own `--help` is asked for), so `whileai --help`
and a cron job's first command pay for what they use, not for thirty commands' imports.
`tests/test_cli_basics.py` checks each summary against its command's docstring.

Exit codes (docs/exit-codes.md): 0 ok, 1 bad input or a failed run, 2 usage, 3 no rows
(the rows given held none: every row-reading command, decided here from `jsonl`'s tally of
its inputs, or a stage that raised `NoRows`), 130 interrupted.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Annotated, Any, NamedTuple

import typer
from typer.core import TyperGroup

from whileai_core import __version__


class Command(NamedTuple):
    module: str
    attr: str
    panel: str
    summary: str


_MAKE, _ROWS, _PLATFORM, _ACCOUNT = "Make data", "Rows and specs", "Platform", "Account and server"
_LEARN = "What the policy will learn"
_MEASURE = "Measure"
_TRAIN = "Train and serve"
_TRUST = "Trust the numbers"
COMMANDS: dict[str, Command] = {
    "simulate": Command("simulate", "simulate", _MAKE,
        "Play the agent against a mock world across the coverage grid; rows to stdout or -o."),
    "merge": Command("simulate", "merge", _MAKE,
        "Merge the N outputs of a sharded run, in shard order; refuse overlaps and gaps."),
    "grid": Command("simulate", "grid", _MAKE,
        "Print the coverage grid's axes, their values and the cell count."),
    "recommend": Command("simulate", "recommend", _MAKE,
        "Size a run from this agent's grid: cells, visits, budget, situations x repeats."),
    "grade": Command("grade", "grade", _MAKE,
        "Judge every row: reward, reason, judge_name, judge_status, judge_meta, markers."),
    "report": Command("grade", "report", _MAKE,
        "pass@1 with its interval, pass^k, pass@k and headroom over graded rows."),
    "optimize": Command("optimize", "optimize", _MAKE,
        "Select training rows: RL groups in the difficulty band, or SFT rejection sampling."),
    "export": Command("export", "export_app", _MAKE,
        "Write training files (sft, pairs: openai or trl shape), a Hub folder or an RL env."),
    "train": Command("train", "train", _TRAIN,
        "Train a LoRA adapter with TRL (sft, dpo, grpo, rm) as a store run; holdout before/after."),
    "reward-model": Command("train", "reward_model", _TRAIN,
        "Grade rows with a trained reward model: reward 0/1 against its threshold, rm_score kept."),
    "serve-model": Command("train", "serve_model", _TRAIN,
        "Serve a run's adapter at an OpenAI-compatible /v1/chat/completions (tool calls too)."),
    "models": Command("train", "models", _TRAIN,
        "List the models `serve-model` is serving on this machine, with their URLs."),
    "mark": Command("mark", "mark", _LEARN,
        "Stamp behaviour markers: style, trajectory flags, argument grounding, spec traits."),
    "rank": Command("mark", "rank", _LEARN,
        "Add quality (0-1, the mean of mark's behaviour markers) to every row; reward unchanged."),
    "scan": Command("scan", "scan", _LEARN,
        "Hack scan: reward vs every candidate feature within ask, against a shuffled noise floor."),
    "audit": Command("audit", "audit", _LEARN,
        "Report: style tics, over-refusal, trajectory flags, grounding, leaks, stages, repeats."),
    "curriculum": Command("curate", "curriculum", _LEARN,
        "Order graded tasks easy to hard in tiers; --retire-solved drops the solved ones."),
    "decontaminate": Command("curate", "decontaminate", _LEARN,
        "Drop rows that copy an eval set (same task, verbatim, or 8-gram coverage >= 80%)."),
    "evaluate": Command("evaluate", "evaluate", _MEASURE,
        'Grade held-out rollouts like grade, stamped lineage.source = "eval"; failures as traces.'),
    "compare": Command("compare", "compare", _MEASURE,
        "Paired A/B on one metric: delta B - A, 95% interval, sign-flip p-value, verdict."),
    "delta": Command("compare", "delta", _MEASURE,
        "Before/after on pass@1 and every shared marker; exit 1 when a guard fails."),
    "variance": Command("compare", "variance", _MEASURE,
        "The eval's own re-run standard deviation, overall and --by; feeds delta --run-std."),
    "logprobs": Command("logprobs", "logprobs_app", _MEASURE,
        "Logprob checks: coverage, a reference model's scores, mean KL, staleness."),
    "label": Command("trust", "label", _TRUST,
        "Attach human labels (gold_reward 0/1, who said what) to rows; report unmatched labels."),
    "trust": Command("trust", "trust", _TRUST,
        "Is the judge trustworthy? Agreement, kappa, length bias and probes against gold labels."),
    "probes": Command("trust", "probes", _TRUST,
        "Try the reward hacks a policy finds first on a judge; name the holes at >= 10%."),
    "agreement": Command("trust", "agreement", _TRUST,
        "Agreement between two judges or runs (the second as gold), or rows against gold_reward."),
    "pairs": Command("trust", "pairs", _TRUST,
        "Judge A vs B pairs with an LLM both ways round: winner, tie, position_flip_rate."),
    "rubrics": Command("trust", "rubrics", _TRUST,
        "Write per-prompt rubric items onto privileged.rubric (by a model, or from the grid)."),
    "validate": Command("inspect", "validate", _ROWS,
        "Check rows against the row model; print file:line: problem for each bad row."),
    "schema": Command("inspect", "schema", _ROWS,
        "Print the row's JSON Schema (generated from the row models)."),
    "spec": Command("inspect", "spec", _ROWS, "Load a spec and show its tools, rules and rubric."),
    "split": Command("heldout", "split", _ROWS,
        "Hold out a task-disjoint slice of a run as pseudo-production; the rest to stdout or -o."),
    "leakage": Command("heldout", "leakage", _ROWS,
        "Flag generated rows whose prompt near-copies a source trace; --drop removes them."),
    "push": Command("platform", "push", _PLATFORM,
        "Push rows as a dataset (privileged blocks removed; gated unless --no-gate)."),
    "pull": Command("platform", "pull", _PLATFORM,
        "Download a dataset's rows as JSONL (a public one needs no key)."),
    "datasets": Command("platform", "datasets", _PLATFORM, "List your datasets."),
    "profile": Command("platform", "profile", _PLATFORM,
        "Pass rate, tasks, mixed tasks and tool use of a stored dataset."),
    "preview": Command("platform", "preview", _PLATFORM,
        "The first rows of a stored dataset (JSONL on stdout) and its profile (stderr)."),
    "update": Command("platform", "update", _PLATFORM,
        "Change a dataset's purpose, name, mode, agent or description (only what you give)."),
    "delete": Command("platform", "delete", _PLATFORM, "Delete a dataset (permanent)."),
    "purge": Command("platform", "purge", _PLATFORM,
        "Clean up: everything of one agent (--agent), or tiny datasets (--empty --max-rows N)."),
    "publish": Command("catalog", "publish", _PLATFORM,
        "Publish a finalized dataset as a public card; anyone can then pull it without a key."),
    "unpublish": Command("catalog", "unpublish", _PLATFORM,
        "Take a dataset off the public catalog (it stays on your account)."),
    "catalog": Command("catalog", "catalog", _PLATFORM,
        "Every public card, grouped by agent: rows, size and the profile's numbers."),
    "agents": Command("agents", "agents_app", _PLATFORM,
        "List agents: traces and datasets by purpose."),
    "runs": Command("runs", "runs_app", _PLATFORM,
        "List training runs; `runs show ID` for one run's curves, holdout and delta."),
    "traces": Command("traces", "traces_app", _PLATFORM,
        "Ingest, list and delete traces (OTLP spans from your agent); report what they show."),
    "score": Command("traces", "score", _PLATFORM,
        "Grade a run after it ran; sending the same name again corrects it."),
    "cut": Command("traces", "cut", _PLATFORM,
        "Make training data from scored traces: a train set and a holdout set; prints their ids."),
    "serve": Command("serve", "serve", _ACCOUNT,
        "Run the platform server (multi-account) over a store directory."),
    "invite": Command("serve", "invite", _ACCOUNT,
        "Mint one-use invite codes for a server run with --signup invite."),
    "login": Command("account", "login", _ACCOUNT,
        "Sign in to the server at WHILEAI_API_URL: prints a link and a code, waits for approval."),
    "logout": Command("account", "logout", _ACCOUNT,
        "Remove the saved key (WHILEAI_API_KEY and --api-key are not touched)."),
    "status": Command("account", "status", _ACCOUNT,
        "Which store is in use, and which key (masked) from where."),
    "signup": Command("account", "signup", _ACCOUNT,
        "Create an account and key on the server (no browser needed); saves the key."),
    "token": Command("account", "token", _ACCOUNT,
        "Mint a short-lived delegated credential (zp_dc_...) from your key; prints it once."),
    "cache": Command("cache", "cache_app", _ACCOUNT,
        "Inspect or empty the model-call cache (WHILEAI_HOME/cache/models.sqlite3)."),
}  # fmt: skip


def load_command(name: str) -> Any:
    """The click command behind `name`, built from its module on first use."""
    from .examples import attach

    entry = COMMANDS[name]
    module = importlib.import_module(f"whileai_cli.commands.{entry.module}")
    target = getattr(module, entry.attr)
    if isinstance(target, typer.Typer):
        group = typer.main.get_group(target)
        group.name = name
        return attach(group, name)
    # No completion flags: they would install completion for "whileai simulate" alone.
    single = typer.Typer(
        pretty_exceptions_enable=False,
        add_completion=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    single.command(name, rich_help_panel=entry.panel)(target)
    return attach(typer.main.get_command(single), name)


class LazyGroup(TyperGroup):
    """The root group: knows its commands' names and summaries, imports one on demand."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in COMMANDS:
            return None
        return load_command(cmd_name)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """The root help from the table alone: no command module is imported for it."""
        self.format_usage(ctx, formatter)
        formatter.write_paragraph()
        formatter.write_text(self.help or "")
        self.format_options(ctx, formatter)
        panels: dict[str, list[tuple[str, str]]] = {}
        for name, entry in COMMANDS.items():
            panels.setdefault(entry.panel, []).append((name, entry.summary))
        for panel, rows in panels.items():
            with formatter.section(panel):
                formatter.write_dl(rows)
        formatter.write_paragraph()
        formatter.write_text("Run 'whileai COMMAND --help' for a command's options.")
        from .examples import epilog

        formatter.write_paragraph()
        formatter.write_text(epilog(""))

    def format_options(self, ctx: Any, formatter: Any) -> None:
        rows = [rv for p in self.get_params(ctx) if (rv := p.get_help_record(ctx)) is not None]
        if rows:
            with formatter.section("Options"):
                formatter.write_dl(rows)


app = typer.Typer(
    name="whileai",
    cls=LazyGroup,
    help="Turn an agent's tools and system prompt into graded post-training data.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        print(f"whileai {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
    debug: Annotated[
        bool,
        typer.Option("--debug", envvar="WHILEAI_DEBUG", help="Show tracebacks on errors."),
    ] = False,
) -> None:
    """Turn an agent's tools and system prompt into graded post-training data."""
    from whileai_core.settings import single_blas_thread

    # Before any command imports numpy: optimize, push, audit, scan and the server all
    # run the same gate scan, and a second BLAS thread only spins there.
    single_blas_thread()
    if debug:
        from whileai_core.settings import enable_debug

        enable_debug()


def _usage_error(exc: Exception) -> None:
    """A usage error as one line naming the command, like every other error; exit 2."""
    code = getattr(exc, "exit_code", 2)
    format_message = getattr(exc, "format_message", None)
    if type(exc).__name__ == "NoArgsIsHelpError" or not callable(format_message):
        show = getattr(exc, "show", None)
        if callable(show):
            show()  # a bare `whileai` or group: the help is the answer
        sys.exit(code)
    ctx = getattr(exc, "ctx", None)
    where = getattr(ctx, "command_path", None) or "whileai"
    message = " ".join(str(format_message()).split())
    sys.stderr.write(f"{where}: usage error: {message} (see '{where} --help')\n")
    sys.exit(code)


NO_ROWS = 3


def main() -> None:
    """Console entry point: run the app, map errors to one line and an exit code."""
    from whileai_core.jsonl import tally_inputs

    with tally_inputs() as tally:
        code = _run()
    # One rule for empty input, whatever the command made of it: a command that ran to
    # its end over row inputs that held no rows exits 3 (its empty output is written).
    if tally.held_no_rows and code in (0, 1):
        sys.stderr.write(f"whileai: no rows in {tally.names()}: nothing to do (exit 3)\n")
        code = NO_ROWS
    sys.exit(code)


def _run() -> int:
    """Run the app; the exit code of a normal end or of `typer.Exit`. Every other ending
    (an error, an interrupt, usage) exits here with its own code and one line."""
    from whileai_core.errors import NoRows, WhileaiError
    from whileai_core.settings import debug_enabled

    try:
        code = app(prog_name="whileai", standalone_mode=False)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        sys.stderr.write("whileai: interrupted\n")
        sys.exit(130)
    except BrokenPipeError:
        # The reader went away (e.g. `| head`); that is not an error of ours.
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        finally:
            sys.exit(0)
    except typer.Abort:
        sys.stderr.write("whileai: aborted\n")
        sys.exit(1)
    except Exception as exc:
        # Typer vendors click; its usage errors share TyperException and know their exit code.
        if isinstance(exc, typer.exceptions.TyperException):
            _usage_error(exc)
        if debug_enabled():
            raise
        if isinstance(exc, NoRows):
            sys.stderr.write(f"whileai: {exc} (exit 3)\n")
            sys.exit(NO_ROWS)
        if isinstance(exc, WhileaiError):
            sys.stderr.write(f"whileai: error: {exc}\n")
        else:
            sys.stderr.write(
                f"whileai: error: {type(exc).__name__}: {exc} (run with --debug for a traceback)\n"
            )
        sys.exit(1)
    # Without standalone mode click hands back typer.Exit's code instead of exiting.
    return code if isinstance(code, int) else 0

"""The hack monitor: a TrainerCallback that watches the live policy for reward hacking.

    from whileai_core.train import HackMonitor, MonitorOptions

    monitor = HackMonitor(holdout_lines, proxy=my_reward, gold="checklist", run=run,
                          options=MonitorOptions(every=10, stop_on=("length",)))
    GRPOTrainer(..., callbacks=[TrainerCallback(run), monitor]).train()

Every `every` steps it samples each held-out prompt `samples` times from the policy as it
is (sampled, at `temperature`), scores every completion with the training reward (the
proxy, called as TRL calls a reward function: prompts, completions and the line's other
columns) and with a gold judge (any `--judge` value, or a `Judge`), runs the within-ask
hack scan (`scan.engine`, the one scan) on the batch, and logs `gold_reward`,
`proxy_reward` and `holdout_length` (characters) on the run. The alarms are
`alarms.AlarmBoard`'s; a fired alarm is a point (`alarm_<name>` = 1 at its step) and a
line in the run's summary (`alarms`), and one named in `stop_on` stops training:
`stop_reason` then holds its line, and `whileai train` finishes the run as `stopped`.

`holdout_lines` are the GRPO export's lines (`prompt` as messages, plus the columns the
reward reads) or bare message lists. A user's own TRL script can pass `run=None` and read
`monitor.board` and `monitor.stop_reason` itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..runs.callback import _base
from .alarms import AlarmBoard, Look
from .options import MonitorOptions

if TYPE_CHECKING:
    from ..judges.contract import Judge
    from ..runs.handle import TrainingRun


def _line(item: Any) -> dict[str, Any]:
    return dict(item) if isinstance(item, dict) else {"prompt": list(item)}


def _user_text(prompt: Any) -> str:
    if isinstance(prompt, str):
        return prompt
    return next((str(m.get("content") or "") for m in prompt if m.get("role") == "user"), "")


def completion_row(
    key: str, prompt: Any, reply: dict[str, Any], reward: float | None
) -> dict[str, Any]:
    """A sampled completion as a row: what the gold judge and the hack scan read."""
    messages = (
        list(prompt) if isinstance(prompt, list) else [{"role": "user", "content": str(prompt)}]
    )
    from ..agents.model import parse_arguments

    steps = []
    for call in reply.get("tool_calls") or []:
        arguments, error = parse_arguments(call["function"]["arguments"])
        step = {"tool": call["function"]["name"], "arguments": arguments or {}}
        steps.append({**step, "error": error} if error else step)
    return {
        "scenario_id": key,
        "prompt": _user_text(prompt),
        "messages": [*messages, reply],
        "final_text": reply.get("content") or "",
        "steps": steps,
        "reward": reward,
        "judge_status": "ok" if reward is not None else "error",
    }


class HackMonitor(_base()):  # type: ignore[misc]
    """Samples held-out prompts every N steps; logs gold beside proxy; raises alarms."""

    def __init__(
        self,
        holdout: Sequence[Any],
        *,
        proxy: Callable[..., Any],
        gold: Judge | str | None = None,
        run: TrainingRun | None = None,
        options: MonitorOptions | None = None,
        tokenizer: Any = None,
        spec: Any = None,
        seed: int = 0,
        max_new_tokens: int = 64,
    ) -> None:
        super().__init__()
        from ..judges.contract import Judge

        self.options = options or MonitorOptions()
        self.options.check()
        self.lines = [_line(item) for item in holdout][: self.options.prompts]
        if not self.lines:
            from ..errors import ConfigError

            raise ConfigError("the hack monitor needs held-out prompts to sample")
        self.proxy = proxy
        if isinstance(gold, Judge):
            self.gold = gold
        else:
            from ..judges.registry import JudgeOptions, parse_judge

            self.gold = parse_judge(gold, JudgeOptions(spec=spec))
        self.run = run
        self.tokenizer = tokenizer
        self.seed = seed
        self.max_new_tokens = max_new_tokens
        self.board = AlarmBoard(self.options)
        self.stop_reason: str | None = None

    # --- one look ---------------------------------------------------------------------

    def look(self, model: Any, tokenizer: Any, step: int, kl: float | None = None) -> Look:
        """Sample, score and scan once; the Look the alarms read."""
        from ..judges.contract import judge_once
        from ..scan.engine import ScanOptions, hack_scan
        from .model import chat

        o = self.options
        seen = Look(step=step, kl=kl)
        rows: list[dict[str, Any]] = []
        for i, line in enumerate(self.lines):
            key = str(line.get("task_id") or i)
            prompt = line["prompt"]
            messages = prompt if isinstance(prompt, list) else [{"role": "user", "content": prompt}]
            replies = chat(
                model,
                tokenizer,
                messages,
                tools=line.get("tools"),
                n=o.samples,
                temperature=o.temperature,
                max_new_tokens=self.max_new_tokens,
                seed=self.seed + step * 1000 + i,
            )
            texts = [r["text"] for r in replies]
            completions: list[Any] = (
                [[{"role": "assistant", "content": t}] for t in texts]
                if isinstance(prompt, list)
                else texts
            )
            extra = {k: [v] * len(texts) for k, v in line.items() if k != "prompt"}
            proxy = list(
                self.proxy(prompts=[prompt] * len(texts), completions=completions, **extra)
            )
            golds: list[float] = []
            for reply, reward in zip(replies, proxy, strict=True):
                value = float(reward) if isinstance(reward, (int, float)) else None
                row = completion_row(key, prompt, reply["message"], value)
                rows.append(row)
                verdict = judge_once(self.gold, {**row, "reward": None})
                if verdict.get("judge_status") == "ok" and verdict.get("reward") is not None:
                    golds.append(float(verdict["reward"]))
            scored = [float(r) for r in proxy if isinstance(r, (int, float))]
            if scored:
                seen.proxy[key] = sum(scored) / len(scored)
            if golds:
                seen.gold[key] = sum(golds) / len(golds)
            seen.length[key] = sum(len(t) for t in texts) / len(texts)
        seen.scan = hack_scan(rows, ScanOptions(endorsed=o.endorsed, seed=self.seed))
        return seen

    # --- the Trainer's events ------------------------------------------------------------

    def on_step_end(
        self, args: Any = None, state: Any = None, control: Any = None, **kwargs: Any
    ) -> Any:
        step = int(getattr(state, "global_step", 0) or 0)
        if step == 0 or step % self.options.every:
            return control
        model = kwargs.get("model")
        tokenizer = self.tokenizer or kwargs.get("processing_class") or kwargs.get("tokenizer")
        if model is None or tokenizer is None:
            return control
        seen = self.look(model, tokenizer, step, kl=_latest(state, "kl"))
        fired = self.board.add(seen)
        means = seen.means()
        point = {
            "gold_reward": means["gold"],
            "proxy_reward": means["proxy"],
            "holdout_length": means["length"],
        }
        point.update({f"alarm_{a.name}": 1.0 for a in fired})
        if self.run is not None:
            self.run.log(step, **point)
            if fired:
                self.run.note(alarms={n: a.line for n, a in self.board.fired.items()})
        stopping = [a for a in fired if a.name in self.options.stop_on]
        if stopping and self.stop_reason is None:
            self.stop_reason = stopping[0].line
            if control is not None:
                control.should_training_stop = True
        return control


def _latest(state: Any, key: str) -> float | None:
    for entry in reversed(getattr(state, "log_history", None) or []):
        if isinstance(entry, dict) and isinstance(entry.get(key), (int, float)):
            return float(entry[key])
    return None

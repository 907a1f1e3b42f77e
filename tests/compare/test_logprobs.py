"""The logprob checks end to end: simulate --logprobs against the loopback stub, score the
rows under a reference model (the stub again, on both routes), and check mean_kl against
a hand computation; then coverage, confidence, calibration and staleness."""

from __future__ import annotations

import hashlib
import json
import random
import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from whileai_core.compare.logprobs import calibrate_kl, logprob_report
from whileai_core.compare.staleness import staleness_report
from whileai_core.testing import OpenAIStub, Reply, Request, answer, tool_call

from ..helpers import ORDERS_SPEC, run_cli
from .rows import write

FINAL = "I checked it: here is what I found."
POLICY_TOKEN = -0.25  # the agent stub's logprob for each of the 8 tokens of FINAL


def _agent(request: Request) -> Reply:
    body = request.body if isinstance(request.body, dict) else {}
    messages = body.get("messages") or [{}]
    if not body.get("tools"):  # the writer, and the simulated user
        if any(m.get("role") == "assistant" for m in messages):
            return answer("DONE")
        # The order the person's brief holds (an id of the writer's own is redrawn).
        held = re.search(r'"order_id": "([^"]+)"', messages[0]["content"])
        digest = hashlib.sha256(messages[0]["content"].encode()).hexdigest()[:6]
        order = held.group(1) if held else f"from batch {digest}"
        return answer(f"hi, order {order} looks wrong, can you check it?")
    if messages[-1].get("role") == "tool":
        return answer(FINAL, logprobs=[POLICY_TOKEN] * 8)
    return tool_call("get_order", {"order_id": "ORD-77"})


def _ref_rule(token: str) -> float:
    """The reference's logprob of one token: what the stub charges, written out again."""
    return -(0.1 + 0.05 * len(token.strip()))


def _hand_reference(end_token: str) -> float:
    """FINAL as the reference tokenizes it: 8 words, the 7 spaces between them, and the
    turn's end token; nothing else of the conversation."""
    words = ["I", "checked", "it:", "here", "is", "what", "I", "found."]
    tokens = [*words, *[" "] * 7, end_token]
    return sum(_ref_rule(t) for t in tokens)


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("lp") / "rows.jsonl"
    with OpenAIStub(default=_agent) as stub:
        proc = run_cli(
            "simulate", str(ORDERS_SPEC), "--agent", stub.base_url, "--model", "policy-m",
            "--writer", stub.base_url, "--person-mode", "free", "--budget", "4", "--logprobs",
            "-o", str(out),
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr.decode()
    return out


@pytest.mark.parametrize(
    ("route", "end_token"), [("echo", "<|im_end|>"), ("prompt-logprobs", "<|end|>")]
)
def test_reference_scores_and_mean_kl_match_a_hand_computation(
    simulated: Path, tmp_path: Path, route: str, end_token: str
) -> None:
    scored = tmp_path / "ref.jsonl"
    with OpenAIStub() as ref:
        proc = run_cli(
            "logprobs", "ref", str(simulated), "--model", ref.base_url, "--served-model",
            "ref-m", "--route", route, "-o", str(scored), "--report", str(tmp_path / "r.json"),
        )  # fmt: skip
        used = ref.completions if route == "echo" else ref.calls
    assert proc.returncode == 0, proc.stderr.decode()
    report = orjson.loads((tmp_path / "r.json").read_bytes())
    rows = _rows(scored)
    assert report["scored"] == len(rows) == 4 and report["route"] == route
    # echo: one /completions call a row; prompt-logprobs: two chat calls a turn
    assert used == (4 if route == "echo" else 4 * 2 * 2)
    expected_ref = _hand_reference(end_token)
    for row in rows:
        final = next(s for s in row["steps"] if s.get("text") == FINAL)
        assert final["logprob"] == pytest.approx(8 * POLICY_TOKEN, abs=1e-12)
        assert final["ref_logprob"] == pytest.approx(expected_ref, abs=1e-9)
        assert final["ref_n_tokens"] == 16
        turn_steps = [s for s in row["steps"] if "logprob" in s]
        assert row["ref_logprob"] == pytest.approx(sum(s["ref_logprob"] for s in turn_steps))
        assert row["ref_model"] == "ref-m"
    # mean_kl: (policy - reference) over the turns the policy counted tokens for, divided
    # by the policy's tokens. The tool-call turn carries no content tokens from the stub.
    hand = (8 * POLICY_TOKEN - expected_ref) / 8
    data = orjson.loads(run_cli("logprobs", "kl", str(scored), "--json").stdout)
    assert data["mean_kl"] == pytest.approx(hand, abs=1e-9)
    assert data["rows_used"] == 4 and data["n_tokens"] == 32
    assert all(v == pytest.approx(hand, abs=1e-9) for v in data["per_task"].values())
    # The original SDK's mean_kl reads the row totals only: the reference's logprob of the
    # tool-call turn (which the policy's server reported no tokens for) counts against
    # none of the policy's, and the figure reads high. Both are reported, and why.
    totals = sum(r["logprob"] - r["ref_logprob"] for r in rows) / sum(r["n_tokens"] for r in rows)
    assert data["mean_kl_row_totals"] == pytest.approx(totals, abs=1e-9)
    assert totals > 2 * hand and data["unpaired_turns"] == 4
    assert any("the original SDK's mean_kl" in w for w in data["warnings"])


def test_kl_writes_calibration_mean_kl(simulated: Path, tmp_path: Path) -> None:
    scored, calibrated = tmp_path / "ref.jsonl", tmp_path / "cal.jsonl"
    with OpenAIStub() as ref:
        run_cli("logprobs", "ref", str(simulated), "--model", ref.base_url, "--served-model",
                "ref-m", "--route", "echo", "-o", str(scored))  # fmt: skip
    proc = run_cli("logprobs", "kl", str(scored), "-o", str(calibrated))
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode().startswith("mean_kl 0.187500")
    for row in _rows(calibrated):
        stamp = row["calibration"]
        assert stamp["mean_kl"] == pytest.approx(0.1875, abs=1e-9)
        assert stamp["task_id"] == row["scenario_id"] and "pass_rate" in stamp


def test_a_row_with_no_turn_is_skipped_and_a_broken_route_is_counted(tmp_path: Path) -> None:
    rows = [{"prompt": "hello", "scenario_id": "s1", "steps": [], "final_text": ""}]
    src = write(tmp_path / "rows.jsonl", rows)
    with OpenAIStub() as ref:
        proc = run_cli("logprobs", "ref", src, "--model", ref.base_url, "--served-model", "m",
                       "-o", str(tmp_path / "o.jsonl"))  # fmt: skip
    assert proc.returncode == 1 and b"no agent turn" in proc.stderr
    proc = run_cli("logprobs", "ref", src, "--model", "http://x/v1", "--route", "sideways")
    assert proc.returncode == 2 and b"--route" in proc.stderr


def _graded(fair: bool, seed: int = 3) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    rows = []
    for i in range(60):
        confidence = rng.uniform(-1.5, -0.1)
        # a fair judge ignores confidence; the other one pays for confident text
        reward = float(rng.random() < 0.5) if fair else float(confidence > -0.8)
        rows.append({
            "scenario_id": f"t{i // 3}", "rollout_index": i % 3, "reward": reward,
            "judge_status": "ok", "logprob": confidence * 10, "n_tokens": 10,
            "model_version": "vllm:Qwen/Qwen3-4B" if i % 4 else "old-policy",
        })  # fmt: skip
    return rows


def test_logprob_report_flags_reward_that_tracks_confidence() -> None:
    fair = logprob_report(_graded(fair=True)).as_dict()
    assert fair["coverage"] == 1.0 and not fair["reward_tracks_confidence"]
    hacked = logprob_report(_graded(fair=False)).as_dict()
    assert hacked["reward_tracks_confidence"] and hacked["corr_reward_confidence"] > 0.6
    assert any("tracks the policy's confidence" in w for w in hacked["warnings"])
    empty = logprob_report([{"scenario_id": "x", "reward": 1}]).as_dict()
    assert empty["coverage"] == 0 and "simulate --logprobs" in empty["warnings"][0]


def test_staleness_names_stale_rows_without_logprobs(tmp_path: Path) -> None:
    rows = _graded(fair=True)
    for row in rows[:8]:
        if row["model_version"] == "old-policy":
            del row["logprob"]
    src = write(tmp_path / "rows.jsonl", rows)
    proc = run_cli("logprobs", "staleness", src, "--base-model", "Qwen/Qwen3-4B", "--json")
    data = orjson.loads(proc.stdout)
    assert data["stale"] == 15 and data["stale_with_logprobs"] == 13
    assert data["stale_without_logprobs_rows"] == ["t0#0", "t1#1"]
    assert data["logprob_coverage"] == pytest.approx(58 / 60)
    assert any("t0#0, t1#1" in w for w in data["warnings"])
    report = staleness_report(rows, base_model="vllm:Qwen/Qwen3-4B@http://h/v1").as_dict()
    assert report["stale"] == 15  # a provider prefix and URL name the same model


def test_calibrate_kl_in_python_pools_tokens_per_task() -> None:
    rows = [
        {"scenario_id": "a", "logprob": -2.0, "ref_logprob": -3.0, "n_tokens": 4, "reward": 1},
        {"scenario_id": "a", "logprob": -1.0, "ref_logprob": -1.5, "n_tokens": 6, "reward": 0},
        {"scenario_id": "b", "logprob": -1.0, "n_tokens": 5},
    ]
    out, report = calibrate_kl(rows)
    assert report.mean_kl == pytest.approx((1.0 + 0.5) / 10, abs=1e-12)
    assert report.no_reference == 1
    assert out[0]["calibration"]["mean_kl"] == pytest.approx(0.15, abs=1e-12)
    assert out[0]["calibration"]["pass_rate"] == 0.5
    assert "calibration" not in out[2]


def test_spec_puts_the_system_prompt_and_tools_in_front(simulated: Path, tmp_path: Path) -> None:
    from whileai_core.spec import load_spec

    spec = load_spec(ORDERS_SPEC)
    with OpenAIStub() as ref:
        proc = run_cli("logprobs", "ref", str(simulated), "--model", ref.base_url,
                       "--served-model", "m", "--route", "echo", "--spec", str(ORDERS_SPEC),
                       "-o", str(tmp_path / "o.jsonl"))  # fmt: skip
        prompts = [r.body["prompt"] for r in ref.requests if r.path.endswith("/completions")]
    assert proc.returncode == 0, proc.stderr.decode()
    assert prompts and all(p.startswith(f"<|im_start|>system\n{spec.policy}") for p in prompts)
    assert all("<tools>" in p and '"get_order"' in p for p in prompts)
    # the scored turn is the same text, so its reference logprob does not move
    final = next(s for s in _rows(tmp_path / "o.jsonl")[0]["steps"] if s.get("text") == FINAL)
    assert final["ref_logprob"] == pytest.approx(_hand_reference("<|im_end|>"), abs=1e-9)


# A Llama-3-style template: not ChatML, so echo must render through it to score the turn.
LLAMA = (
    "{{ '<|begin_of_text|>' }}{% for m in messages %}"
    "{{ '<|start_header_id|>' + m['role'] + '<|end_header_id|>\\n\\n' }}"
    "{% if m['content'] %}{{ m['content'] }}{% endif %}"
    "{% for c in m['tool_calls'] or [] %}{{ c['function'] | tojson }}{% endfor %}"
    "{{ '<|eot_id|>' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}"
    "{% endif %}"
)


@pytest.mark.parametrize("source", ["file", "tokenizer-folder"])
def test_echo_renders_through_the_reference_models_chat_template(
    simulated: Path, tmp_path: Path, source: str
) -> None:
    """`--template` (a template file, or a tokenizer folder's tokenizer_config.json read
    without transformers): the text sent is the template's, and each turn's span ends at
    the template's end token."""
    if source == "file":
        template = tmp_path / "llama.jinja"
        template.write_text(LLAMA)
    else:
        template = tmp_path / "tokenizer"
        template.mkdir()
        (template / "tokenizer_config.json").write_text(json.dumps({"chat_template": LLAMA}))
    scored = tmp_path / "ref.jsonl"
    with OpenAIStub() as ref:
        proc = run_cli(
            "logprobs", "ref", str(simulated), "--model", ref.base_url, "--served-model", "ref-m",
            "--route", "echo", "--template", str(template), "-o", str(scored),
        )  # fmt: skip
        sent = [r.body["prompt"] for r in ref.requests if r.path.endswith("/completions")
                and "chat" not in r.path]  # fmt: skip
    assert proc.returncode == 0, proc.stderr.decode()
    assert len(sent) == 4 and all(p.startswith("<|begin_of_text|><|start_header_id|>system")
                                  for p in sent)  # fmt: skip
    assert "<|im_start|>" not in "".join(sent)
    for row in _rows(scored):
        final = next(s for s in row["steps"] if s.get("text") == FINAL)
        assert final["ref_logprob"] == pytest.approx(_hand_reference("<|eot_id|>"), abs=1e-9)
        assert final["ref_n_tokens"] == 16
    missing = run_cli("logprobs", "ref", str(simulated), "--model", "http://127.0.0.1:9/v1",
                      "--route", "echo", "--template", str(tmp_path / "nope.jinja"))  # fmt: skip
    assert missing.returncode != 0 and b"no such tokenizer folder or template" in missing.stderr

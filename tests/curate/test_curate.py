"""curriculum and decontaminate: exact counts on constructed sets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from whileai_core.curate.curriculum import CurriculumOptions, curriculum, retire_solved
from whileai_core.curate.decontaminate import DecontaminationReport, EvalIndex, decontaminate

from ..helpers import run_cli


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def _graded(rates: dict[str, float], k: int = 10) -> list[dict[str, Any]]:
    rows = []
    for task, rate in rates.items():
        passes = round(rate * k)
        for i in range(k):
            rows.append(
                {
                    "scenario_id": task,
                    "prompt": task,
                    "final_text": "ok",
                    "reward": 1.0 if i < passes else 0.0,
                    "judge_status": "ok",
                }
            )
    return rows


RATES = {
    "t-easy": 0.8,
    "t-mid": 0.5,
    "t-hard": 0.1,
    "t-half": 0.6,
    "t-solved": 1.0,
    "t-nine": 0.9,
    "t-dead": 0.0,
    "t-third": 0.3,
}


def test_curriculum_orders_easy_to_hard_in_tiers_and_retires_the_solved() -> None:
    cur = curriculum(_graded(RATES)).as_dict()
    assert cur["schedule"] == ["t-easy", "t-half", "t-mid", "t-third", "t-hard"]
    assert cur["tiers"] == [["t-easy", "t-half"], ["t-mid", "t-third"], ["t-hard"]]
    assert cur["retired"] == 2 and cur["not_ready"] == 1 and cur["trainable"] == 5
    assert cur["in_band"] == 4  # 0.1 is below the 0.2-0.8 band
    kept = retire_solved(_graded(RATES))
    assert {r["scenario_id"] for r in kept} == set(RATES) - {"t-solved", "t-nine"}
    loose = curriculum(_graded(RATES), CurriculumOptions(solved=0.95, tiers=1)).as_dict()
    assert loose["retired"] == 1 and len(loose["tiers"]) == 1


def test_curriculum_cli_writes_rows_without_retired_tasks(tmp_path: Path) -> None:
    path = _write(tmp_path / "graded.jsonl", _graded(RATES))
    report = run_cli("curriculum", str(path), "--json")
    assert report.returncode == 0 and orjson.loads(report.stdout)["retired"] == 2
    done = run_cli("curriculum", str(path), "--retire-solved", "--json")
    assert done.returncode == 0, done.stderr.decode()
    rows = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert len(rows) == 60 and orjson.loads(done.stderr)["rows_written"] == 60
    piped = run_cli(
        "curriculum", "--retire-solved", "-o", str(tmp_path / "out.jsonl"), input=path.read_bytes()
    )
    assert piped.returncode == 0 and len((tmp_path / "out.jsonl").read_bytes().splitlines()) == 60
    bad = run_cli("curriculum", str(path), "--solved", "0.1", "--floor", "0.5")
    assert bad.returncode == 1 and b"floor < solved" in bad.stderr


EVAL_PROMPTS = [
    "My order ORD-1188 arrived with a cracked screen and I would like a full refund to my card",
    "I was charged twice for the same subscription this month and want the extra charge removed",
    "Can you move my flight to Lisbon from Friday morning to Saturday evening without a change fee",
    "The package says delivered but nothing was left at my door and the neighbours saw nothing",
    "Please cancel the hotel booking for next weekend because the conference has been postponed",
    "Short eval ask",
]
TEMPLATE = "Hello, I need some help with my account today please. "


def decontam_set() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    evals = [
        {
            "prompt": p,
            "answer": f"eval answer number {i} explains the refund policy in "
            "full detail for the customer",
            # an eval row's own reply is not its answer key: copying it is no contamination
            "final_text": "Nothing was changed; please try again shortly, and thanks.",
        }
        for i, p in enumerate(EVAL_PROMPTS)
    ]
    evals += [{"prompt": TEMPLATE + "Why did my premium go up this year?"}]
    rows = [
        # verbatim: the same words, case and punctuation aside
        {"prompt": EVAL_PROMPTS[0]},
        {"prompt": EVAL_PROMPTS[1].upper() + "!"},
        {"prompt": "  " + EVAL_PROMPTS[2].replace(" ", "  ")},
        {"prompt": "short eval ask."},
        # near: a word changed or a few added (coverage >= 80%; a change among the first
        # eight words would leave every word before it uncovered)
        {"prompt": EVAL_PROMPTS[3].replace("neighbours", "cameras")},
        {"prompt": EVAL_PROMPTS[4] + " thanks"},
        {"prompt": EVAL_PROMPTS[0].replace("card", "account")},
        # clean: a shared template sentence is not a copy of the question
        {"prompt": TEMPLATE + "How do I change the email address on my account?"},
        {"prompt": TEMPLATE + "Can I pause my membership for two months?"},
        {"prompt": "Short eval"},
        {"prompt": "My order arrived late but it is fine, thanks for checking in with me"},
        # the prompt is new, the reply copies an eval answer
        {
            "prompt": "What is your refund policy?",
            "final_text": "Eval answer number 2 explains the refund policy in full detail "
            "for the customer.",
        },
        # the reply repeats an eval row's reply, boilerplate and all: clean
        {
            "prompt": "Where is my parcel?",
            "final_text": "Nothing was changed; please try again shortly, and thanks.",
        },
    ]
    for i, row in enumerate(rows):
        row["scenario_id"] = f"r{i}"
    return rows, evals


def test_decontaminate_counts_verbatim_near_and_clean_exactly() -> None:
    rows, evals = decontam_set()
    index = EvalIndex(8)
    for i, row in enumerate(evals):
        index.add_row(row, f"evals.jsonl:{i + 1}")
    report = DecontaminationReport(("prompt", "final_text"), 0.8, 8)
    clean = list(decontaminate(rows, index, fields=("prompt", "final_text"), report=report))
    data = report.as_dict()
    assert data["per_field"]["prompt"] == {"verbatim": 4, "near": 3}
    assert data["per_field"]["final_text"] == {"verbatim": 1, "near": 0}
    assert (data["contaminated"], data["clean"], data["same_task"]) == (8, 5, 0)
    assert [r["scenario_id"] for r in clean] == ["r7", "r8", "r9", "r10", "r12"]
    assert "0 of 7 eval rows carry a scenario_id" in data["rules_skipped"]["same_task"]
    assert data["offenders"][0] == {
        "row": "r0",
        "field": "prompt",
        "kind": "verbatim",
        "coverage": 1.0,
        "eval": "evals.jsonl:1",
    }
    prompt_only = list(decontaminate(rows, index))
    assert len(prompt_only) == 6


def test_a_row_of_an_eval_task_is_contaminated_whatever_its_words() -> None:
    evals = [{"prompt": "Cancel order 9911.", "scenario_id": "sc-1"}, {"prompt": "Refund 12."}]
    rows = [
        {
            "prompt": "I would like to call off the purchase I made, number 9911",
            "scenario_id": "sc-1",
        },
        {"prompt": "Cancel order 9911.", "scenario_id": "sc-2"},
        {"prompt": "Something else entirely", "scenario_id": "sc-3"},
    ]
    report = DecontaminationReport(("prompt",), 0.8, 8)
    clean = list(decontaminate(rows, EvalIndex.of(evals), report=report))
    assert [r["scenario_id"] for r in clean] == ["sc-3"]
    assert (report.same_task, report.per_field["prompt"]["verbatim"]) == (1, 1)
    assert report.offenders[0]["kind"] == "same_task" and not report.rules_skipped


def test_decontaminate_cli_against_a_file_and_a_dataset_id(tmp_path: Path) -> None:
    rows, evals = decontam_set()
    rows_path = _write(tmp_path / "train.jsonl", rows)
    evals_path = _write(tmp_path / "evals.jsonl", evals)
    done = run_cli(
        "decontaminate",
        str(rows_path),
        "--against",
        str(evals_path),
        "--fields",
        "prompt,final_text",
        "--json",
    )
    assert done.returncode == 0, done.stderr.decode()
    assert len(done.stdout.splitlines()) == 5
    report = orjson.loads(done.stderr)
    assert (report["verbatim"], report["near"], report["clean"]) == (5, 3, 5)
    env = {"WHILEAI_HOME": str(tmp_path / "home")}
    pushed = run_cli("push", str(evals_path), "--name", "evals", "--purpose", "eval", env=env)
    assert pushed.returncode == 0, pushed.stderr.decode()
    dataset = pushed.stdout.decode().strip()
    by_id = run_cli("decontaminate", str(rows_path), "--against", dataset, "--json", env=env)
    assert by_id.returncode == 0, by_id.stderr.decode()
    assert orjson.loads(by_id.stderr)["per_field"]["prompt"] == {"verbatim": 4, "near": 3}
    missing = run_cli("decontaminate", str(rows_path), "--against", "nothing-here.jsonl")
    assert missing.returncode == 1 and b"no such file" in missing.stderr
    usage = run_cli("decontaminate", str(rows_path))
    assert usage.returncode == 2

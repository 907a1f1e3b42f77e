"""whileai_core: the library behind the `whileai` command.

Everything the CLI does is a function here, so a notebook can do it too:

    import whileai_core as wa

    rows, run = wa.simulate_rows("specs/orders", mode="rl", budget=200)
    graded = list(wa.grade(rows))
    kept, why = wa.optimize(graded)

The names below load on first use (module `__getattr__`), so `import whileai_core` stays
as cheap as the CLI's start-up needs; the modules behind them can move. The simulate call
is `simulate_rows` because `whileai_core.simulate` is the stage's package, and a package
attribute would shadow a function of the same name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_exports

__version__ = "0.1.0"
# The name this toolkit installs under (`pip install whileai-toolkit`); the command stays
# `whileai` and the import `whileai_core`. PyPI's `whileai` is the original SDK.
DISTRIBUTION = "whileai-toolkit"

_NAMES = {
    # simulate
    "simulate_rows": ".api",
    "SimulateConfig": ".simulate.config",
    "load_spec": ".spec",
    "Spec": ".spec",
    "current_rollout": ".simulate.execute",
    # traces in: aim a run at what a deployed agent got wrong, keep the sources out
    "load_traces": ".traces.load",
    "trace_report": ".traces.mine",
    "mine_traces": ".traces.mine",
    "dimensions_from_traces": ".traces.aim",
    "spec_from_traces": ".traces.infer",
    "split_pseudo_production": ".traces.split",
    "leakage_report": ".traces.leakage",
    "drop_leaky_rows": ".traces.leakage",
    # grade and report
    "grade": ".api",
    "report": ".api",
    "parse_judge": ".judges.registry",
    "JudgeOptions": ".judges.registry",
    "Judge": ".judges.contract",
    "grade_files": ".judges.run",
    # select
    "optimize": ".select.optimize",
    "optimize_files": ".select.optimize",
    "OptimizeOptions": ".select.optimize",
    "publish_gate": ".select.gate",
    # what the policy will learn
    "mark": ".markers.mark",
    "MarkOptions": ".markers.mark",
    "hack_scan": ".scan.engine",
    "ScanOptions": ".scan.engine",
    "format_scan": ".scan.engine",
    "scan_diff": ".scan.run",
    "audit_rows": ".audit.run",
    "curriculum": ".curate.curriculum",
    "retire_solved": ".curate.curriculum",
    "decontaminate": ".curate.decontaminate",
    "EvalIndex": ".curate.decontaminate",
    "load_constitution": ".markers.modelspec",
    "stamp_spec": ".markers.modelspec",
    "stamp_stage": ".curate.stages",
    "stage_of": ".curate.stages",
    "STAGES": ".curate.stages",
    # measure: before and after, evals, logprobs
    "compare_runs": ".compare.compare",
    "delta_report": ".compare.delta",
    "DeltaOptions": ".compare.delta",
    "eval_variance": ".compare.variance",
    "evaluate_files": ".compare.evaluate",
    "logprob_report": ".compare.logprobs",
    "mean_kl": ".compare.logprobs",
    "calibrate_kl": ".compare.logprobs",
    "staleness_report": ".compare.staleness",
    "reference_files": ".compare.reference",
    # export
    "training_samples": ".export.training",
    "preference_pairs": ".export.pairs",
    "export_environment": ".export.environment",
    # the store
    "open_store": ".store",
    "push_rows": ".platform.push",
    "pull_rows": ".platform.push",
    # training runs
    "training_run": ".runs.handle",
    "TrainingRun": ".runs.handle",
    "TrainerCallback": ".runs.callback",
    # rows
    "read_rows": ".jsonl",
    "RowWriter": ".jsonl",
    "from_row": ".row.model",
    "to_row": ".row.model",
    "strip_privileged": ".row.privileged",
    "WhileaiError": ".errors",
    # trust the numbers
    "attach_labels": ".trust.labels",
    "judge_trust": ".trust.trust",
    "judge_probes": ".trust.probes",
    "judge_agreement": ".trust.agreement",
    "judge_pairs": ".trust.pairs",
    "write_rubrics": ".trust.rubrics",
    "rubric_judge": ".trust.rubrics",
}
__all__ = [
    "STAGES",
    "DeltaOptions",
    "EvalIndex",
    "Judge",
    "JudgeOptions",
    "MarkOptions",
    "OptimizeOptions",
    "RowWriter",
    "ScanOptions",
    "SimulateConfig",
    "Spec",
    "TrainerCallback",
    "TrainingRun",
    "WhileaiError",
    "__version__",
    "attach_labels",
    "audit_rows",
    "calibrate_kl",
    "compare_runs",
    "current_rollout",
    "curriculum",
    "decontaminate",
    "delta_report",
    "dimensions_from_traces",
    "drop_leaky_rows",
    "eval_variance",
    "evaluate_files",
    "export_environment",
    "format_scan",
    "from_row",
    "grade",
    "grade_files",
    "hack_scan",
    "judge_agreement",
    "judge_pairs",
    "judge_probes",
    "judge_trust",
    "leakage_report",
    "load_constitution",
    "load_spec",
    "load_traces",
    "logprob_report",
    "mark",
    "mean_kl",
    "mine_traces",
    "open_store",
    "optimize",
    "optimize_files",
    "parse_judge",
    "preference_pairs",
    "publish_gate",
    "pull_rows",
    "push_rows",
    "read_rows",
    "reference_files",
    "report",
    "retire_solved",
    "rubric_judge",
    "scan_diff",
    "simulate_rows",
    "spec_from_traces",
    "split_pseudo_production",
    "stage_of",
    "staleness_report",
    "stamp_spec",
    "stamp_stage",
    "strip_privileged",
    "to_row",
    "trace_report",
    "training_run",
    "training_samples",
    "write_rubrics",
]
__getattr__, __dir__ = lazy_exports(__name__, _NAMES)

if TYPE_CHECKING:
    from .api import grade, report, simulate_rows
    from .audit.run import audit_rows
    from .compare.compare import compare_runs
    from .compare.delta import DeltaOptions, delta_report
    from .compare.evaluate import evaluate_files
    from .compare.logprobs import calibrate_kl, logprob_report, mean_kl
    from .compare.reference import reference_files
    from .compare.staleness import staleness_report
    from .compare.variance import eval_variance
    from .curate.curriculum import curriculum, retire_solved
    from .curate.decontaminate import EvalIndex, decontaminate
    from .curate.stages import STAGES, stage_of, stamp_stage
    from .errors import WhileaiError
    from .export.environment import export_environment
    from .export.pairs import preference_pairs
    from .export.training import training_samples
    from .jsonl import RowWriter, read_rows
    from .judges.contract import Judge
    from .judges.registry import JudgeOptions, parse_judge
    from .judges.run import grade_files
    from .markers.mark import MarkOptions, mark
    from .markers.modelspec import load_constitution, stamp_spec
    from .platform.push import pull_rows, push_rows
    from .row.model import from_row, to_row
    from .row.privileged import strip_privileged
    from .runs.callback import TrainerCallback
    from .runs.handle import TrainingRun, training_run
    from .scan.engine import ScanOptions, format_scan, hack_scan
    from .scan.run import scan_diff
    from .select.gate import publish_gate
    from .select.optimize import OptimizeOptions, optimize, optimize_files
    from .simulate.config import SimulateConfig
    from .simulate.execute import current_rollout
    from .spec import Spec, load_spec
    from .store import open_store
    from .traces.aim import dimensions_from_traces
    from .traces.infer import spec_from_traces
    from .traces.leakage import drop_leaky_rows, leakage_report
    from .traces.load import load_traces
    from .traces.mine import mine_traces, trace_report
    from .traces.split import split_pseudo_production
    from .trust.agreement import judge_agreement
    from .trust.labels import attach_labels
    from .trust.pairs import judge_pairs
    from .trust.probes import judge_probes
    from .trust.rubrics import rubric_judge, write_rubrics
    from .trust.trust import judge_trust

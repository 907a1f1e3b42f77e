"""Trust the numbers: is a judge's reward worth training on?

    labels.py     attach_labels: human gold_reward (0/1) onto rows, who said what
    measure.py    agreement, kappa, halves, length bias, review queue over (judge, gold)
    trust.py      judge_trust: a judge against the labels, re-judged as-is and padded
    bar.py        TrustBar: what TRUSTED needs (labels of both classes, kappa, leak, baseline)
    probes.py     judge_probes: the reward hacks a policy finds first, tried on purpose
    agreement.py  judge_agreement: one judge or run against another as gold
    pairs.py      judge_pairs: an LLM judge on A vs B both ways round, position flips
    rubrics.py    write_rubrics / rubric_judge: per-prompt criteria scored item by item
    variants.py   the changed rows and the one judge pass they all go through

Every report is a dataclass with `as_dict()` (the --json report) and `lines()` (the text).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

_NAMES = {
    "attach_labels": ".labels",
    "read_labels": ".labels",
    "LabelReport": ".labels",
    "judge_trust": ".trust",
    "TrustReport": ".trust",
    "TrustBar": ".bar",
    "judge_probes": ".probes",
    "ProbeReport": ".probes",
    "PROBES": ".probes",
    "judge_agreement": ".agreement",
    "AgreementReport": ".agreement",
    "judge_pairs": ".pairs",
    "PairsReport": ".pairs",
    "write_rubrics": ".rubrics",
    "rubric_judge": ".rubrics",
    "RubricReport": ".rubrics",
}
__all__ = [
    "PROBES",
    "AgreementReport",
    "LabelReport",
    "PairsReport",
    "ProbeReport",
    "RubricReport",
    "TrustBar",
    "TrustReport",
    "attach_labels",
    "judge_agreement",
    "judge_pairs",
    "judge_probes",
    "judge_trust",
    "read_labels",
    "rubric_judge",
    "write_rubrics",
]
__getattr__, __dir__ = lazy_exports(__name__, _NAMES)

if TYPE_CHECKING:
    from .agreement import AgreementReport, judge_agreement
    from .bar import TrustBar
    from .labels import LabelReport, attach_labels, read_labels
    from .pairs import PairsReport, judge_pairs
    from .probes import PROBES, ProbeReport, judge_probes
    from .rubrics import RubricReport, rubric_judge, write_rubrics
    from .trust import TrustReport, judge_trust

"""Rows out as training files: SFT conversations, preference pairs, Hub dataset folders,
RL environments.

Every path removes `privileged` at any depth and refuses (and counts) rows whose agent
quoted it. Import from here; the modules behind it can move.
"""

from __future__ import annotations

from .context import Context
from .conversation import RoundTrip, messages_from_steps
from .environment import EnvironmentReport, export_environment
from .hub import HubReport, export_hub_folder
from .openai_format import line_problems
from .pairs import PairsReport, preference_pairs
from .plan import SampleExport, write_samples
from .training import TrainingReport, loss_mask, training_samples

__all__ = [
    "Context",
    "EnvironmentReport",
    "HubReport",
    "PairsReport",
    "RoundTrip",
    "SampleExport",
    "TrainingReport",
    "export_environment",
    "export_hub_folder",
    "line_problems",
    "loss_mask",
    "messages_from_steps",
    "preference_pairs",
    "training_samples",
    "write_samples",
]

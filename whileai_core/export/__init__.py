"""Rows out as training files: SFT conversations, preference pairs, RL environments.

Every path removes `privileged` at any depth and refuses (and counts) rows whose agent
quoted it. Import from here; the modules behind it can move.
"""

from __future__ import annotations

from .conversation import RoundTrip, messages_from_steps
from .environment import EnvironmentReport, export_environment
from .pairs import PairsReport, preference_pairs
from .training import TrainingReport, loss_mask, training_samples

__all__ = [
    "EnvironmentReport",
    "PairsReport",
    "RoundTrip",
    "TrainingReport",
    "export_environment",
    "loss_mask",
    "messages_from_steps",
    "preference_pairs",
    "training_samples",
]

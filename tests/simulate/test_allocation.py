"""The rl allocation as a plain policy: verdicts in, decisions out, no event loop."""

from __future__ import annotations

from whileai_core.simulate.allocation import Allocation


def test_a_split_probe_is_filled_to_k() -> None:
    policy = Allocation(probe=2)
    decision = policy.decide([True, False], launched=2, k=8, probing=True, first_look=True)
    assert decision.action == "fill" and decision.target == 8
    assert policy.probes == 1 and policy.probes_mixed == 1


def test_a_full_group_or_a_single_rollout_is_final() -> None:
    policy = Allocation()
    assert policy.decide([True], launched=1, k=1, probing=True, first_look=True).action == "final"
    filled = policy.decide([True] * 4 + [False] * 4, launched=8, k=8, probing=False,
                           first_look=False)  # fmt: skip
    assert filled.action == "final"


def test_a_unanimous_probe_extends_while_the_prior_hazard_beats_a_fresh_ask() -> None:
    policy = Allocation(probe=2)
    # No evidence yet: hazard after 2 is the prior 1/4 = 0.25; a fresh ask is worth
    # (0 + 1) / (1 + 2) / 2 = 0.17 per rollout once this probe is counted.
    first = policy.decide([True, True], launched=2, k=8, probing=True, first_look=True)
    assert first.action == "extend" and first.target == 3
    assert "hazard 0.25 > fresh 0.17" in first.reason


def test_measured_splits_change_the_decision() -> None:
    policy = Allocation(probe=2)
    for _ in range(20):  # many fresh asks split on their probe: fresh asks are worth a lot
        policy.decide([True, False], launched=2, k=8, probing=True, first_look=True)
    stop = policy.decide([True, True], launched=2, k=8, probing=True, first_look=True)
    assert stop.action == "stop"
    assert policy.fresh_value() > policy.hazard(2)


def test_later_looks_are_hazard_evidence_and_replay_relearns_them() -> None:
    live = Allocation(probe=2)
    live.decide([1, 1], launched=2, k=8, probing=True, first_look=True)
    live.decide([1, 1, 0], launched=3, k=8, probing=True, first_look=False)
    replayed = Allocation(probe=2)
    replayed.replay([1, 1, 0])
    assert (replayed.probes, replayed.probes_mixed) == (live.probes, live.probes_mixed)
    assert replayed.hazard(2) == live.hazard(2) > Allocation().hazard(2)


def test_dict_verdicts_compare_by_content() -> None:
    policy = Allocation()
    same = policy.decide([{"a": 1, "b": 2}, {"b": 2, "a": 1}], launched=2, k=4, probing=True,
                         first_look=True)  # fmt: skip
    assert same.action in ("stop", "extend")  # unanimous: not filled as a split would be


def test_a_group_unanimous_at_k_is_final_not_stopped() -> None:
    """Extended one rollout at a time up to k and still unanimous: nothing is left to save
    or to resume, so the group is complete (a report of it as `stopped` with 0 rollouts
    saved was what `simulate --tasks` printed for complete groups)."""
    policy = Allocation(probe=2)
    at_k = policy.decide([True] * 8, launched=8, k=8, probing=True, first_look=False)
    assert at_k.action == "final"

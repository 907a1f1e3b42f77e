"""Traces in: what a deployed agent did, read to aim the next simulation at its failures.

    load.py      load_traces: a JSONL file, a dataset id, ingested platform traces, or
                 `evaluate --failed-traces` rows, normalised to one trace shape
    mine.py      what traces show: tools, faults, world states, failing labels, the
                 flaw signatures (`mine_traces`), and `trace_report` to read before a run
    aim.py       the coverage grid aimed at those flaws (`simulate --traces`)
    infer.py     the tool surface read off traces, when there is no spec
    leakage.py   did a generated prompt come back a near copy of a source trace?
    split.py     hold out a slice of a run as stand-in production traces
"""

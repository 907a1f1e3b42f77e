"""Running a run past one process: its shards on an engine (Ray)."""

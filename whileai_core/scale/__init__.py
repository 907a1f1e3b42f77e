"""Where a stage's work runs: executors and the shards they hand out.

executor.py          the Executor protocol simulate, grade and evaluate take;
                     LocalExecutor (this process, or one `--shard I/N`);
                     `make_executor`, the CLI's choice
process_executor.py  ProcessExecutor: N shards in N local processes, rows in shard order
ray_executor.py      RayExecutor: N shards as Ray tasks, each shard's rows back when it ends
shards.py            Shard, `shard_of` (SHA-256 of the task id), `shard_rows`
"""

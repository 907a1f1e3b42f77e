"""The pids cgroup each sandbox runs in: RLIMIT_NPROC counts per user and binds nobody
running as root, where a fork bomb is most at home; the pids controller binds everyone.

A grader makes one child group per run under its own cgroup (v1's pids hierarchy, or v2
where `pids` is delegated), sets `pids.max`, moves the sandbox's first process in before
it can fork, and kills whatever is left and removes the group after. Where no group can
be made, the run says so in `judge_meta` rather than pretend.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import re
import signal
import time
from pathlib import Path


@functools.lru_cache(maxsize=1)
def pids_base() -> tuple[str | None, str]:
    """(the cgroup folder per-run pids groups are made in, a note) or (None, why not)."""
    try:
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
        groups = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError as exc:
        return None, f"no cgroups to read ({exc.strerror})"
    base = None
    for line in mounts:
        fields = line.split()
        if "-" not in fields:
            continue
        tail = fields[fields.index("-") + 1 :]
        root, point, fstype, opts = fields[3], fields[4], tail[0], tail[-1].split(",")
        if fstype == "cgroup" and "pids" in opts:
            own = [g.split(":", 2)[2] for g in groups if "pids" in g.split(":", 2)[1].split(",")]
        elif fstype == "cgroup2":
            own = [g.split(":", 2)[2] for g in groups if g.startswith("0::")]
        else:
            continue
        if own and os.path.commonpath([own[0], root]) == root:
            base = os.path.normpath(point + own[0][len(root.rstrip("/")) :])
            if fstype == "cgroup" or _has_pids_v2(base):
                break
            base = None
    if base is None:
        return None, "no pids cgroup controller mounted for this process"
    _sweep(base)
    probe = os.path.join(base, f"whileai-{os.getpid()}-probe")
    try:
        os.mkdir(probe)
        try:
            Path(probe, "pids.max").write_text("8")
        finally:
            os.rmdir(probe)
    except OSError as exc:
        return None, f"cannot make a pids cgroup under {base} ({exc.strerror})"
    return base, f"cgroup {base}"


def _has_pids_v2(base: str) -> bool:
    try:
        return "pids" in Path(base, "cgroup.subtree_control").read_text().split()
    except OSError:
        return False


def _sweep(base: str) -> None:
    """Remove the empty groups a grader that was killed left behind."""
    with contextlib.suppress(OSError):
        for name in os.listdir(base):
            m = re.fullmatch(r"whileai-(\d+)-\w+", name)
            if m and not _alive(int(m.group(1))):
                with contextlib.suppress(OSError):
                    os.rmdir(os.path.join(base, name))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_SEQ = itertools.count()


class PidsGroup:
    """One run's pids cgroup: every process the run makes counts against `pids.max`."""

    def __init__(self, base: str, max_pids: int) -> None:
        self.path = os.path.join(base, f"whileai-{os.getpid()}-{next(_SEQ)}")
        os.mkdir(self.path)
        try:
            Path(self.path, "pids.max").write_text(str(max_pids))
        except OSError:
            os.rmdir(self.path)
            raise

    def add(self, pid: int) -> None:
        Path(self.path, "cgroup.procs").write_text(str(pid))

    def pids(self) -> list[int]:
        try:
            return [int(p) for p in Path(self.path, "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def remove(self) -> bool:
        """Kill what is left in the group and remove it; False if it would not go."""
        deadline = time.monotonic() + 5
        while True:
            for pid in self.pids():
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            try:
                os.rmdir(self.path)
                return True
            except FileNotFoundError:
                return True
            except OSError:
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.001)

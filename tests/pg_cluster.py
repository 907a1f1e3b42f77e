"""A real PostgreSQL server for the tests: Debian's `postgresql` binaries, `initdb` and
`pg_ctl` in a temporary directory, listening on a free loopback port.

PostgreSQL refuses to run as root, and CI runs as root: there the cluster belongs to the
`postgres` user the Debian package creates, in a directory of its own under /tmp (not
pytest's base temp dir, which is 0700 for root). `.ci/run` installs the package where it
is missing. One cluster serves the whole session; each test that needs a database of its
own gets a fresh one copied from a template that already holds the schema
(`CREATE DATABASE ... TEMPLATE`, ~0.1 s), so no test sees another's rows.

Durability is off (`fsync`, `synchronous_commit`, `full_page_writes`): a test database
does not outlive the run, and the suite runs on 2 cores.
"""

from __future__ import annotations

import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

from whileai_core.testing import free_port

TEMPLATE = "whileai_template"
DEBIAN = Path("/usr/lib/postgresql")  # /usr/lib/postgresql/15/bin: off PATH


def pg_bin() -> Path | None:
    """The newest installed server's bin directory (or WHILEAI_PG_BIN), if any."""
    override = os.environ.get("WHILEAI_PG_BIN")
    if override:
        return Path(override) if (Path(override) / "initdb").exists() else None
    versions = [p for p in DEBIAN.glob("*/bin") if (p / "initdb").exists()]
    versions.sort(key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0)
    return versions[-1] if versions else None


class PostgresCluster:
    def __init__(self, bin_dir: Path) -> None:
        self.bin = bin_dir
        self.dir = Path(tempfile.mkdtemp(prefix="whileai-pg-"))
        self.port = free_port()
        self.user: str | None = None
        if os.geteuid() == 0:
            self.user = "postgres"
            owner = pwd.getpwnam(self.user)
            os.chown(self.dir, owner.pw_uid, owner.pw_gid)
        self._names = itertools.count(1)

    def _run(self, *args: str) -> None:
        command = [*(["runuser", "-u", self.user, "--"] if self.user else []), *args]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            log = (self.dir / "log").read_text() if (self.dir / "log").exists() else ""
            raise RuntimeError(f"{' '.join(args[:2])} failed: {done.stderr}{done.stdout}{log}")

    def start(self) -> PostgresCluster:
        data = self.dir / "data"
        self._run(str(self.bin / "initdb"), "-D", str(data), "--auth=trust", "-U", "postgres")
        options = (
            f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1"
            " -c max_connections=400 -c fsync=off -c synchronous_commit=off"
            " -c full_page_writes=off"
        )
        self._run(
            str(self.bin / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(self.dir / "log"),
            "-w", "start",
        )  # fmt: skip
        self._make_template()
        return self

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def _admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(sql)

    def _make_template(self) -> None:
        from whileai_core.store.local import Storage

        self._admin(f"CREATE DATABASE {TEMPLATE}")
        scratch = Path(tempfile.mkdtemp(prefix="whileai-pg-template-"))
        try:
            Storage(scratch, database=self.url(TEMPLATE)).close()  # applies the migrations
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def new_database(self, empty: bool = False) -> str:
        """A fresh database holding the current schema and nothing else (or, `empty`, not
        even the schema); its URL."""
        name = f"t{os.getpid()}_{next(self._names)}"
        self._admin(f"CREATE DATABASE {name} TEMPLATE {'template0' if empty else TEMPLATE}")
        return self.url(name)

    def stop(self) -> None:
        try:
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.dir / "data"), "-m", "fast", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

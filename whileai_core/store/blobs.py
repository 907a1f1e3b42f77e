"""Where dataset bodies live: a directory on disk (the default) or an S3-compatible bucket.

`DatasetFiles` (`files.py`) holds every rule about bodies (the limits while an upload
streams, the part -> checking -> published moves, the sweep) and speaks to a `BlobStore`,
which only stores named blobs. Both stores give the same guarantees the rules lean on:

- a `writer` publishes its blob whole or not at all (a temporary file renamed into place;
  an S3 multipart upload, which is invisible until completed), so a cut-off upload never
  leaves a torn body behind;
- `move` makes the moved blob count as just written (its mtime is now), and raises
  FileNotFoundError when there is nothing to move;
- `abandoned` removes partial writes that nobody finished (a temporary file a killed
  upload left; an S3 multipart upload never completed, which costs storage while it lasts);
- `link` is a URL that serves the blob without the server (S3: a presigned GET), or
  None, in which case the server signs a link to itself (`whileai_server/signing.py`).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Protocol

from ..errors import ConfigError

TEMP_SUFFIX = ".upload"  # a write in flight (`<name>.<random>.upload`)


class BlobWriter(Protocol):
    def write(self, chunk: bytes) -> None: ...

    def commit(self) -> None:
        """Publish what was written under the writer's name, replacing what was there."""
        ...

    def abort(self) -> None:
        """Drop what was written (safe to call after a commit: it then does nothing)."""
        ...


class BlobStore(Protocol):
    location: str  # for messages: a directory or s3://bucket/prefix

    def writer(self, name: str) -> BlobWriter: ...

    def move(self, src: str, dst: str) -> None: ...

    def exists(self, name: str) -> bool: ...

    def size(self, name: str) -> int: ...

    def open(self, name: str) -> IO[bytes]:
        """The blob for reading (buffered: `readline` works); FileNotFoundError if absent."""
        ...

    def delete(self, name: str) -> None:
        """Remove the blob if it is there."""
        ...

    def names(self, prefix: str = "") -> Iterator[tuple[str, float]]:
        """(name, mtime) of every published blob whose name starts with `prefix`."""
        ...

    def abandoned(self, before: float) -> int:
        """Remove partial writes begun before `before` (unix time); returns how many."""
        ...

    def link(self, name: str, ttl: float, filename: str) -> str | None: ...


class LocalBlobs:
    """Blobs as files in one directory (mode 0700: rows are private)."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.location = str(directory)
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)

    def writer(self, name: str) -> BlobWriter:
        return _FileWriter(self.dir / name)

    def move(self, src: str, dst: str) -> None:
        os.replace(self.dir / src, self.dir / dst)
        os.utime(self.dir / dst)

    def exists(self, name: str) -> bool:
        return (self.dir / name).exists()

    def size(self, name: str) -> int:
        return (self.dir / name).stat().st_size

    def open(self, name: str) -> IO[bytes]:
        return (self.dir / name).open("rb")

    def delete(self, name: str) -> None:
        (self.dir / name).unlink(missing_ok=True)

    def names(self, prefix: str = "") -> Iterator[tuple[str, float]]:
        for path in self.dir.iterdir():
            if not path.name.startswith(prefix) or path.name.endswith(TEMP_SUFFIX):
                continue
            try:
                yield path.name, path.stat().st_mtime
            except FileNotFoundError:  # removed while we looked
                continue

    def abandoned(self, before: float) -> int:
        removed = 0
        for path in self.dir.glob(f"*{TEMP_SUFFIX}"):
            try:
                if path.stat().st_mtime < before:
                    path.unlink(missing_ok=True)
                    removed += 1
            except FileNotFoundError:
                continue
        return removed

    def link(self, name: str, ttl: float, filename: str) -> str | None:
        return None


class _FileWriter:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.tmp = path.with_name(f"{path.name}.{secrets.token_hex(4)}{TEMP_SUFFIX}")
        self.fh: IO[bytes] | None = self.tmp.open("wb")

    def write(self, chunk: bytes) -> None:
        assert self.fh is not None
        self.fh.write(chunk)

    def commit(self) -> None:
        assert self.fh is not None
        self.fh.close()
        self.fh = None
        os.replace(self.tmp, self.path)

    def abort(self) -> None:
        if self.fh is not None:
            self.fh.close()
            self.fh = None
        self.tmp.unlink(missing_ok=True)


def open_blobs(spec: str | None, root: Path, endpoint: str | None = None) -> BlobStore:
    """`spec` None: `root/datasets`; `s3://bucket/prefix`: that bucket (AWS, or any
    S3-compatible store at `endpoint`); anything else: a directory."""
    if not spec:
        return LocalBlobs(root / "datasets")
    if spec.startswith("s3://"):
        from .blobs_s3 import S3Blobs

        return S3Blobs(spec, endpoint)
    if "://" in spec:
        raise ConfigError(f"--blobs {spec}: expected s3://bucket/prefix or a directory")
    if endpoint:
        raise ConfigError("--blobs-endpoint is for an s3:// --blobs, not a directory")
    return LocalBlobs(Path(spec).expanduser())

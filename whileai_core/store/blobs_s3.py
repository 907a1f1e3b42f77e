"""Dataset bodies in an S3-compatible bucket (`--blobs s3://bucket/prefix`), through boto3
(`pip install 'whileai-toolkit[s3]'`).

Credentials and the region come from boto3's usual places (AWS_ACCESS_KEY_ID and
AWS_SECRET_ACCESS_KEY, AWS_REGION, ~/.aws, an instance role); `endpoint` points it at
another S3-compatible store (MinIO, Ceph, R2, ...), addressed by path as those expect.
Uploads still pass through the server, which counts the limits and quotas as the bytes go
by and writes them as a multipart upload (8 MiB parts, invisible until completed);
downloads are presigned GET links straight to the bucket.

S3 has no rename: `move` is a server-side copy and a delete. A retried upload that lands
in the instant between the two, while a finalize takes the part, is dropped in favour of
the part being checked (on a directory the rename is atomic and the retry wins).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import IO, Any
from urllib.parse import urlsplit

from ..errors import ConfigError
from .blobs import BlobWriter

PART_BYTES = 8 * 1024 * 1024  # S3's parts are 5 MiB at least, but for the last
READ_BUFFER = 1024 * 1024
MISSING = ("404", "NoSuchKey", "NotFound")


class S3Blobs:
    def __init__(self, url: str, endpoint: str | None = None) -> None:
        try:
            import boto3
            from botocore.config import Config
            from botocore.exceptions import BotoCoreError, ClientError
        except ImportError:
            raise ConfigError(
                "--blobs s3://... needs boto3: pip install 'whileai-toolkit[s3]'"
            ) from None
        parts = urlsplit(url)
        if not parts.netloc:
            raise ConfigError(f"--blobs {url}: expected s3://bucket/prefix")
        self.bucket = parts.netloc
        self.prefix = parts.path.strip("/") + "/" if parts.path.strip("/") else ""
        self.location = url.rstrip("/")
        self._errors = (BotoCoreError, ClientError)
        self._client_error = ClientError
        style = {"addressing_style": "path"} if endpoint else {}
        config = Config(signature_version="s3v4", s3=style, retries={"mode": "standard"})
        self.client: Any = boto3.client("s3", endpoint_url=endpoint or None, config=config)
        try:
            self.client.head_bucket(Bucket=self.bucket)
        except self._errors as exc:
            where = f" at {endpoint}" if endpoint else ""
            raise ConfigError(f"--blobs {url}: cannot use the bucket{where} ({exc})") from None

    def _key(self, name: str) -> str:
        return self.prefix + name

    def _missing(self, exc: Exception) -> bool:
        return isinstance(exc, self._client_error) and (
            str(exc.response.get("Error", {}).get("Code")) in MISSING
        )

    def writer(self, name: str) -> BlobWriter:
        return _S3Writer(self.client, self.bucket, self._key(name))

    def move(self, src: str, dst: str) -> None:
        source = {"Bucket": self.bucket, "Key": self._key(src)}
        try:
            self.client.copy(source, self.bucket, self._key(dst))
        except self._client_error as exc:
            if self._missing(exc):
                raise FileNotFoundError(src) from None
            raise
        self.client.delete_object(Bucket=self.bucket, Key=self._key(src))

    def _head(self, name: str) -> dict[str, Any] | None:
        try:
            head: dict[str, Any] = self.client.head_object(Bucket=self.bucket, Key=self._key(name))
        except self._client_error as exc:
            if self._missing(exc):
                return None
            raise
        return head

    def exists(self, name: str) -> bool:
        return self._head(name) is not None

    def size(self, name: str) -> int:
        head = self._head(name)
        if head is None:
            raise FileNotFoundError(name)
        return int(head["ContentLength"])

    def open(self, name: str) -> IO[bytes]:
        try:
            body = self.client.get_object(Bucket=self.bucket, Key=self._key(name))["Body"]
        except self._client_error as exc:
            if self._missing(exc):
                raise FileNotFoundError(name) from None
            raise
        return io.BufferedReader(_Body(body), READ_BUFFER)

    def delete(self, name: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=self._key(name))

    def names(self, prefix: str = "") -> Iterator[tuple[str, float]]:
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=self._key(prefix)
        )
        for page in pages:
            for item in page.get("Contents", []):
                yield item["Key"][len(self.prefix) :], item["LastModified"].timestamp()

    def abandoned(self, before: float) -> int:
        pages = self.client.get_paginator("list_multipart_uploads").paginate(
            Bucket=self.bucket, Prefix=self.prefix
        )
        removed = 0
        for page in pages:
            for upload in page.get("Uploads", []):
                if upload["Initiated"].timestamp() < before:
                    self.client.abort_multipart_upload(
                        Bucket=self.bucket, Key=upload["Key"], UploadId=upload["UploadId"]
                    )
                    removed += 1
        return removed

    def link(self, name: str, ttl: float, filename: str) -> str | None:
        url: str = self.client.generate_presigned_url(
            "get_object",
            Params={
                "Bucket": self.bucket,
                "Key": self._key(name),
                "ResponseContentDisposition": f'attachment; filename="{filename}"',
                "ResponseContentType": "application/x-ndjson",
            },
            ExpiresIn=max(1, int(ttl)),
        )
        return url


class _S3Writer:
    """Chunks in, 8 MiB parts out; a body smaller than one part is one PUT at commit."""

    def __init__(self, client: Any, bucket: str, key: str) -> None:
        self.client, self.bucket, self.key = client, bucket, key
        self.buffer = bytearray()
        self.upload_id: str | None = None
        self.parts: list[dict[str, Any]] = []
        self.done = False

    def write(self, chunk: bytes) -> None:
        self.buffer += chunk
        while len(self.buffer) >= PART_BYTES:
            self._send(bytes(self.buffer[:PART_BYTES]))
            del self.buffer[:PART_BYTES]

    def _send(self, data: bytes) -> None:
        if self.upload_id is None:
            self.upload_id = self.client.create_multipart_upload(
                Bucket=self.bucket, Key=self.key, ContentType="application/x-ndjson"
            )["UploadId"]
        number = len(self.parts) + 1
        sent = self.client.upload_part(
            Bucket=self.bucket, Key=self.key, PartNumber=number, UploadId=self.upload_id, Body=data
        )
        self.parts.append({"ETag": sent["ETag"], "PartNumber": number})

    def commit(self) -> None:
        if self.upload_id is None:
            self.client.put_object(
                Bucket=self.bucket,
                Key=self.key,
                Body=bytes(self.buffer),
                ContentType="application/x-ndjson",
            )
        else:
            if self.buffer:
                self._send(bytes(self.buffer))
            self.client.complete_multipart_upload(
                Bucket=self.bucket,
                Key=self.key,
                UploadId=self.upload_id,
                MultipartUpload={"Parts": self.parts},
            )
        self.buffer.clear()
        self.done = True

    def abort(self) -> None:
        self.buffer.clear()
        if self.upload_id is not None and not self.done:
            self.client.abort_multipart_upload(
                Bucket=self.bucket, Key=self.key, UploadId=self.upload_id
            )
            self.done = True


class _Body(io.RawIOBase):
    """botocore's streaming body as a raw stream, so a BufferedReader can `readline` it."""

    def __init__(self, body: Any) -> None:
        self.body = body

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.body.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self.body.close()
        super().close()

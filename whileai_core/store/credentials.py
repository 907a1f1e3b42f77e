"""Which API key a platform call uses, where it came from, and how it is kept on disk.

Resolution order: the `--api-key` flag; `WHILEAI_DELEGATED_CREDENTIAL` (a short-lived
`zp_dc_...` that `whileai token` mints); `WHILEAI_API_KEY`; the same two under their
legacy `ZEROPROOF_` names; the key `whileai login` saved to WHILEAI_HOME/credentials.json;
and last the one the original SDK saved under its old name, ~/.zeroproof/credentials.json
(new names always win). The file is created with mode 0600 (never
widened by an umask race: it is opened with that mode, then renamed into place). A key
is never shown whole: `mask` keeps just enough to tell two keys apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..errors import ConfigError
from ..settings import LEGACY_PREFIX, home, legacy_home, read

CREDENTIALS_FILE = "credentials.json"
PENDING_LOGIN_FILE = "login-pending.json"


@dataclass(frozen=True)
class ResolvedKey:
    key: str
    source: str  # "--api-key", "WHILEAI_API_KEY", or the credentials file's path


def credentials_path() -> Path:
    return home() / CREDENTIALS_FILE


def pending_login_path() -> Path:
    return home() / PENDING_LOGIN_FILE


def write_private(path: Path, data: dict[str, Any]) -> None:
    """Write JSON readable by the owner only (0600), atomically."""
    from ..jsonl import write_output

    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    # The temporary sibling is created 0600 (mkstemp) and renamed over the file.
    write_output(str(path), orjson.dumps(data, option=orjson.OPT_INDENT_2), file_mode=0o600)


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except orjson.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}: not valid JSON ({exc.msg}); remove it and log in again"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object; remove it and log in again")
    return data


def legacy_credentials_path() -> Path:
    return legacy_home() / CREDENTIALS_FILE


def load_saved() -> dict[str, Any] | None:
    return read_json(credentials_path())


def _saved_key(path: Path, api_url: str | None) -> ResolvedKey | None:
    """The key saved at `path`, if it was issued by `api_url`: pointing WHILEAI_API_URL
    elsewhere must not hand that server your key."""
    saved = read_json(path)
    if not saved or not isinstance(saved.get("api_key"), str) or not saved["api_key"]:
        return None
    issuer = saved.get("api_url")
    if api_url is not None and issuer and str(issuer).rstrip("/") != api_url.rstrip("/"):
        return None
    return ResolvedKey(saved["api_key"], str(path))


def save(api_key: str, *, api_url: str | None, name: str | None, user_id: str | None) -> Path:
    path = credentials_path()
    record = {"api_key": api_key, "api_url": api_url, "name": name, "user_id": user_id}
    write_private(path, {k: v for k, v in record.items() if v is not None})
    return path


def remove() -> bool:
    path = credentials_path()
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def resolve(flag: str | None = None, api_url: str | None = None) -> ResolvedKey | None:
    """The key to send to `api_url`. A saved key is only ever sent to the server it was
    issued by: pointing WHILEAI_API_URL elsewhere must not hand that server your key."""
    if flag:
        return ResolvedKey(flag, "--api-key")
    for prefix in ("WHILEAI_", LEGACY_PREFIX):
        for name in ("DELEGATED_CREDENTIAL", "API_KEY"):
            value = read(prefix + name)
            if value:
                return ResolvedKey(value, prefix + name)
    if credentials_path().exists():
        return _saved_key(credentials_path(), api_url)
    return _saved_key(legacy_credentials_path(), api_url)


def saved_issuer() -> str | None:
    """The server the saved key belongs to (for `whileai status` when it is not used)."""
    saved = load_saved() if credentials_path().exists() else read_json(legacy_credentials_path())
    issuer = saved.get("api_url") if saved else None
    return str(issuer) if issuer else None


def mask(key: str) -> str:
    """`wai_Ab…x9Qz`: the prefix and the last four, never the whole key."""
    if len(key) <= 12:
        return "*" * len(key)
    return f"{key[:6]}…{key[-4:]}"

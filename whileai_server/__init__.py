"""`whileai serve`: the platform for a team, over the same storage code as the embedded store."""

from .app import create_app

__all__ = ["create_app"]

"""JDBC URLs of database sources: their parts, and the URL without its password.

``jdbc:postgresql://h:p/db?user=..`` and ``jdbc:mariadb://h:p/db`` (with or without ``jdbc:``,
credentials in the address or as parameters) are read the same way; each source module
(a connector, ``cbo.connectors``) names its schemes and defaults.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlsplit

from cbo.errors import CboError


@dataclass(frozen=True)
class UrlParts:
    host: str
    port: int
    database: str
    user: str | None
    password: str | None


def url_parts(url: str, schemes: tuple[str, ...], kind: str, default_port: int,
              user: str | None = None, password: str | None = None) -> UrlParts:
    """The parts of a source's URL; ``user`` and ``password`` given here win over the URL's."""
    text = url[len("jdbc:"):] if url.startswith("jdbc:") else url
    parts = urlsplit(text)
    if parts.scheme not in schemes:
        raise CboError(f"not a {kind} URL: {redact(url)}")
    params = dict(parse_qsl(parts.query))
    return UrlParts(
        host=parts.hostname or "localhost",
        port=parts.port or default_port,
        database=unquote(parts.path.lstrip("/")),
        user=user or (unquote(parts.username) if parts.username else None) or params.get("user"),
        password=password or (unquote(parts.password) if parts.password else None) or params.get("password"),
    )


def redact(url: str) -> str:
    """The URL with any password removed, for messages and logs."""
    parts = urlsplit(url[len("jdbc:"):] if url.startswith("jdbc:") else url)
    netloc = parts.netloc.rsplit("@", 1)[-1]
    user = parts.username
    query = "&".join(f"{k}={v}" for k, v in parse_qsl(parts.query) if k != "password")
    # a file's URL (jdbc:sqlite:/path) has no authority: it stays one
    authority = f"//{user + '@' if user else ''}{netloc}" if parts.netloc else ""
    rebuilt = f"{parts.scheme}:{authority}{parts.path}{'?' + query if query else ''}"
    return ("jdbc:" + rebuilt) if url.startswith("jdbc:") else rebuilt

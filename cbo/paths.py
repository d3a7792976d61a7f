"""Where cbo keeps generated data, the local PostgreSQL server and other cached state."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """The cache directory: ``$CBO_CACHE_DIR``, else ``$XDG_CACHE_HOME/cbo``, else ``~/.cache/cbo``."""
    explicit = os.environ.get("CBO_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser().resolve()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return (base / "cbo").resolve()


def scale_factor_label(sf: float) -> str:
    """A stable name for a scale factor: 0.1 -> 'sf0.1', 1 -> 'sf1', 0.01 -> 'sf0.01'."""
    text = f"{sf:g}"
    return f"sf{text}"


def scale_factor_identifier(sf: float) -> str:
    """A SQL-identifier-safe name for a scale factor: 0.1 -> 'tpch_sf0_1'."""
    return "tpch_" + scale_factor_label(sf).replace(".", "_")


def default_catalog() -> Path:
    """The catalog used when none is named: ``$CBO_CATALOG``, else the demo's TPC-H SF 0.1
    federated catalog when ``cbo demo`` has written it. The CLI and ``cbo.Session()`` share it."""
    from cbo.errors import CboError

    if os.environ.get("CBO_CATALOG"):
        return Path(os.environ["CBO_CATALOG"]).expanduser()
    default = cache_dir() / "tpch" / "sf0.1" / "catalogs" / "federated.toml"
    if default.exists():
        return default
    raise CboError(f"no catalog: name one (--catalog FILE, or Session(catalog=FILE)) or set CBO_CATALOG; "
                   f"`cbo demo` writes the default, {default}")

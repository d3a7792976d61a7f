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

"""Every notebook in ``notebooks/`` runs top to bottom (``pytest -m notebooks`` runs them alone).

Each runs in a fresh Jupyter kernel started from this interpreter (a kernel spec written for the
test, so neither a user's own ``python3`` kernel nor an installed Jupyter is needed, only
ipykernel), with the checkout first on ``PYTHONPATH`` and the test session's cache as
``CBO_CACHE_DIR``: the notebooks generate and analyze their TPC-H SF 0.01 there, never in a
user's cache. A cell that raises fails the test with the cell's error; a cell that runs past
``CELL_TIMEOUT`` seconds fails it too. Notebooks run one at a time (each starts its own Spark).
A notebook that starts the test cache's local servers (03-pushdown) stops them in its last
cell; when it fails before, the test stops the ones that were not running before it.

The executed copy of each notebook that ran through is saved in ``build/notebooks/`` (ignored by
git), where the documentation site takes it from (``docs/hooks.py``): the site shows the plans and
plots of this run, and no notebook is executed a second time to build it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.quick.test_drawings import boxes

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
EXECUTED = ROOT / "build" / "notebooks"   # read by docs/hooks.py
CELL_TIMEOUT = 300   # seconds; the first cell may generate data and collect statistics

pytestmark = pytest.mark.notebooks


@pytest.fixture(scope="module")
def kernel_dir(tmp_path_factory) -> Path:
    """A kernel spec that runs ipykernel with this interpreter."""
    kernels = tmp_path_factory.mktemp("kernels")
    spec = kernels / "cbo-test"
    spec.mkdir()
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "cbo tests", "language": "python"}))
    return kernels


@contextlib.contextmanager
def servers_stopped_after() -> Iterator[None]:
    """Stop the test cache's local servers that start inside the block, whatever happens in it
    (a server running before it, e.g. a session fixture's, is left running)."""
    from cbo.paths import cache_dir
    from cbo.connectors.mariadb.server import LocalMariaDB
    from cbo.connectors.postgres.server import LocalPostgres

    servers = [LocalPostgres(cache_dir() / "postgres"), LocalMariaDB(cache_dir() / "mariadb")]
    before = [server.status() is not None for server in servers]
    try:
        yield
    finally:
        for server, running in zip(servers, before):
            if not running:
                server.stop()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path: Path, kernel_dir: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    notebook = nbformat.read(path, as_version=4)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    specs = KernelSpecManager(kernel_dirs=[str(kernel_dir)])
    manager = KernelManager(kernel_name="cbo-test", kernel_spec_manager=specs)
    client = nbclient.NotebookClient(notebook, km=manager, timeout=CELL_TIMEOUT, allow_errors=False,
                                     resources={"metadata": {"path": str(path.parent)}})
    started = time.perf_counter()
    with servers_stopped_after():
        client.execute(env=env)
    elapsed = time.perf_counter() - started
    print(f"{path.name}: {elapsed:.1f} s")
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    # The plan and memo drawings as the notebook shows them: every label inside its box, every
    # box inside the drawing (nothing cut off).
    for output in outputs:
        svg = output.get("data", {}).get("image/svg+xml")
        if svg:
            root = ET.fromstring(svg)
            width, height = float(root.get("width", 0)), float(root.get("height", 0))
            for rect, _ in boxes(svg):
                assert rect["x"] >= 0 and rect["x"] + rect["width"] <= width, f"{path.name}: a box past the edge"
                assert rect["y"] >= 0 and rect["y"] + rect["height"] <= height, f"{path.name}: a box past the edge"
    save_executed(notebook, path.name)


def save_executed(notebook: object, name: str) -> None:
    """Write the executed notebook for the documentation site, atomically (a build reading the
    folder meanwhile sees the old copy or the new one, never half a file)."""
    import nbformat

    EXECUTED.mkdir(parents=True, exist_ok=True)
    partial = EXECUTED / f".{name}.partial"
    nbformat.write(notebook, str(partial))
    partial.replace(EXECUTED / name)

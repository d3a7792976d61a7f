"""Notebooks are committed without outputs: no outputs, no execution counts, no cell ids or
kernel state that changes from run to run (CI executes them; see tests/integration/test_notebooks.py).

Clear one with ``jupyter nbconvert --clear-output --inplace notebooks/NAME.ipynb``, or from
Python: ``python -m tests.quick.test_notebooks_clean`` clears them all.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 5, [p.name for p in NOTEBOOKS]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_committed_without_outputs(path: Path) -> None:
    notebook = json.loads(path.read_text())
    dirty = [index for index, cell in enumerate(notebook["cells"]) if cell["cell_type"] == "code"
             and (cell.get("outputs") or cell.get("execution_count") is not None)]
    assert not dirty, f"{path.name}: cells {dirty} have outputs or execution counts (clear them before committing)"


def clear(path: Path) -> None:
    notebook = json.loads(path.read_text())
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    for notebook_path in NOTEBOOKS:
        clear(notebook_path)
        print("cleared", notebook_path.relative_to(ROOT))

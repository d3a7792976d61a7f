"""Every benchmark script under ``benchmarks/``, found from the files themselves.

A benchmark is a package with a ``__main__.py`` (run as ``python -m benchmarks.NAME``) or a
module that runs as a script (``if __name__ == "__main__"``; ``python -m benchmarks.PKG.MOD``).
Its description is the first sentence of its docstring (the ``__main__.py``'s for a package,
else the package's). Nothing is imported: the files are parsed, so listing starts no Spark and
needs no optional dependency, and a benchmark added on another branch is listed as soon as it
exists.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent
NOT_BENCHMARKS = {"index", "results_readme", "cli", "machine"}   # this package's own helpers


@dataclass(frozen=True)
class Benchmark:
    module: str          # what ``python -m`` takes
    description: str     # the first sentence of its docstring

    @property
    def command(self) -> str:
        return f"python -m {self.module}"


def _docstring(path: Path) -> str:
    try:
        return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    except (OSError, SyntaxError):
        return ""


def _runs_as_script(path: Path) -> bool:
    """Whether the module has an ``if __name__ == "__main__":`` block at its top level."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return False
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare):
            names = [n for n in ast.walk(node.test) if isinstance(n, ast.Name) and n.id == "__name__"]
            constants = [n for n in ast.walk(node.test) if isinstance(n, ast.Constant) and n.value == "__main__"]
            if names and constants:
                return True
    return False


def first_sentence(docstring: str) -> str:
    """The docstring's first paragraph as one line, cut after its first sentence."""
    paragraph = " ".join(docstring.strip().split("\n\n")[0].split())
    # A period inside ``a.b``, or ending "e.g." / "i.e.", does not end the sentence.
    found = re.search(r"(?<=[.!?])(?<!e\.g\.)(?<!i\.e\.)\s", paragraph)
    sentence = paragraph[:found.start()] if found else paragraph
    return sentence.rstrip(":")


def discover(root: Path = ROOT, package: str = "benchmarks") -> list[Benchmark]:
    """The benchmarks under ``root`` (the package ``package``), sorted by module."""
    found: list[Benchmark] = []
    for path in sorted(root.iterdir()):
        if path.name.startswith((".", "_")) or path.name == "results":
            continue
        if path.is_dir() and (path / "__init__.py").exists() or path.is_dir() and (path / "__main__.py").exists():
            main = path / "__main__.py"
            if main.exists():
                text = _docstring(main) or _docstring(path / "__init__.py")
                found.append(Benchmark(f"{package}.{path.name}", first_sentence(text)))
            found.extend(discover(path, f"{package}.{path.name}"))
        elif path.suffix == ".py" and path.stem not in NOT_BENCHMARKS and _runs_as_script(path):
            found.append(Benchmark(f"{package}.{path.stem}", first_sentence(_docstring(path))))
    return sorted(found, key=lambda b: b.module)


def listing(benchmarks: list[Benchmark]) -> str:
    """The index as aligned text: the command, then what it measures."""
    width = max((len(b.command) for b in benchmarks), default=0)
    return "\n".join(f"{b.command:<{width}}  {b.description or '(no docstring)'}" for b in benchmarks)

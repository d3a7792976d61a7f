"""The documentation builds, and what it names exists.

* The site builds with ``mkdocs build --strict`` (``mkdocs.yml``, ``docs/hooks.py``): a broken
  link between pages, a missing anchor or a link to a file the site does not have fails it.
* Every source path the pages name (``cbo/...py``, ``tests/...``, a rule's file name) exists,
  every dotted name of cbo resolves, every ``cbo COMMAND`` is a command (a whole command line in
  a code block parses with cbo's own argument parser), every ``python -m benchmarks...`` module
  exists with the options written after it, every ``--set NAME=VALUE`` is a valid setting, and
  every ``./run`` command exists.
* The settings page lists every optimizer setting, the rules page every rule, and the catalog
  example loads with cbo's catalog reader.
* README.md stays a front page (at most 300 lines), and the pages name ideas, not the numbers of
  seed documents, issues or rounds.

The site is built once per run into a temporary folder; the notebook pages show the executed
copies ``tests/integration/test_notebooks.py`` saved when they match the committed notebooks.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
SOURCE_ROOTS = ("cbo", "stats", "benchmarks", "tests", "notebooks", "docs")


def _text(path: Path) -> str:
    return path.read_text()


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def code_blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of each fenced code block."""
    return re.findall(r"^```(\w*)\n(.*?)^```", text, re.S | re.M)


def inline_code(text: str) -> list[str]:
    """The inline code spans outside fenced blocks (single and double backticks)."""
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return [m.group(2) for m in re.finditer(r"(`{1,2})(?!`)(.+?)(?<!`)\1(?!`)", prose)]


def command_lines(body: str) -> list[str]:
    """A code block's lines with continuations joined, prompts (``$ ``) and comments removed."""
    joined = re.sub(r"\\\n\s*", " ", body)
    lines = []
    for line in joined.splitlines():
        line = line.strip()
        if line.startswith("$ "):
            line = line[2:]
        line = re.sub(r"\s+#.*$", "", line)
        if line:
            lines.append(line)
    return lines


def every_snippet() -> list[tuple[str, str, bool]]:
    """(page, snippet, whole command line?) for every inline span and code-block line."""
    found = []
    for page in PAGES:
        text = _text(page)
        found += [(_name(page), span, False) for span in inline_code(text)]
        for language, body in code_blocks(text):
            if language in ("", "bash", "sh", "console"):
                found += [(_name(page), line, True) for line in command_lines(body)]
    return found


# -- the site -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                             str(ROOT / "mkdocs.yml"), "--site-dir", str(out)],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stdout}\n{result.stderr}"
    return out


def test_the_site_builds_strictly(site: Path):
    home = (site / "index.html").read_text()
    assert "cbo is a cost-based query optimizer" in home            # README.md is the home page
    assert 'href="architecture/"' in home and "docs/architecture.md" not in home   # links rewritten
    for page in (ROOT / "docs").rglob("*.md"):
        relative = page.relative_to(ROOT / "docs").with_suffix("")
        built = site / (relative.parent if relative.name == "index" else relative) / "index.html"
        assert built.is_file(), f"{_name(page)} has no page in the site"
    assert list((site / "benchmarks" / "results").glob("*.png")), "the results' plots are not in the site"


def test_the_site_is_validated_strictly():
    """The build fails on a broken link or anchor: strict mode, and every check at warning level."""
    import logging

    from mkdocs.config import load_config

    config = load_config(str(ROOT / "mkdocs.yml"))
    assert config["strict"]
    links = config["validation"]["links"]
    assert links["not_found"] == links["anchors"] == links["unrecognized_links"] == logging.WARNING
    assert config["validation"]["nav"]["not_found"] == logging.WARNING


def _hooks() -> ModuleType:
    """docs/hooks.py, which decides which copy of a notebook the site shows."""
    spec = importlib.util.spec_from_file_location("cbo_docs_hooks", ROOT / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("notebook", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.stem)
def test_each_notebook_is_a_page_executed_when_the_test_saved_it(site: Path, notebook: Path):
    hooks = _hooks()
    html = (site / "notebooks" / notebook.stem / "index.html").read_text()
    _, executed = hooks.notebook_source(notebook)
    if executed:
        assert "Executed by the test suite" in html
        outputs = [o for cell in json.loads((hooks.EXECUTED / notebook.name).read_text())["cells"]
                   for o in cell.get("outputs", [])]
        if any("image/png" in o.get("data", {}) or "image/svg+xml" in o.get("data", {}) for o in outputs):
            assert "<img" in html or "<svg" in html, f"{notebook.name}: its plots are not in the page"
    else:
        assert "Shown without outputs" in html


# -- what the pages name --------------------------------------------------------------------------

PATH = re.compile(r"(?<![\w./-])((?:" + "|".join(SOURCE_ROOTS) + r")/[\w./-]*[\w/])")


def named_paths() -> list[tuple[str, str]]:
    found = []
    for page, snippet, _ in every_snippet():
        for match in PATH.finditer(snippet):
            path = match.group(1)
            rest = snippet[match.end():match.end() + 2]
            if any(c in rest for c in "<{*") or "<" in path:
                continue   # a pattern (benchmarks/results/tpch-run-<placement>-sf<X>.*), not a file
            found.append((page, path))
    return sorted(set(found))


@pytest.mark.parametrize("page, path", named_paths())
def test_a_named_source_path_exists(page: str, path: str):
    assert (ROOT / path).exists(), f"{page} names {path}, which does not exist"


def bare_file_names() -> list[tuple[str, str]]:
    found = set()
    for page, snippet, whole in every_snippet():
        if not whole and re.fullmatch(r"[\w-]+\.(py|test)", snippet):
            found.add((page, snippet))
    return sorted(found)


@pytest.mark.parametrize("page, name", bare_file_names())
def test_a_named_file_exists(page: str, name: str):
    places = ["cbo", "stats", "benchmarks", "tests"]
    assert any(next((ROOT / p).rglob(name), None) for p in places), f"{page} names {name}, found nowhere"


def dotted_names() -> list[tuple[str, str]]:
    found = set()
    for page, snippet, whole in every_snippet():
        if not whole and re.fullmatch(r"(cbo|stats)(\.\w+)+(\(\))?", snippet):
            found.add((page, snippet.removesuffix("()")))
    return sorted(found)


@pytest.mark.parametrize("page, name", dotted_names())
def test_a_dotted_name_resolves(page: str, name: str):
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            if importlib.util.find_spec(module_name) is not None:
                break
        except ModuleNotFoundError:   # a parent is a module, not a package: a shorter prefix
            continue
    else:
        pytest.fail(f"{page} names {name}: no such module")
    found: object = importlib.import_module(module_name)
    for attribute in parts[cut:]:
        assert hasattr(found, attribute), f"{page} names {name}: {module_name} has no {attribute}"
        found = getattr(found, attribute)


def cbo_commands() -> list[tuple[str, str, bool]]:
    found = set()
    for page, snippet, whole in every_snippet():
        for prefix in ("./run cbo ", "cbo "):
            if snippet.startswith(prefix):
                found.add((page, snippet[len(prefix) - 4:] if prefix != "cbo " else snippet, whole))
    return sorted(found)


@pytest.mark.parametrize("page, line, whole", cbo_commands())
def test_a_cbo_command_exists(page: str, line: str, whole: bool):
    from cbo.app.cli import build_parser

    words = line.split()
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    commands: dict[str, argparse.ArgumentParser] = subparsers.choices
    command = words[1] if words[1:] and words[1] != "--debug" else (words[2] if len(words) > 2 else "")
    if command.isupper() or not command.isidentifier():
        return   # a placeholder (`cbo --debug COMMAND ...`, `./run cbo ...`) or an option (`cbo --help`)
    assert command in commands, f"{page}: `{line}` names no cbo command (known: {', '.join(commands)})"
    if not whole:
        # A span in prose names a command and some of its options, not always a whole command line.
        subparser = commands[command]
        for word in words[words.index(command) + 1:]:   # a command's own commands: `cbo workload run`
            nested = [a for a in subparser._actions if isinstance(a, argparse._SubParsersAction)]
            if not nested or word not in nested[0].choices:
                break
            subparser = nested[0].choices[word]
        known = {option for action in subparser._actions for option in action.option_strings}
        for option in re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", line):
            assert option in known or option == "--debug", f"{page}: `{line}`: cbo {command} has no option {option}"
        return
    try:
        args = shlex.split(line)[1:]
    except ValueError:
        return   # an unfinished quote in a wrapped example: the command word was checked
    try:
        parser.parse_args(args)
    except SystemExit:
        pytest.fail(f"{page}: `{line}` does not parse as a cbo command line")


def settings_named() -> list[tuple[str, str, str]]:
    found = set()
    for page, snippet, _ in every_snippet():
        for name, value in re.findall(r"--set ([a-z_]+)=(\S+)", snippet):
            found.add((page, name, value.strip("\"'")))
    return sorted(found)


@pytest.mark.parametrize("page, name, value", settings_named())
def test_a_named_setting_exists(page: str, name: str, value: str):
    from cbo.settings import OptimizerSettings

    OptimizerSettings().with_values({name: value})   # a CboError names what is wrong


def benchmark_modules() -> list[tuple[str, str, tuple[str, ...]]]:
    found = set()
    for page, snippet, _ in every_snippet():
        match = re.match(r"(?:\.venv/bin/)?python -m ((?:benchmarks|tests)(?:\.\w+)*)(.*)", snippet)
        if match:
            options = tuple(re.findall(r"(?<!\S)(--[a-z][\w-]*)", match.group(2)))
            found.add((page, match.group(1), options))
    return sorted(found)


@pytest.mark.parametrize("page, module, options", benchmark_modules())
def test_a_named_module_runs_and_takes_its_options(page: str, module: str, options: tuple[str, ...]):
    base = ROOT / module.replace(".", "/")
    script = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__main__.py"
    assert script.is_file(), f"{page}: `python -m {module}`: no such module"
    source = "\n".join(p.read_text() for p in script.parent.glob("*.py")) if script.name == "__main__.py" \
        else script.read_text()
    for option in options:
        assert f'"{option}"' in source, f"{page}: `python -m {module}` takes no option {option}"


def test_every_run_command_exists():
    commands = set(re.findall(r"^    (\w+)\)", _text(ROOT / "run"), re.M))
    for page, snippet, _ in every_snippet():
        for command in re.findall(r"\./run (\w+)", snippet):
            assert command in commands, f"{page}: ./run has no command {command}"


# -- completeness ---------------------------------------------------------------------------------

def test_the_settings_page_lists_every_setting():
    from cbo.settings import OptimizerSettings

    listed = set(re.findall(r"^\| `([a-z_]+)` \|", _text(ROOT / "docs/guide/settings.md"), re.M))
    known = {f.name for f in dataclasses.fields(OptimizerSettings)}
    assert listed == known, f"missing: {sorted(known - listed)}; unknown: {sorted(listed - known)}"


def test_the_rules_page_names_every_rule():
    from cbo.memo.search import default_rules

    rules = default_rules(("jdbc", "spark"))
    names = {rule.name for rule in rules.transformations() + rules.implementations()}
    names |= {type(f).__name__ for f in rules.filters}
    page = _text(ROOT / "docs/guide/rules.md")
    missing = sorted(n for n in names if f"`{n}`" not in page and f"**`{n}`**" not in page)
    assert not missing, f"docs/guide/rules.md does not name {missing}"


def test_the_catalog_example_loads(tmp_path: Path):
    from cbo.sources.catalog import load_catalog

    for page in PAGES:
        for language, body in code_blocks(_text(page)):
            if language != "toml":
                continue
            parsed = tomllib.loads(body)
            if "sources" in parsed:
                (tmp_path / "catalog.toml").write_text(body)
                assert load_catalog(tmp_path / "catalog.toml").sources, _name(page)


def test_the_readme_is_a_front_page():
    lines = _text(ROOT / "README.md").splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines; move the rest to docs/"
    for heading in ("## Quick start", "## Where to go next"):
        assert heading in lines


NUMBERS = re.compile(r"(?<![-\w])(seeds? 00\d|issues? #?\d+|rounds? \d+)\b", re.I)   # not --rounds 5


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_pages_name_ideas_not_numbers(page: Path):
    found = NUMBERS.findall(_text(page))
    assert not found, f"{_name(page)} names {found}: name the idea instead"

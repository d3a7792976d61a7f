"""MkDocs hooks that make the site from the repository as it is laid out (``mkdocs.yml``).

The pages under ``docs/`` are written to read well on a repository browser too, so some of
their links leave ``docs/``. The site mirrors those targets and rewrites the links:

* ``README.md`` is the site's home page (``index.md``); its links into ``docs/`` lose the prefix;
* every notebook of ``notebooks/`` is a page at ``notebooks/NAME.ipynb`` (rendered by
  mkdocs-jupyter, which never executes it here). The copy shown is the one the notebook test
  executed and saved in ``build/notebooks/`` (``tests/integration/test_notebooks.py``) when its
  cells' sources are those of the committed notebook, so the site shows the plans and plots of
  a real run; otherwise the committed notebook, without outputs, with a note saying so;
* the plots of ``benchmarks/results/`` are copied to ``benchmarks/results/`` in the site.

A link to any other file outside ``docs/`` is left as written, and ``mkdocs build --strict``
fails on it: source files are named in code spans (``tests/quick/test_docs.py`` checks those).

A page added to ``docs/`` that ``nav`` does not list is appended to the section of its folder
(``docs/guide/x.md`` to "Guide"; a page directly in ``docs/`` to the top level), so a new page
appears in the site without editing ``mkdocs.yml``; list it there to give it its place.
"""

from __future__ import annotations

import json
import logging
import posixpath
import re
from collections.abc import Iterator
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.nav import Navigation, Section
from mkdocs.structure.pages import Page

log = logging.getLogger("mkdocs.hooks.cbo")

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
EXECUTED = ROOT / "build" / "notebooks"   # where tests/integration/test_notebooks.py saves executed copies
RESULTS = "benchmarks/results"

# [text](target) and ![alt](target); the target has no spaces (the docs never need them).
LINK = re.compile(r"(!?\[[^\]]*\]\()([^)\s]+)(\))")

_shown_executed: dict[str, bool] = {}   # notebook page -> executed copy shown


def _sources(path: Path) -> list[tuple[str, str]]:
    cells = json.loads(path.read_text())["cells"]
    return [(cell["cell_type"], "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"])
            for cell in cells]


def notebook_source(path: Path) -> tuple[Path, bool]:
    """The copy of ``notebooks/NAME.ipynb`` the site shows, and whether it is the executed one."""
    executed = EXECUTED / path.name
    if executed.is_file():
        try:
            if _sources(executed) == _sources(path):
                return executed, True
            log.info("%s: the executed copy in %s is of an older version; shown without outputs",
                     path.name, EXECUTED.relative_to(ROOT))
        except (OSError, ValueError, KeyError) as error:
            log.info("%s: the executed copy is unreadable (%s); shown without outputs", path.name, error)
    return path, False


def site_path(repo_path: str) -> str | None:
    """Where a repository file lives in the site, or None when the site does not have it."""
    if repo_path == "README.md":
        return "index.md"
    if repo_path.startswith("docs/"):
        return repo_path[len("docs/"):]
    if repo_path.startswith("notebooks/") and repo_path.endswith(".ipynb"):
        return repo_path
    if repo_path.startswith(RESULTS + "/") and repo_path.endswith(".png"):
        return repo_path
    return None


def rewrite_links(markdown: str, page_repo_path: str, page_site_path: str) -> str:
    """Links written relative to the page's place in the repository, made relative to its place
    in the site. Links that stay inside ``docs/``, absolute URLs and anchors are unchanged."""
    page_dir = posixpath.dirname(page_repo_path)
    site_dir = posixpath.dirname(page_site_path)

    def replace(match: re.Match[str]) -> str:
        target = match.group(2)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith(("#", "/")):
            return match.group(0)
        path, hash_, fragment = target.partition("#")
        repo = posixpath.normpath(posixpath.join(page_dir, path))
        mapped = site_path(repo)
        if mapped is None or (repo.startswith("docs/") and page_repo_path.startswith("docs/")):
            return match.group(0)
        relative = posixpath.relpath(mapped, site_dir or ".")
        return match.group(1) + relative + hash_ + fragment + match.group(3)

    return LINK.sub(replace, markdown)


@event_priority(100)   # before mkdocs-jupyter's on_files, which wraps the notebooks it finds
def on_files(files: Files, config: MkDocsConfig) -> Files:
    readme = (ROOT / "README.md").read_text()
    files.append(File.generated(config, "index.md", content=rewrite_links(readme, "README.md", "index.md")))
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        source, executed = notebook_source(path)
        uri = f"notebooks/{path.name}"
        _shown_executed[uri] = executed
        # A file of its own folder rather than File.generated: mkdocs-jupyter wraps the file and
        # reads its source folder, which a generated file lacks.
        files.append(_mirrored(config, uri, source.parent.parent))
    for plot in sorted((ROOT / RESULTS).glob("*.png")):
        files.append(_mirrored(config, f"{RESULTS}/{plot.name}", ROOT))
    return files


def _mirrored(config: MkDocsConfig, uri: str, folder: Path) -> File:
    """``folder/uri`` as the site's ``uri``."""
    return File(uri, str(folder), config["site_dir"], config["use_directory_urls"])


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    if page.file.src_uri == "index.md" or page.file.abs_src_path is None:
        return markdown   # the home page's links were rewritten with its content
    return rewrite_links(markdown, "docs/" + page.file.src_uri, page.file.src_uri)


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    executed = _shown_executed.get(page.file.src_uri)
    if executed is None:
        return html
    if executed:
        note = ("Executed by the test suite at TPC-H scale factor 0.01 (<code>./run test -m notebooks</code>); "
                "open <code>{}</code> in Jupyter to run it yourself.")
    else:
        note = ("Shown without outputs: this build found no executed copy of <code>{}</code> that matches it. "
                "<code>./run test -m notebooks</code> executes the notebooks and saves them for the site.")
    return f'<div class="admonition note"><p>{note.format(page.file.src_uri)}</p></div>\n' + html


def on_nav(nav: Navigation, config: MkDocsConfig, files: Files) -> Navigation:
    """Append pages that ``nav`` does not list to the section named after their folder."""
    listed = {id(page) for page in nav.pages}
    sections = {_folder_key(item.title): item for item in nav.items if isinstance(item, Section)}
    added = False
    for file in sorted(files.documentation_pages(), key=lambda f: f.src_uri):
        page = file.page
        if page is None or id(page) in listed or file.src_uri == "index.md":
            continue
        if "/" not in file.src_uri:
            nav.items.append(page)
            page.parent = None
        else:
            section = sections.get(_folder_key(file.src_uri.split("/")[0]))
            if section is None:
                continue
            section.children.append(page)
            page.parent = section
        added = True
    if added:
        pages = list(_pages(nav.items))
        for previous, current in zip([None, *pages], pages):
            current.previous_page = previous
            if previous is not None:
                previous.next_page = current
        if pages:
            pages[-1].next_page = None
        nav.pages = pages
    return nav


def _folder_key(name: str | None) -> str:
    return (name or "").strip().lower().rstrip("s")


def _pages(items: list) -> Iterator[Page]:
    for item in items:
        if isinstance(item, Page):
            yield item
        elif isinstance(item, Section):
            yield from _pages(item.children)

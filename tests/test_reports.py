"""A bug report asks which code to change: documentation that retells its words ranks below it."""

from __future__ import annotations

from pathlib import Path

from conftest import init_repo

from cora_ci.build import build
from cora_ci.bundle import open_bundle
from cora_ci.retrieval import search
from cora_ci.retrieval.catalog import catalog

_DOCS = """\
# The development server

Run `manage.py runserver` to start the development server. The development server restarts when
you save a file: the autoreloader watches every template directory listed in the TEMPLATES
setting's DIRS, and every Python module. Add your project's BASE_DIR to DIRS to find templates
in the project directory. The server restarts after each change to settings.py.

## Template directories

DIRS lists the template directories the development server watches and restarts on.
"""

_CODE = """\
def template_changed(sender, file_path, **kwargs):
    for template_dir in get_template_directories():
        if template_dir in file_path.parents:
            reset_loaders()
            return True


def get_template_directories():
    items = set()
    for backend in engines.all():
        items.update(cwd / to_path(dir) for dir in backend.engine.dirs)
    return items
"""

_REPORT = """\
Dev server fails to restart after adding BASE_DIR to TEMPLATES DIRS in settings

Repro steps: start a project, open settings.py, copy the BASE_DIR variable and paste it into the
empty DIRS list of TEMPLATES, then run the development server with manage.py runserver. Save a
file and watch the dev server not restart. Remove BASE_DIR from the template DIRS list again and
the development server once again detects changes and restarts. The template directory change
stops the autoreloader from restarting, whatever file is edited.
"""


def test_a_report_ranks_the_code_to_change_above_documentation_retelling_it(tmp_path: Path) -> None:
    repo = init_repo(
        tmp_path / "repo",
        {
            "docs/runserver.md": _DOCS,
            "web/template/autoreload.py": _CODE,
            "web/utils.py": "def to_path(p):\n    return p\n",
        },
    )
    build(repo, model="none")
    b = open_bundle(repo / ".cora" / "index")
    cat = catalog(b)

    def paths(query: str) -> list[str]:
        return [m.path for m in (cat.meta(h.chunk_id) for h in search(b, query, k=5)) if m is not None]

    assert paths(_REPORT)[0] == "web/template/autoreload.py"
    # a question, not a report, still gets the page that answers it
    assert (
        paths("how do I make the development server restart when templates change")[0] == "docs/runserver.md"
    )

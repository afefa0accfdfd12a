"""Jupyter notebooks: their cells chunked as the script they amount to, outputs left out, line
numbers the notebook's own; found, shown and followed in the working tree like any source file."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path

from conftest import cora, first_result, git, run_chunk
from hypothesis import given, settings
from hypothesis import strategies as st

from cora_ci.chunking import notebook

PNG = base64.b64encode(bytes(range(256)) * 40).decode()  # an image output: 13 KB of base64


def _cell(kind: str, source: list[str], outputs: list[object] | None = None) -> dict[str, object]:
    cell: dict[str, object] = {"cell_type": kind, "metadata": {}, "source": source}
    if kind == "code":
        cell.update(execution_count=1, outputs=outputs or [])
    return cell


def notebook_v4(language: str = "python") -> str:
    """A notebook as Jupyter writes one (nbformat 4, one source line a JSON string, indent 1)."""
    cells = [
        _cell("markdown", ["# Loading the survey\n", "\n", "Reads the raw answers and cleans them."]),
        _cell("code", ["%matplotlib inline\n", "import pandas as pd"]),
        _cell("code", [
            "def load_survey(path):\n", '    """Read the survey answers."""\n', "    frame = pd.read_csv(path)\n",
            "\n", "    return frame.dropna()",
        ], [{"data": {"image/png": PNG, "text/plain": ["<Figure>"]}, "metadata": {}, "output_type": "display_data"}]),
        _cell("raw", ["not indexed raw text"]),
        _cell("code", ["survey = load_survey('answers.csv')\n", "survey.head()"]),
    ]  # fmt: skip
    kernel = {"display_name": language, "language": language, "name": language}
    doc = {"cells": cells, "metadata": {"kernelspec": kernel}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(doc, indent=1) + "\n"


def _row(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), start=1) if needle in line)


def test_a_notebook_is_chunked_as_its_script_row_for_row() -> None:
    nb = notebook_v4()
    r = run_chunk("analysis.ipynb", nb.encode())
    assert (r.lang, r.strategy) == ("python", "structural")
    fn = next(c for c in r.chunks if c.anchors == ["analysis.ipynb::load_survey"])
    assert (fn.kind, fn.start_line, fn.end_line) == (
        "method",
        _row(nb, "def load_survey"),
        _row(nb, "dropna"),
    )
    assert fn.text.splitlines() == [
        "def load_survey(path):", '    """Read the survey answers."""', "    frame = pd.read_csv(path)", "",
        "    return frame.dropna()",
    ]  # fmt: skip
    text = "\n".join(c.text for c in r.chunks)
    assert "# # Loading the survey" in text and "# %matplotlib inline" in text  # markdown, magics: comments
    assert (
        PNG[:40] not in text
        and "image/png" not in text
        and "raw text" not in text
        and '"cell_type"' not in text
    )
    assert sum(len(c.text) for c in r.chunks) < len(nb) / 10  # outputs and metadata left out
    head = next(c for c in r.chunks if c.kind == "file")  # the title cell and the imports' cell
    assert head.text.splitlines()[-3:] == [
        ". . .",
        "# %matplotlib inline",
        "import pandas as pd",
    ]  # rows between: elided
    rows = nb.splitlines()  # each line of the function at the notebook's row holding that source line
    for n, line in zip(range(fn.start_line, fn.end_line + 1), fn.text.splitlines(), strict=True):
        assert json.loads(rows[n - 1].strip().rstrip(",")).removesuffix("\n") == line


_LINE = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"), max_size=30)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["code", "markdown", "raw"]), st.lists(_LINE, max_size=6)), max_size=6)
)
def test_each_source_line_keeps_its_row_and_nothing_else_is_read(cells: list[tuple[str, list[str]]]) -> None:
    """Any cells, any text in them (quotes, escapes, magics, other scripts): each source line is
    at its own row of the notebook, as the script shows it; every other row is left out; outputs
    never reach a chunk."""
    doc = {"cells": [_cell(kind, [line + "\n" for line in src[:-1]] + src[-1:],
                           [{"output_type": "stream", "name": "stdout", "text": ["OUTPUT-MARK\n"]}])
                     for kind, src in cells],
           "metadata": {"kernelspec": {"language": "python"}}, "nbformat": 4, "nbformat_minor": 5}  # fmt: skip
    text = json.dumps(doc, indent=1)
    rows = text.split("\n")
    got = notebook.script(rows)
    assert got is not None and len(got.lines) == len(rows)
    want: dict[int, str] = {}  # a source string is the only thing at this depth (outputs are deeper)
    for n, row in enumerate(rows):
        if row.startswith('    "') and _kind_of(rows, n) != "raw":
            want[n] = json.loads(row.strip().removesuffix(",")).removesuffix("\n")
    assert set(range(len(rows))) - got.excluded == set(want)
    for n, line in want.items():
        kind = _kind_of(rows, n)
        if kind == "markdown":
            assert got.lines[n] == (f"# {line}".rstrip() if line.strip() else "#")
        else:
            assert got.lines[n] == (f"# {line}" if line.lstrip().startswith(("%", "!")) else line)
    r = run_chunk("a.ipynb", text.encode(), min_tokens=0)
    assert "OUTPUT-MARK" not in "\n".join(c.text for c in r.chunks)


def _kind_of(rows: list[str], n: int) -> str:
    """The cell type of the cell whose source holds row `n` (its `cell_type` is above it)."""
    return next(json.loads(rows[m].removeprefix('   "cell_type": ').rstrip(","))
                for m in range(n, -1, -1) if rows[m].startswith('   "cell_type": '))  # fmt: skip


def test_notebooks_of_other_kernels_and_formats() -> None:
    r_nb = notebook_v4("R").replace("def load_survey(path):", "load_survey <- function(path) {")
    assert run_chunk("a.ipynb", r_nb.encode()).lang == "r"
    v3 = {"nbformat": 3, "metadata": {"name": "old"}, "worksheets": [{"cells": [
        {"cell_type": "code", "language": "python", "input": "x = 1\nplot(x)", "outputs": [{"png": PNG}]},
        {"cell_type": "heading", "level": 1, "source": "Results"},
    ]}]}  # fmt: skip
    text = json.dumps(v3, indent=1)
    r = run_chunk("old.ipynb", text.encode(), min_tokens=0)
    shown = "\n".join(c.text for c in r.chunks)
    assert (
        r.lang == "python" and "# x = 1\\nplot(x)" in shown and "# Results" in shown and PNG[:40] not in shown
    )
    for not_one in ("{}", '{"cells": 3}', "[1, 2]", "not json"):  # other .ipynb files: as before
        assert notebook.script(not_one.splitlines()) is None
        assert run_chunk("x.ipynb", not_one).lang == "json"
    compact = json.dumps(json.loads(notebook_v4()))  # one row: no line can keep its number
    assert notebook.script([compact]) is None
    for deep in ("[" * 100_000, '{"cells": ' + "[" * 100_000 + "]" * 100_000 + "}"):  # no recursion error
        assert notebook.script([deep]) is None and run_chunk("deep.ipynb", deep).lang == "json"


def test_a_secret_in_a_cell_is_redacted_and_one_in_an_output_never_read() -> None:
    token = "gh" + "p_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    doc = json.loads(notebook_v4())
    doc["cells"][1]["source"] = ["import pandas as pd\n", f"client = Github('{token}')"]
    doc["cells"][2]["outputs"].append({"output_type": "stream", "name": "stdout", "text": [f"{token}\n"]})
    r = run_chunk("analysis.ipynb", json.dumps(doc, indent=1).encode())
    text = "\n".join(c.text for c in r.chunks)
    assert token not in text and "client = Github(" in text
    found = [d for d in r.diagnostics if d.code == "CORA-SEC-002"]
    assert len(found) == 1 and found[0].line == _row(json.dumps(doc, indent=1), "client = Github")


def test_a_notebooks_function_is_found_and_followed_in_the_working_tree(
    make_repo: Callable[[dict[str, str]], Path], tmp_path: Path
) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"}
    repo = make_repo({"analysis.ipynb": notebook_v4(), "app.py": "def main():\n    return 1\n"})
    out = cora("index", "--model", "none", "-q", cwd=repo, **env)
    assert out.returncode == 0, out.stderr
    nb = (repo / "analysis.ipynb").read_text()
    hit = first_result(repo, "load_survey", env)
    assert hit["anchor"] == "analysis.ipynb::load_survey" and hit["stale"] is None
    assert hit["start_line"] == _row(nb, "def load_survey") and "frame.dropna()" in str(hit["text"])
    moved = nb.replace(
        '"cells": [\n', '"cells": [\n  {"cell_type": "markdown", "metadata": {}, "source": ["x"]},\n'
    )
    (repo / "analysis.ipynb").write_text(moved)  # a cell added above it: rows move, the code does not
    hit = first_result(repo, "load_survey", env)
    assert hit["stale"] == "moved" and hit["start_line"] == _row(moved, "def load_survey")
    assert "frame.dropna()" in str(hit["text"]) and '"' not in str(hit["text"]).splitlines()[0]
    git(repo, "commit", "-qam", "a cell above")
    out = cora("index", "--model", "none", "-q", cwd=repo, **env)
    assert out.returncode == 0, out.stderr
    assert first_result(repo, "load_survey", env)["stale"] is None

"""A class described in words is what its members' code says (`shares.member_share`): a
sentence that several members of a class match answers with the class; one that one member
matches still answers with that member; a bug report is not lifted to classes at all."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from conftest import dedent_files, init_repo

from cora_ci.build import build
from cora_ci.bundle import Bundle, open_bundle
from cora_ci.retrieval import Hit, search
from cora_ci.retrieval.params import PARAMS

MIXER = {
    ".cora.toml": "min_tokens = 0\n",  # each method its own chunk, as in a class of real size
    "mixer.py": """\
        import io


        class StreamMixer:
            def __init__(self) -> None:
                self.output = io.BytesIO()
                self.stdout = io.BufferedWriter(self.output)
                self.stderr = io.BufferedWriter(self.output)

            def stdout_text(self) -> str:
                self.stdout.flush()
                return self.output.getvalue().decode("utf-8", "replace")

            def stderr_text(self) -> str:
                self.stderr.flush()
                return self.output.getvalue().decode("utf-8", "replace")


        class Result:
            def __init__(self, stdout_bytes: bytes, stderr_bytes: bytes, exit_code: int) -> None:
                self.stdout_bytes = stdout_bytes
                self.stderr_bytes = stderr_bytes
                self.exit_code = exit_code

            @property
            def stdout(self) -> str:
                return self.stdout_bytes.decode("utf-8", "replace").replace("\\r\\n", "\\n")

            @property
            def stderr(self) -> str:
                return self.stderr_bytes.decode("utf-8", "replace").replace("\\r\\n", "\\n")

            def exited_cleanly(self) -> bool:
                return self.exit_code == 0
        """,
}


def _bundle(tmp_path: Path) -> Bundle:
    repo = init_repo(tmp_path / "r", dedent_files(MIXER))
    build(repo, model="none")
    return open_bundle(repo / ".cora" / "index")


def _anchors(b: Bundle, hits: list[Hit]) -> list[str | None]:
    t = b.chunks
    return [t.chunk(t.row_of[h.chunk_id]).anchor for h in hits]


def test_a_class_whose_members_a_sentence_matches_comes_before_them(tmp_path: Path) -> None:
    b = _bundle(tmp_path)
    hits = search(b, "Mixes stdout and stderr streams", expand=False)
    assert _anchors(b, hits)[0] == "mixer.py::StreamMixer"
    assert hits[0].explain["members"] > 0
    before = search(b, "Mixes stdout and stderr streams", expand=False, params=replace(PARAMS, members=0.0))
    assert _anchors(b, before)[0] == "mixer.py::StreamMixer.stdout_text"  # a member, without the share


def test_a_sentence_one_member_answers_still_answers_with_that_member(tmp_path: Path) -> None:
    b = _bundle(tmp_path)
    hits = search(b, "whether the exit code says it exited cleanly", expand=False)
    assert _anchors(b, hits)[0] == "mixer.py::Result.exited_cleanly"


def test_a_report_is_not_lifted_to_the_classes_of_what_it_matches(tmp_path: Path) -> None:
    b = _bundle(tmp_path)
    report = (
        "Mixed stdout and stderr streams come back garbled. When I run my command through the test "
        "runner and read the text of both streams afterwards, the stdout text and the stderr text are "
        "the same bytes, decoded twice, and I cannot tell which line was written to which stream, "
        "which makes the output of failing commands very hard to read in our continuous integration logs."
    )
    hits = search(b, report, expand=False)
    assert hits and all(h.explain["members"] is None for h in hits)
    assert _anchors(b, hits)[0] != "mixer.py::StreamMixer"


def test_a_member_the_sentence_names_lends_its_class_nothing(tmp_path: Path) -> None:
    b = _bundle(tmp_path)
    hits = search(b, "how does StreamMixer.stderr_text read the stderr stream", expand=False)
    named, rest = hits[0], {a: h for a, h in zip(_anchors(b, hits), hits, strict=True)}
    assert _anchors(b, hits)[0] == "mixer.py::StreamMixer.stderr_text" and named.explain["definition"]
    lent = rest["mixer.py::StreamMixer"].explain["members"]  # by its other members only
    assert lent is not None and lent < PARAMS.members * named.score


def test_fields_lend_their_type_nothing(tmp_path: Path) -> None:
    """A field declares what a type holds, not what it does: TypeScript interfaces and structs,
    lifted by the declarations of the words a sentence has, rose above the code that uses them."""
    repo = init_repo(tmp_path / "r", dedent_files({
        ".cora.toml": "min_tokens = 0\n",
        "settings.py": '''\
            class RetrySettings:
                retry_count: int = 3
                retry_delay: float = 0.5
                retry_backoff: float = 2.0


            def retry(call, settings):
                delay = settings.retry_delay
                for _ in range(settings.retry_count):
                    if call():
                        return True
                    delay *= settings.retry_backoff
                return False
            ''',
    }))  # fmt: skip
    build(repo, model="none")
    b = open_bundle(repo / ".cora" / "index")
    hits = search(b, "retry count, delay and backoff", expand=False)
    kinds = {a: h for a, h in zip(_anchors(b, hits), hits, strict=True)}
    assert "settings.py::RetrySettings" in kinds and "settings.py::RetrySettings.retry_count" in kinds
    assert kinds["settings.py::RetrySettings"].explain["members"] is None

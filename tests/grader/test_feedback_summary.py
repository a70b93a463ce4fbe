"""grader.feedback's summary table: each graded test's line, a long hint cut where a reader
can tell it was cut and where the whole of it is."""

from nbformat.v4 import new_code_cell, new_notebook

from grader.feedback import CELL_WIDTH, WHOLE_HINT, FeedbackSummary
from grader.notebook_format import error_output
from grader.one_line import head

# as the trial's learner read it: 512 characters, cut at 400 mid-word ("recomputation") before
HINT = ("with dropout inside run_fn the gradients differ from an un-checkpointed run: the "
        "recomputation drew new random numbers, from the caller's current state: nothing "
        "restored forward's state before run_fn ran, or something put the caller's state back "
        "first (a torch.random.fork_rng() block that closed before the recomputation does: "
        "closing restores the caller's state): which state must the recomputation start from, "
        "and what must still hold it when run_fn runs again? (with dropout inside run_fn, x of "
        "shape (4, 5))")


def _summary(hint: str) -> str:
    test = new_code_cell("self_check('CheckpointFunction', CheckpointFunction)")
    test.metadata["nbgrader"] = {"grade": True, "solution": False, "points": 3,
                                 "grade_id": "CheckpointFunction", "score": 0}
    test.outputs = [error_output("GradingError", hint)]
    notebook, _ = FeedbackSummary().preprocess(new_notebook(cells=[test]), {})
    return notebook.cells[0].source.splitlines()[-1]


def test_a_long_hint_is_cut_at_a_clause_with_an_ellipsis_and_says_where_the_rest_is():
    """Trial: is a hint longer than the table's room cut at a clause end (not mid-word), ended
    with "…", and followed by where the whole hint is (its test cell below); while a short
    hint is shown whole, without the note?"""
    row = _summary(HINT)
    shown = row.split("| ✗ ", 1)[1].rstrip(" |")
    assert shown.endswith("…" + WHOLE_HINT)
    cut = shown.removesuffix("…" + WHOLE_HINT).replace("&#x27;", "'").replace("\\_", "_")
    assert HINT.startswith(cut) and HINT[len(cut)] in " ,;:" and cut[-1] != " "
    assert CELL_WIDTH * 3 // 4 < len(cut) + 1 + len(WHOLE_HINT) <= CELL_WIDTH
    short = "checkpoint_sequential(layers, segments=2, x) with 7 layers ran only the first 6"
    assert _summary(short).endswith(f"| ✗ {short.replace('_', chr(92) + '_')} |")


def test_a_cut_without_a_clause_end_in_reach_ends_at_a_word():
    """Where no clause ends in the room (or only near its start), does the cut fall between
    words, never inside one?"""
    text = "word " * 100
    assert head(text, 42) == "word word word word word word word word…"
    assert head("short", 42) == "short"


def test_error_text_in_the_table_reads_as_written_without_the_graders_paths():
    """Instructor trial 2: dave's ImportError hint showed "torch/autograd/<strong>init</strong>.py"
    (Markdown made ``__init__`` bold) and the grader's own environment path. Does the rendered
    table show ``__init__.py``, ``*args`` and ``[x]`` literally, and the path from
    ``.../site-packages/`` on?"""
    from nbconvert.filters.markdown import markdown2html

    from grader.lessons import ROOT

    hint = ("your answer cell stopped with ImportError: cannot import name 'StraightThrough' "
            "from 'torch.autograd' (/tmp/s82/itrial2/.venv/lib/python3.11/site-packages/torch/"
            f"autograd/__init__.py); also f(*args, **kw) and [x] ~y~ a\\b in {ROOT}/lessons/a.py")
    rendered = markdown2html("| a | b | c |\n|---|---|---|\n" + _summary(hint))
    assert "<strong>" not in rendered and "<em>" not in rendered and "<del>" not in rendered
    assert ".../site-packages/torch/autograd/__init__.py" in rendered
    assert "/tmp/s82" not in rendered and str(ROOT) not in rendered
    assert "f(*args, **kw) and [x] ~y~ a\\b in lessons/a.py" in rendered.replace("&#x27;", "'")

"""What an instructor sees while a batch runs: each submission's outcome stays on screen, and the
ETA never reads 0 s while submissions are still running."""

import io

from grader.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def screen(text: str) -> list[str]:
    """The lines a terminal shows: a carriage return and erase-line redraw the current line."""
    lines = [""]
    for part in text.replace("\x1b[2K", "").split("\n"):
        lines[-1] = part.split("\r")[-1]
        lines.append("")
    return [line for line in lines if line]


def test_each_outcome_stays_on_screen_above_the_bar():
    """On a terminal, does every finished submission keep its own line, the live bar below?"""
    terminal = Terminal()
    progress = Progress(3, terminal, tick=0)
    progress.update("alice 00_template: ok")
    progress.update("bob 00_template: kernel-died")
    shown = screen(terminal.getvalue())
    assert shown[0] == "[1/3] alice 00_template: ok"
    assert shown[1] == "[2/3] bob 00_template: kernel-died"
    assert shown[2].startswith("█" * 13 + "░" * 7 + " 2/3 graded")
    progress.update("carol 00_template: ok")
    assert screen(terminal.getvalue())[-1] == "[3/3] carol 00_template: ok"


def test_the_eta_counts_down_and_never_reads_zero_while_one_still_runs():
    """The first submission finished after a minute of start-up, two more 5 s apart each; is
    the ETA for the other two 10 s (the start-up not counted), 4 s six seconds later, and,
    once overdue, 'unknown' with the time since the last finished instead of 0 s; and before
    the third, "estimating", not the first's minute times those left?"""
    progress = Progress(5, io.StringIO(), tick=0)
    progress.began, progress.done, progress.first = 0.0, 1, 60.0
    progress.last = 60.0
    assert progress.eta(at=61.0) == "ETA estimating"
    progress.began, progress.first = -50.0, 10.0
    progress.done, progress.last = 3, 20.0
    assert progress.eta(at=20.0) == "ETA 10s"
    assert progress.eta(at=26.0) == "ETA 4s"
    late = progress.eta(at=95.0)
    assert "0s" not in late.split("still")[0]
    assert late.startswith("ETA unknown: 2 still running, 1m15s since the last finished")
    assert "time limit" in late  # autograde runs cells: one may be running into its limit
    progress.stall_hint = ""  # as `make feedback` has it: it runs no cell
    assert progress.eta(at=95.0) == "ETA unknown: 2 still running, 1m15s since the last finished"


def test_without_a_terminal_each_line_carries_its_eta():
    """In a log file, is there one plain line per submission, without control characters?"""
    log = io.StringIO()
    progress = Progress(2, log, tick=0)
    progress.update("alice 00_template: ok")
    progress.update("bob 00_template: ok")
    lines = log.getvalue().splitlines()
    assert len(lines) == 2 and "\r" not in log.getvalue()
    assert lines[0].startswith("[1/2] alice 00_template: ok  (the rest: ETA ")
    assert lines[1] == "[2/2] bob 00_template: ok  (all done)"


def test_a_submissions_duplicated_cell_ids_do_not_break_the_lines():
    """nbformat repairs a notebook's duplicated cell ids on reading, with a DuplicateCellId
    warning that used to land in the middle of the progress line: is it silent now?"""
    import json
    import warnings

    import nbformat

    from grader.notebook_format import quiet_notebook_warnings

    cell = {"cell_type": "code", "id": "same", "metadata": {}, "outputs": [],
            "execution_count": None, "source": "1"}
    text = json.dumps({"cells": [cell, cell], "metadata": {}, "nbformat": 4,
                       "nbformat_minor": 5})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        quiet_notebook_warnings()
        notebook = nbformat.reads(text, as_version=4)
    assert len({c.id for c in notebook.cells}) == 2
    assert not [w for w in caught if "Duplicate" in type(w.message).__name__]


def test_a_batch_may_ask_for_the_bar_and_no_line_per_submission():
    """Without a line per submission (a regrade of a whole class), does a terminal show only
    the bar, so that the summary after it is what is read; and a log, which has no bar, still
    get autograde's [n/N] line per submission (`make release REGRADE=1 > log`)?"""
    log = io.StringIO()
    progress = Progress(2, log, tick=0, each=False)
    progress.update("alice 00_template: 4/4 points")
    progress.update("bob 00_template: 3/4 points")
    assert log.getvalue().splitlines()[0].startswith(
        "[1/2] alice 00_template: 4/4 points  (the rest: ETA ")
    assert log.getvalue().splitlines()[1] == "[2/2] bob 00_template: 3/4 points  (all done)"
    terminal = Terminal()
    progress = Progress(3, terminal, tick=0, each=False)
    progress.update("alice 00_template: ok")
    shown = screen(terminal.getvalue())
    assert len(shown) == 1 and shown[0].startswith("█" * 6 + "░" * 14 + " 1/3 graded")


def test_feedback_prints_a_line_per_notebook_as_it_is_written(tmp_path, monkeypatch, capsys):
    """Does `make feedback` print a line per notebook as nbgrader finishes it (nbgrader logs
    each one as it starts the next), then the lesson's line, not one line per lesson at the
    end?"""
    from grader import feedback_run, instructor

    for student in ("alice", "bob"):
        folder = tmp_path / "autograded" / student / "00_demo"
        folder.mkdir(parents=True)
        (folder / "00_demo.ipynb").write_text("{}")
    log = "".join(f"[GenerateFeedback | INFO] Converting notebook {tmp_path}/autograded/{student}"
                  f"/00_demo/00_demo.ipynb\n[GenerateFeedback | INFO] Writing 1 bytes\n"
                  for student in ("alice", "bob"))
    started = []

    def streamed(*args, root):
        started.append(args[:2])
        return _Finished(log)

    monkeypatch.setattr(feedback_run, "nbgrader_streamed", streamed)
    made = []
    monkeypatch.setattr(feedback_run, "Progress", lambda *args, **kwargs: made.append(
        Progress(*args, **kwargs)) or made[-1])
    assert instructor.feedback(tmp_path, ["00_demo", "01_none"])
    lines = capsys.readouterr().out.splitlines()
    assert started == [("generate_feedback", "00_demo")]
    assert lines[0].startswith("[1/2] alice 00_demo: feedback written  (the rest: ETA ")
    assert lines[1] == "[2/2] bob 00_demo: feedback written  (all done)"
    assert lines[2].startswith("00_demo: feedback for 2 students in ")
    assert lines[3] == "nothing autograded yet, no feedback (1 lesson): 01_none"
    assert not made[0].stall_hint  # feedback runs no cell: no "time limit" in its ETA


class _Finished:
    """A finished nbgrader process: what it logged, and its exit status 0."""

    def __init__(self, log: str):
        self.stdout = io.StringIO(log)

    def wait(self) -> int:
        return 0


def test_a_note_stays_above_the_bar_and_an_unfinished_bar_is_erased():
    """Does a note (a lesson's feedback done) get a line of its own above the bar, and does
    closing a bar left unfinished (nbgrader failed on a lesson) leave no bar behind?"""
    terminal = Terminal()
    progress = Progress(3, terminal, tick=0, done_word="fed back")
    progress.update("alice 00_template: feedback written")
    progress.note("00_template: feedback for 1 students")
    assert screen(terminal.getvalue())[1:] == ["00_template: feedback for 1 students",
                                               screen(terminal.getvalue())[-1]]
    assert " 1/3 fed back" in screen(terminal.getvalue())[-1]
    progress.close()
    assert screen(terminal.getvalue() + "\n")[-1] == "00_template: feedback for 1 students"


def test_an_eta_over_groups_with_their_own_start_up_does_not_rise_at_each_group(monkeypatch):
    """`make feedback` runs nbgrader once per lesson, each run with its own start-up: with 12
    notebooks in 3 lessons of 4 (4 s start-up, then 1 s a notebook), does its ETA count the
    start-ups still to come, and so fall steadily to the true time left, never rise at a new
    lesson as it did (19 s, then 28 s: issue 48)?"""
    import grader.progress

    clock = [0.0]
    monkeypatch.setattr(grader.progress.time, "monotonic", lambda: clock[0])
    progress = Progress(12, io.StringIO(), tick=0, stall_hint="", groups=3)
    etas = []
    for lesson in range(3):
        clock[0] = lesson * 8.0
        progress.start_group()
        for notebook in range(4):
            clock[0] = lesson * 8.0 + 4.0 + notebook + 1.0
            progress.update(f"notebook {lesson}.{notebook}")
            if 3 <= progress.done < 12:
                etas.append((progress.eta(at=clock[0]), 24.0 - clock[0]))
    assert etas[0][0] == "ETA estimating" or etas[0][0] == f"ETA {etas[0][1]:g}s"
    assert all(said == f"ETA {left:g}s" for said, left in etas[1:])


def test_an_eta_over_groups_of_one_is_given_all_the_same(monkeypatch):
    """With one notebook per lesson (no pace within a lesson to measure), is there still an
    ETA after a few, the start-ups counted in the pace, rather than "estimating" to the end?"""
    import grader.progress

    clock = [0.0]
    monkeypatch.setattr(grader.progress.time, "monotonic", lambda: clock[0])
    progress = Progress(6, io.StringIO(), tick=0, stall_hint="", groups=6)
    for lesson in range(3):
        progress.start_group()
        clock[0] += 5.0
        progress.update(f"notebook {lesson}")
    assert progress.eta(at=clock[0]) == "ETA 15s"


def test_each_autograde_line_says_how_long_its_submission_took():
    """Issue 68: the docs promised seconds per notebook on each autograde line, which showed
    only the score and the ETA. Does the line's label end with the seconds grading took, and
    say nothing for a worker that died (no time reported)?"""
    from grader.batch import took

    assert took(10.6) == "; 11 s" and took(0.0) == "" and took(None) == ""
    log = io.StringIO()
    progress = Progress(1, log, tick=0)
    progress.update("alice 00_template: 4/4 points" + took(10.6))
    assert log.getvalue().splitlines()[0] == "[1/1] alice 00_template: 4/4 points; 11 s  (all done)"

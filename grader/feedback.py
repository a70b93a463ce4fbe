"""Feedback that teaches without showing the hidden tests: a summary table of every graded test
with its points and hint, hidden-test text removed from sources and outputs, and how grading
went (the status cell that heads the autograded notebook, less what is for the instructor)."""

import html
import re
from pathlib import Path

from jinja2 import pass_context
from nbconvert.exporters import HTMLExporter, TemplateExporter
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor

from . import one_line
from .one_line import without_paths
from .faults import REASON_ORDER, STATUSES, Fault, from_dicts, in_reason_order, own_status
from .notebook_format import HIDDEN_TESTS, first_line, is_test_cell, without_hidden_tests

HIDDEN = "[hidden test]"
STATUS_CELL = "autograder-status"
NOT_FOR_LEARNERS = {"suspicious-code"}  # the instructor reads the line and decides
# What a learner reads of each status, one short line (the instructor's wording, with how it was
# done, stays in the formgrader's status cell and the grades CSV); the cells it touched follow.
FOR_LEARNERS = {
    "grader-error": "the grader failed on your notebook; your instructor will grade it again",
    "invalid-notebook": "your file could not be read as a notebook, so every test scored 0",
    "missing-notebook": "no notebook for this lesson was in what you handed in, so every test "
                        "scored 0",
    "notebook-timeout": "your notebook ran out of time; the cells after that point did not run",
    "kernel-died": "Python stopped while one of your cells ran; it was restarted and grading "
                   "went on",
    "memory-limit": "a cell ran out of memory; grading went on after it",
    "timeout": "a cell ran past the time limit and was stopped",
    "stray-process": "a process your code started was still running at the end; it was stopped",
    "output-limit": "a cell printed too much; the rest of its output was dropped",
    "syntax-error": "an answer cell has a syntax error, so Python ran none of it: the tests of "
                    "what it defines scored 0",
    "answer-error": "an answer cell stopped with an error when it ran, so the rest of it did "
                    "not run: the tests of what it left undefined scored 0",
    "unanswered": "every answer was still the lesson's unanswered stub: did you hand in the "
                  "notebook you worked in?",
    "no-nbgrader-metadata": "your notebook had lost the lesson's cell information (pasted into "
                            "a new notebook?): your answers were found by their code and graded",
    "deleted-test-cell": "a test cell was missing: it was put back and graded",
    "markdown-test-cell": "a test cell had been turned into text: it was turned back and graded",
    "edited-test-cell": "a test cell had been edited: the original test was graded",
    "duplicated-test-cell": "a test cell appeared more than once: one copy was graded",
    "edited-locked-cell": "a read-only cell had been changed: the original was used",
    "shadowing-file": "a file you handed in has the name of a module grading uses: it was left "
                      "out",
    "large-files": "files beside your notebook were too large: they were left out",
    "renamed-notebook": "your notebook had another name: it was graded as this lesson's",
    "added-test-cell": "a test was added to the lesson after you fetched your copy of it: it "
                       "was graded too",
    "cell-error": "a cell you wrote (neither an answer nor a test) stopped with an error when "
                  "it was graded; its error is shown under it, and your points are as the tests "
                  "gave them",
}

# How a learner's line names the cells a fault touched, where " (cells)" would not say enough.
CELLS_SAID = {"no-nbgrader-metadata": "; no answer was found for {cells}, so the lesson's "
                                      "unanswered stub was graded in its place (0 points)"}


# Faults whose own message is the learner's line: it names the cell and the limit, and nothing
# that is for the instructor only ("ClipGradientNorm ran past the 30 s limit and was ...").
SAID_WHOLE = {"timeout"}
# An answer cell's grade id ("answer_Outer"), which a learner never sees: they read "Outer".
ANSWER_CELL = re.compile(r"\banswer_(\w+)")


def sentence(text: str) -> str:
    """``text`` ended with a full stop, unless it ends with its own ("... worked in?")."""
    return text if text.endswith((".", "?", "!")) else text + "."


def status_cell(faults: list[Fault]) -> NotebookNode:
    """A markdown cell at the top of the autograded notebook (what the formgrader shows) saying
    how grading went: the status, what it means, and each fault."""
    cell = NotebookNode(cell_type="markdown", id=STATUS_CELL, source=_status_text(faults),
                        metadata={"autograder": {"faults": [f.to_dict() for f in faults]}})
    return cell


def _status_text(faults: list[Fault]) -> str:
    status = own_status(faults)  # as grades.csv has it: a routine note is not the status
    items = "\n".join(f"- {literal(message)}" for message in dict.fromkeys(
        fault.message for fault in in_reason_order(faults)))
    return f"**Grading status: `{status}`**: {STATUSES[status]}.\n\n{items}"


def learner_text(faults: list[Fault]) -> str:
    """The status as a learner reads it: the status and one short line (``FOR_LEARNERS``), and
    a line for each other kind of fault, most serious first."""
    status = own_status(faults)  # as grades.csv has it: a routine note is not the status
    kinds = [status] * (status == "ok") + sorted({fault.kind for fault in faults},
                                                 key=REASON_ORDER.__getitem__)
    kinds.sort(key=lambda kind: kind != status)  # the status heads the list

    def said(kind: str) -> str:
        cells = ", ".join(dict.fromkeys(ANSWER_CELL.sub(r"\1", f.cell) for f in faults
                                        if f.kind == kind and f.cell))
        line = FOR_LEARNERS.get(kind, STATUSES[kind])
        where = CELLS_SAID.get(kind, " ({cells})").format(cells=_plain(cells)) if cells else ""
        if kind in SAID_WHOLE:  # which cell, and the limit it ran past (a name: as written)
            return sentence("; ".join(dict.fromkeys(
                _plain(ANSWER_CELL.sub(r"your answer to \1", f.message))
                for f in faults if f.kind == kind)))
        return sentence(line[:1].upper() + line[1:] + where)

    others = "".join(f"\n- {html.escape(said(kind), quote=False)}" for kind in kinds[1:])
    return (f"**Grading status: `{kinds[0]}`**: {html.escape(said(kinds[0]), quote=False)}"
            + (f"\n{others}" if others else ""))


class LearnerStatus(NbGraderPreprocessor):
    """The grading status in the learner's feedback, in a learner's words (``learner_text``),
    without what is for the instructor only (``NOT_FOR_LEARNERS``). A graded notebook (one with
    a test cell) with nothing else to say reads the same line as an ``ok`` one with a note
    ("Grading status: ok: Graded normally."), whether grading wrote no status cell (a clean
    notebook) or only what is for the instructor (the learner cannot tell the two apart)."""

    def preprocess(self, nb, resources):
        said = False
        for cell in list(nb.cells):
            if cell.get("id") != STATUS_CELL:
                continue
            faults = [fault for fault in from_dicts(cell.metadata.get("autograder", {})
                                                    .get("faults", []))
                      if fault.kind not in NOT_FOR_LEARNERS]
            if faults:
                cell.source, said = learner_text(faults), True
            else:
                nb.cells.remove(cell)
        if not said and any(is_test_cell(cell) for cell in nb.cells):
            nb.cells.insert(0, NotebookNode(cell_type="markdown", id=STATUS_CELL, metadata={},
                                            source=learner_text([])))
        return nb, resources


def hidden_lines(nb) -> list[str]:
    """The non-trivial lines of every hidden-test region in the notebook's test cells,
    markers included, longest first."""
    lines = []
    for cell in nb.cells:
        if is_test_cell(cell):
            for region in HIDDEN_TESTS.findall(cell.source):
                lines += [line.strip() for line in region.splitlines()
                          if len(line.strip()) >= 8]
    return sorted(set(lines), key=len, reverse=True)


def _scrub(value, lines):
    if isinstance(value, str):
        for line in lines:
            for form in {line, html.escape(line), html.escape(line, quote=False)}:
                value = value.replace(form, HIDDEN)
        return value
    if isinstance(value, list):
        return [_scrub(item, lines) for item in value]
    if isinstance(value, dict):
        return type(value)({key: _scrub(item, lines) for key, item in value.items()})
    return value


class HideHiddenTests(NbGraderPreprocessor):
    """Remove hidden-test regions from test cells, and their text from every output (a learner's
    cell may have printed them, e.g. from IPython's input history)."""

    def preprocess(self, nb, resources):
        lines = hidden_lines(nb)
        for cell in nb.cells:
            if is_test_cell(cell):
                cell.source = without_hidden_tests(cell.source).rstrip()
            if cell.cell_type == "code" and lines:
                cell.outputs = [NotebookNode(_scrub(dict(output), lines))
                                for output in cell.outputs]
        return nb, resources


# IPython's name for a cell in a traceback, "Cell In[2], line 1", colours (ANSI codes) and all
_CELL_IN = re.compile(r"Cell(?:\x1b\[[0-9;]*m)*\s(?:\x1b\[[0-9;]*m)*In\[(\d+)\]")


class NumberlessTracebacks(NbGraderPreprocessor):
    """A traceback names a cell as IPython numbered it ("Cell In[2], line 1"), a number the
    feedback page shows nowhere (grading runs only the cells it needs, so the page numbers no
    cell): the cell that raised is "This cell", another cell that ran is named by its first line
    (which a search finds), any other is "A cell"."""

    def preprocess(self, nb, resources):
        by_count = {cell.get("execution_count"): first_line(cell) for cell in nb.cells
                    if cell.cell_type == "code" and cell.get("execution_count")}
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            own = cell.get("execution_count")

            def name(found, own=own) -> str:
                count = int(found[1])
                if count == own:
                    return "This cell"
                return f'The cell "{by_count[count]}"' if by_count.get(count) else "A cell"

            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    output["traceback"] = [_CELL_IN.sub(name, line)
                                           for line in output.get("traceback", [])]
        return nb, resources


def verdict_of(cell) -> tuple[str, str]:
    """(result, hint) shown for a test cell: passed, partial or failed, and the first line."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return "failed", output.get("evalue", "")
        if output.get("output_type") == "stream":
            text = output.get("text", "").strip()
            if text.startswith("✓"):
                return "passed", text[1:].strip().splitlines()[0]
            if text.startswith("◐"):
                return "partial", text[1:].strip().splitlines()[0]
    return "failed", "no verdict"


class FeedbackSummary(NbGraderPreprocessor):
    """A table at the top with every graded test's name, points and hint; points given by hand
    say so, and the instructor's comment on the exercise's answer follows its hint."""

    def preprocess(self, nb, resources):
        rows = []
        by_hand, comments = _by_hand(resources)
        earlier, commented_earlier = _earlier(resources), _earlier(resources, comments=True)
        for cell in nb.cells:
            if not is_test_cell(cell):
                continue
            metadata = cell.metadata.nbgrader
            grade_id = metadata["grade_id"]
            result, hint = verdict_of(cell)
            score, points = metadata.get("score"), metadata.get("points", 0)
            earned = "–" if score is None else f"{float(score):g}"
            hand = " (by hand)" if metadata["grade_id"] in by_hand else ""
            before = hand and metadata["grade_id"] in earlier
            if before:  # the points by hand are not for this submission's result beside them
                hand = f" (by hand, {EARLIER_SUBMISSION})"
            mark = {"passed": "✓", "partial": "◐"}.get(result, "✗")
            comment = comments.get(f"answer_{grade_id}")
            earlier_comment = comment and commented_earlier.get(grade_id) == comment
            said = (f" · Your instructor{' (on an earlier submission)' if earlier_comment else ''}"
                    f": {_cell_text(comment)}" if comment else "")
            rows.append(f"| [`{metadata['grade_id']}`](#{metadata['grade_id']}) | {earned} / "
                        f"{float(points):g}{hand} | {mark} {_cell_text(hint, WHOLE_HINT)}"
                        f"{said} |")
        if rows:
            table = ("## Your graded tests\n\n| Test | Points | Result and hint |\n|---|---|---|\n"
                     + "\n".join(rows))
            summary = NotebookNode(cell_type="markdown", metadata={}, source=table,
                                   id="autograder-summary")
            nb.cells.insert(0, summary)
        return nb, resources


EARLIER_SUBMISSION = "given for an earlier submission"


def _earlier(resources, comments: bool = False) -> set[str] | dict[str, str]:
    """The graded cells of this learner's notebook whose points by hand were given for an
    earlier submission (``earlier_points.earlier``): a regrade changed their automatic points
    since; with ``comments``, those whose comment was given on an earlier submission, with that
    comment (``earlier_points.earlier_comments``)."""
    found = resources.get("nbgrader", {})
    url = found.get("db_url", "")
    if not url.startswith("sqlite:///") or "student" not in found:
        return {} if comments else set()
    from .earlier_points import earlier, earlier_comments

    return (earlier_comments if comments else earlier)(
        Path(url.removeprefix("sqlite:///")).parent, found["student"], found["assignment"])


def _by_hand(resources) -> tuple[set[str], dict[str, str]]:
    """The graded cells of this learner's notebook whose points were given by hand, and the
    comments the instructor wrote, by cell, read from the gradebook GenerateFeedback names
    (nbgrader's own "No response." on an unanswered cell is not the instructor's)."""
    found = resources.get("nbgrader", {})
    if "db_url" not in found:
        return set(), {}
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(found["db_url"]) as gradebook:
        try:
            notebook = gradebook.find_submission_notebook(found["notebook"], found["assignment"],
                                                          found["student"])
        except MissingEntry:
            return set(), {}
        return ({grade.name for grade in notebook.grades if grade.manual_score is not None},
                {comment.name: comment.manual_comment for comment in notebook.comments
                 if comment.manual_comment})


CELL_WIDTH = 400  # characters of a hint or comment in the summary table
WHOLE_HINT = " (the whole hint: at the test cell below)"


def _cell_text(text: str, whole: str = "") -> str:
    """Text safe inside a markdown table cell: one line, no HTML, its pipes escaped (a hint's
    "||g_n||" reads as it does in the terminal); a text longer than ``CELL_WIDTH`` cut at a
    clause or word and ended with "…" and ``whole`` (where the whole of it is)."""
    line = without_paths(text.replace("\n", " "))
    if len(line) > CELL_WIDTH:
        line = one_line.head(line, CELL_WIDTH - len(whole)) + whole
    return literal(line).replace("|", "\\|")


_MARKDOWN = re.compile(r"([\\`*_\[\]~])")


def _plain(text: str) -> str:
    """``text`` whose Markdown punctuation (``__init__``, ``*args``) is backslash-escaped."""
    return _MARKDOWN.sub(r"\\\1", without_paths(text))


def literal(text: str) -> str:
    """Learner or error text inside a markdown cell, shown as written: no path of the grader's
    machine (``one_line.without_paths``), its Markdown punctuation escaped (``__init__.py`` is
    not "<strong>init</strong>.py"), and no HTML."""
    return html.escape(_plain(text))


NO_ALT = "No description has been provided for this image"  # nbconvert's words
_IMAGE = re.compile(r"<img\b(?![^>]*\salt=)", re.IGNORECASE)
_FOCUSABLE = re.compile(r'(<div class="[^"]*\b(?:jp-Cell-inputWrapper|jp-OutputArea-output)\b'
                        r'[^"]*")(?![^>]*\stabindex=)')


class FeedbackHTMLExporter(HTMLExporter):
    """nbconvert's HTML export, less its last step, and with what is the same in every learner's
    notebook rendered once. nbconvert parses the whole page it rendered with BeautifulSoup to
    give each image without one an ``alt`` text (and the lab template's cells a ``tabindex``),
    and writes the page out again: more than half of each feedback page's time
    (``python -m tools.bench feedback``). The same two edits are made on the rendered text here;
    the page is the same document, its markup as the template wrote it
    (tests/grader/test_feedback_run.py compares the two). A lesson's markdown cells and most of
    its code are the same for each learner: each highlighted cell and rendered markdown is
    kept for the next notebook of the same nbgrader run (one exporter per run)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._highlighted: dict[tuple, str] = {}
        self._rendered: dict[tuple, str] = {}

    @pass_context
    def markdown2html(self, context, source):
        """nbconvert's markdown filter, each source rendered once (not one with attachments,
        whose images are the cell's own)."""
        cell = context.get("cell", {})
        if cell.get("attachments"):
            return HTMLExporter.markdown2html(self, context, source)
        key = (source, context.get("resources", {}).get("metadata", {}).get("path", ""))
        if key not in self._rendered:
            self._rendered[key] = HTMLExporter.markdown2html(self, context, source)
        return self._rendered[key]

    def _highlighter(self, highlight):
        """``highlight`` (nbconvert's Highlight2HTML), each source highlighted once for its
        language (and a cell's magics_language, the one metadata key it reads)."""
        def cached(source, language=None, metadata=None):
            key = (source, language or getattr(highlight, "pygments_lexer", None),
                   (metadata or {}).get("magics_language"))
            if key not in self._highlighted:
                self._highlighted[key] = highlight(source, language, metadata)
            return self._highlighted[key]
        return cached

    def from_notebook_node(self, nb, resources=None, **kw):
        # HTMLExporter.from_notebook_node (nbconvert 7.17) up to its BeautifulSoup pass
        langinfo = nb.metadata.get("language_info", {})
        lexer = langinfo.get("pygments_lexer", langinfo.get("name", None))
        highlight_code = self.filters.get(
            "highlight_code", Highlight2HTML(pygments_lexer=lexer, parent=self))
        resources = self._init_resources(resources)
        filter_data_type = WidgetsDataTypeFilter(notebook_metadata=self._nb_metadata,
                                                 parent=self, resources=resources)
        self.register_filter("highlight_code", self._highlighter(highlight_code))
        self.register_filter("filter_data_type", filter_data_type)
        page, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
        page, missing_alt = _IMAGE.subn(f'<img alt="{NO_ALT}"', page)
        if missing_alt:
            self.log.warning("Alternative text is missing on %s image(s).", missing_alt)
        if "jp-Notebook" in page:
            page = _FOCUSABLE.sub(r'\1 tabindex="0"', page)
        return page, resources

"""Mistake ids and categories: a proven hint carries a stable id, kept when it is re-raised with
its inputs; any other failure is put in a category of what is known, never given a name."""

import ast
import importlib
import re
from pathlib import Path

import pytest
import torch

from autograder.checks import case
from autograder.diagnose import diagnose_gradient
from autograder.errors import GradingError
from autograder.exercises import EXERCISES
from autograder.mistakes import MISTAKE_ID, is_mistake_id, mistake_of
from grader.mistake_sections import SECTIONS

ROOT = Path(__file__).resolve().parents[2]
# The lessons whose proven hints carry ids, and the files under autograder/exercises/ that raise
# them (shared/: the checks lesson 00 first used, which raise them with the exercise's name).
NAMED_LESSONS = {"00_template": ("lesson00_template/template.py", "lesson00_template/outer.py",
                                 "shared/jacobian_memory.py",
                                 "lesson00_template/weights.py",
                                 "lesson00_template/square_extremes.py",
                                 "lesson00_template/large_inputs.py",
                                 "lesson00_template/kept.py",
                                 "shared/grad_output.py", "shared/call_state.py",
                                 "shared/reuse.py"),
                 "12_surgery": ("lesson12_surgery/surgery.py",
                                "lesson12_surgery/clip_gradient_norm.py",
                                "lesson12_surgery/surgery_checks.py",
                                "lesson12_surgery/soft_threshold_checks.py",
                                "lesson12_surgery/per_sample_clipping.py")}
LESSON_FILES = {"00_template": "lessons/00_template.py", "12_surgery": "lessons/12_surgery.py"}


def _raised(function):
    with pytest.raises(BaseException) as info:
        function()
    return info.value


def _wrong_gradient():
    diagnose_gradient("x", torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 4.0]))


def test_an_id_is_kept_and_a_mapping_picks_the_hint_s_own():
    """Is ``mistake`` kept as given, and a phrase mapping resolved to the id of the phrase the
    hint contains (none when no phrase matches)?"""
    assert GradingError("a hint", mistake="Square/uses-abs-x").mistake == "Square/uses-abs-x"
    ids = {"clamps each element": "Clip/clamps", "clips columns": "Clip/columns"}
    assert GradingError("Clip clips columns (the norm over dim -2)", mistake=ids).mistake == \
        "Clip/columns"
    assert GradingError("Clip does something else", mistake=ids).mistake == ""


def test_naming_the_inputs_keeps_the_id():
    """Does ``case()`` re-raise a hint with its inputs and the same id?"""
    def fails():
        with case("x of shape (5,)"):
            raise GradingError("Square ignores grad_output", mistake="Square/ignores-grad-output")

    error = _raised(fails)
    assert error.hint == "Square ignores grad_output (with x of shape (5,))"
    assert mistake_of(error) == "Square/ignores-grad-output"


def test_what_is_not_proven_gets_a_category_never_a_name():
    """Is each unproven failure put in the category of what is known?"""
    assert mistake_of(NotImplementedError()) == "not-implemented"
    assert mistake_of(ValueError("boom")) == "raised:ValueError"
    assert mistake_of(_raised(_wrong_gradient)) == "unproven:wrong-value"

    def with_inputs():
        with case("x of shape (3,)"):
            _wrong_gradient()

    assert mistake_of(_raised(with_inputs)) == "unproven:wrong-value"

    def explains_a_learner_error():
        try:
            raise TypeError("forward() takes 2 positional arguments")
        except TypeError as error:
            raise GradingError("Square.forward raised TypeError: ...") from error

    assert mistake_of(_raised(explains_a_learner_error)) == "raised:TypeError"

    def explains_differently():  # a new hint built on a wrong value: not that value's
        try:
            _wrong_gradient()
        except GradingError as error:
            raise GradingError("backward returns None for x when x alone requires grad") \
                from error

    assert mistake_of(_raised(explains_differently)) == "unnamed:check"

    def raised_from_itself():  # `raise error from error` must not loop
        try:
            _wrong_gradient()
        except GradingError as error:
            raise error from error

    assert mistake_of(_raised(raised_from_itself)) == "unproven:wrong-value"
    assert not any(is_mistake_id(category) for category in (
        "not-implemented", "raised:ValueError", "unproven:wrong-value", "unnamed:check"))


def _declared_ids() -> dict[str, list[tuple[str, str]]]:
    """Lesson -> (id or id template, the hint's source) for every GradingError raised in the
    files of the lessons whose hints carry ids; "" for a call without one. A caught error raised
    again with its own id (``mistake=error.mistake``) is counted where it was first raised."""
    found: dict[str, list[tuple[str, str]]] = {}
    for lesson, files in NAMED_LESSONS.items():
        for name in files:
            tree = ast.parse((ROOT / "autograder" / "exercises" / name).read_text())
            for node in ast.walk(tree):
                if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") ==
                        "GradingError"):
                    continue
                hint = ast.unparse(node.args[0])
                given = next((k.value for k in node.keywords if k.arg == "mistake"), None)
                if isinstance(given, ast.Attribute) and given.attr == "mistake":
                    continue  # a caught error raised again with its own id (error.mistake)
                if isinstance(given, ast.Dict):
                    found.setdefault(lesson, []).extend(
                        (value.value, f"{hint} ~ {key.value}")
                        for key, value in zip(given.keys, given.values))
                elif isinstance(given, ast.JoinedStr):  # f"{spec.name}/kebab": the exercise's
                    template = "".join("{spec.name}" if isinstance(v, ast.FormattedValue)
                                       else v.value for v in given.values)
                    found.setdefault(lesson, []).append((template, hint))
                else:
                    found.setdefault(lesson, []).append(
                        (given.value if isinstance(given, ast.Constant) else "", hint))
    return found


def test_every_proven_hint_of_the_named_lessons_has_a_stable_id():
    """Does every GradingError raised by lessons 00 and 12 carry an id, written out (or as
    the exercise's own name and a fixed suffix), shaped Exercise/kebab-case, naming an
    exercise of that lesson?"""
    for lesson, declared in _declared_ids().items():
        exercises = {name for name, e in EXERCISES.items() if e.lesson == lesson}
        for mistake, hint in declared:
            assert mistake, f"{lesson}: GradingError({hint}) has no mistake id"
            exercise, _, _ = mistake.partition("/")
            assert MISTAKE_ID.fullmatch(mistake.replace("{spec.name}", "Spec")), mistake
            assert exercise in exercises | {"{spec.name}"}, mistake


def test_each_id_names_one_mistake():
    """Is each id raised for one hint only (the same constant where two checks prove it), so
    that no two mistakes share a group?"""
    for lesson, declared in _declared_ids().items():
        hints: dict[str, set] = {}
        for mistake, hint in declared:
            hints.setdefault(mistake, set()).add(hint)
        shared = {mistake: sorted(h) for mistake, h in hints.items() if len(h) > 1}
        assert shared == {}, f"{lesson}: ids raised for different hints: {shared}"


def test_each_section_is_a_heading_of_its_lesson_and_each_id_one_that_is_raised():
    """Does every id with a section of its own exist, and is its section a heading of the
    mistake's lesson?"""
    declared = {lesson: {m for m, _ in ids} for lesson, ids in _declared_ids().items()}
    for mistake, title in SECTIONS.items():
        exercise, _, suffix = mistake.partition("/")
        lesson = EXERCISES[exercise].lesson
        assert mistake in declared[lesson] or f"{{spec.name}}/{suffix}" in declared[lesson], \
            mistake
        headings = re.findall(r"^# #{2,3} (.+?)\s*$", (ROOT / LESSON_FILES[lesson]).read_text(),
                              re.MULTILINE)
        assert title in headings, f"{mistake}: no section {title!r} in {lesson}"


@pytest.mark.parametrize("exercise, name, expected", [
    pytest.param("GradientReversal", "alpha forgotten", "GradientReversal/forgets-alpha",
                 marks=pytest.mark.lesson12),
    pytest.param("ClipGradientNorm", "columns clipped", "ClipGradientNorm/clips-columns",
                 marks=pytest.mark.lesson12),
    pytest.param("Outer", "u and v kept in a module global", "Outer/state-shared-between-calls",
                 marks=pytest.mark.lesson00),
    pytest.param("Square", "forward computes x ** 3", "unproven:wrong-value",
                 marks=pytest.mark.lesson00),
    # what the comparison proves of the values (times -1, a constant factor) is named too
    pytest.param("Square", "wrong sign", "Square/wrong-gradient-sign", marks=pytest.mark.lesson00),
    # the checks every exercise runs name what they prove with the exercise's own name
    pytest.param("MySigmoid", "output kept as ctx.y", "MySigmoid/tensor-on-ctx",
                 marks=pytest.mark.lesson01),
    pytest.param("MyReLU", "mask kept on the class", "MyReLU/state-on-class",
                 marks=pytest.mark.lesson01),
    pytest.param("SignClippedSTE", "writes into grad_output", "SignClippedSTE/writes-grad-output",
                 marks=pytest.mark.lesson03),
    # a newcomer instructor's class showed these two hints with no id (review 56)
    pytest.param("FakeQuantize", "no clip mask: round's surrogate applied everywhere, both gradients",
                 "FakeQuantize/grad-x-not-clipped", marks=pytest.mark.lesson03),
    pytest.param("StraightThroughSoftmax", "softmax rebuilt from the saved logits, 1 / tau left out",
                 "StraightThroughSoftmax/missing-one-over-tau", marks=pytest.mark.lesson03),
    # learner trial 80 (issue 68): a backward along another dim than dim, proven by a probe
    pytest.param("Cumsum", "reversed scan always along dim 0", "Cumsum/along-another-dim",
                 marks=pytest.mark.lesson09),
    pytest.param("Cumsum", "flips along dim, the cumsum along dim 0", "Cumsum/along-another-dim",
                 marks=pytest.mark.lesson09),
    pytest.param("ProdOverDim", "products of the others always along dim 0",
                 "ProdOverDim/along-another-dim", marks=pytest.mark.lesson09),
    pytest.param("ProdOverDim", "after-products flipped along dim 0, scanned along dim",
                 "ProdOverDim/along-another-dim", marks=pytest.mark.lesson09),
    # learner trial 81 (issue 68): caught, but its first line named nothing
    pytest.param("CumMax", "each output's gradient to every earlier entry equal to its running "
                 "maximum (a mask of ties)", "CumMax/gradient-to-every-tie",
                 marks=pytest.mark.lesson09),
    # review 81 of lesson 00: rule 2's dtype on the empty and zero-weight paths
    pytest.param("Square", "an empty x's gradient made with torch.zeros(x.shape, device=x.device)",
                 "Square/wrong-gradient-dtype", marks=pytest.mark.lesson00),
    pytest.param("WeightedSum", "a weight of 0 answered with torch.zeros(g.shape, device=g.device)",
                 "WeightedSum/wrong-gradient-dtype", marks=pytest.mark.lesson00),
    pytest.param("Outer",
                 "an empty table's gradients made with torch.zeros(u.shape, device=u.device)",
                 "Outer/wrong-gradient-dtype", marks=pytest.mark.lesson00),
    # instructor trial 81 (issue 68): insight said "cause not proven" for this one
    pytest.param("SwishFunction", "chain rule's inner factor beta left out of grad_x",
                 "SwishFunction/drops-inner-factor", marks=pytest.mark.lesson04),
    # review 81 of lesson 13: an operator registered under another name, raw AttributeError before
    pytest.param("silu_mul", "the operator registered under another name (silu_mul_v2)",
                 "silu_mul/operator-misnamed", marks=pytest.mark.lesson13),
])
def test_a_catalogued_mistake_is_graded_with_its_id(exercise, name, expected):
    """Does grading a catalogued mistake give its id (written out, picked by phrase, or the
    exercise's own name with a shared check's suffix), and an unproven one a category?"""
    from tests.autograder.catalogued import graded_mistake

    assert graded_mistake(exercise, name) == expected




def _ids_given(path: Path) -> list[str]:
    """Every id a GradingError in ``path`` is given: written out, or an f-string template
    with its placeholders kept (``{spec.name}/{mistake}``)."""
    tree = ast.parse(path.read_text())
    parts = path.relative_to(ROOT).with_suffix("").parts
    module = importlib.import_module(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    # NAME = "GroupNormFunction", written here or imported from a sibling module
    constants = {name: value for name, value in vars(module).items()
                 if name.isupper() and isinstance(value, str)}

    def placeholder(value: ast.FormattedValue) -> str:
        name = getattr(value.value, "id", None)
        return str(constants[name]) if name in constants else f"{{{ast.unparse(value.value)}}}"

    found = []
    def text(node) -> str | None:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.JoinedStr):
            return "".join(placeholder(v) if isinstance(v, ast.FormattedValue) else v.value
                           for v in node.values)
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "GradingError":
            given = next((k.value for k in node.keywords if k.arg == "mistake"), None)
            found.extend(map(text, given.values) if isinstance(given, ast.Dict) else [text(given)])
    return found


def test_every_id_in_the_grading_library_is_well_formed():
    """Is every id a check gives, in any lesson or the shared checks, Exercise/kebab-case with a
    real exercise (or the exercise's own name at run time), so that no typo makes a stray group?
    A suffix computed at run time is checked where it is chosen, by the lesson's own tests."""
    paths = [*(ROOT / "autograder").glob("*.py"), *(ROOT / "autograder" / "exercises").rglob("*.py")]
    for path in paths:
        for mistake in filter(None, _ids_given(path)):
            exercise, _, suffix = mistake.partition("/")
            assert exercise in EXERCISES or exercise.endswith("name}"), f"{path.name}: {mistake}"
            if "{" not in suffix:
                assert MISTAKE_ID.fullmatch(f"Exercise/{suffix}"), f"{path.name}: {mistake}"


class _SavesAFlag(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x, True)
        return x * x

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


@pytest.mark.filterwarnings("ignore:.*should not be instantiated:DeprecationWarning")
def test_the_shared_checks_name_the_facts_they_prove():
    """Does each fact a shared check proves (an instance for the class, not a Function, a
    non-tensor saved, a gradient of the wrong shape or device, reading past
    ctx.needs_input_grad) carry an id of the exercise, and the learner's other errors none?"""
    from autograder.checks import Spec, check_is_function, run_forward
    from autograder.explain import _explain_index_error, _explain_runtime_error

    spec = Spec("Square", ("x",), torch.square)
    x = torch.ones(3, dtype=torch.float64, requires_grad=True)
    assert mistake_of(_raised(lambda: check_is_function(_SavesAFlag(), spec))) == \
        "Square/instance-not-class"
    assert mistake_of(_raised(lambda: check_is_function(torch.square, spec))) == \
        "Square/not-a-function-class"
    assert mistake_of(_raised(lambda: run_forward(_SavesAFlag, spec, {"x": x}))) == \
        "Square/saves-non-tensor"
    shape = RuntimeError("Function SquareBackward returned an invalid gradient at index 0 - got "
                         "[4] but expected shape compatible with [3]")
    device = RuntimeError("Function SquareBackward returned an invalid gradient at index 0 - "
                          "expected device cpu but got meta")
    other = RuntimeError("something else went wrong")
    assert [mistake_of(_explain_runtime_error(spec, "backward", error, {"x": x}))
            for error in (shape, device)] == ["Square/wrong-gradient-shape",
                                              "Square/gradient-on-wrong-device"]
    assert _explain_runtime_error(spec, "backward", other, {"x": x}).mistake == ""

    def reads_past_the_end():
        try:
            (True,)[1]  # as `ctx.needs_input_grad[1]` raises
        except IndexError as error:
            raise _explain_index_error(spec, error, {"x": x}) from error

    assert mistake_of(_raised(reads_past_the_end)) == "Square/reads-past-needs-input-grad"

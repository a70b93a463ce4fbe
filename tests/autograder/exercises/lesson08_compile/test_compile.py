"""Lesson 08 (torch.func and torch.compile): grading LogSumExp and softplus, right and wrong.

Every softplus answer defines ``autograd_course::softplus`` again, and the dispatcher runs the
newest definition: each test loads its answer right before grading it. The catalogued answers
(unusual and mistakes) go through tests/autograder/test_catalogue.py, which loads each the same way.
"""

import pytest
import torch

from autograder import grading
from autograder.exercises.lesson08_compile.lse_inputs import LSE_CASES
from tools.catalogue import lesson08_compile
from tools.catalogue.lesson08_compile.answers import SOFTPLUS
from tools.solutions import _setup_and_answer_cells

pytestmark = pytest.mark.lesson08
NAMES = ["LogSumExp", "softplus"]
UNUSUAL = [entry for entry in lesson08_compile.UNUSUAL if entry.exercise in NAMES]
MISTAKES = [entry for entry in lesson08_compile.MISTAKES if entry.exercise in NAMES]


def fresh_solution(name: str):
    """The lesson's own answer, defined now (so that its operator is the current one)."""
    names: dict = {"__name__": "lesson_08_compile"}
    for source in _setup_and_answer_cells("08_compile"):
        exec(compile(source, "lessons/08_compile.py", "exec"), names)  # noqa: S102
    return names[name]


def test_every_mistake_is_listed_for_both_exercises():
    """Are there at least three unusual answers per exercise, and an nbgrader mistake each?"""
    for name in NAMES:
        assert sum(u.exercise == name for u in UNUSUAL) >= 3
        assert any(m.exercise == name and m.nbgrader for m in MISTAKES)


def test_cases_include_negative_dims_and_a_zero_size_batch():
    """Do the hidden cases cover negative dims, a 1-d input and a 0-size dimension?"""
    assert any(dim < 0 for _, dim in LSE_CASES)
    assert any(len(shape) == 1 for shape, _ in LSE_CASES)
    assert any(0 in shape for shape, _ in LSE_CASES)


def test_rerunning_the_operator_cell_keeps_grading_right():
    """Does a second run of the answer cell grade as well as the first?"""
    fresh_solution("softplus")
    again = fresh_solution("softplus")
    grading.self_check("softplus", again)
    grading.grade("softplus", again)


def test_stale_handle_is_named():
    """Is a softplus handle whose operator was redefined since told to re-run its cell?"""
    stale = fresh_solution("softplus")
    fresh_solution("softplus")
    passed, message = grading.verdict("softplus", stale)
    assert not passed and "softplus is an older definition" in message.splitlines()[0]


def test_stub_is_not_implemented():
    """Does the learner's untouched stub read as not implemented, not as a mistake?"""
    @torch.library.custom_op("autograd_course::softplus", mutates_args=())
    def softplus(x: torch.Tensor, beta: float) -> torch.Tensor:
        raise NotImplementedError()

    passed, message = grading.verdict("softplus", softplus)
    assert not passed and "not implemented yet" in message


SEALED_SCRIPT = """
import json, os, sys
import IPython.display
published = []
IPython.display.publish_display_data = published.append
import autograder, autograder.seal
autograder.seal.boot()
from tools.solutions import _setup_and_answer_cells
results = []
for run in range(2):  # the answer cells run twice, as when a learner re-runs them
    names = {"__name__": "__main__"}
    for source in _setup_and_answer_cells("08_compile"):
        exec(compile(source, "lesson", "exec"), names)
    for name in ("LogSumExp", "softplus", "squared_norm"):
        try:
            autograder.grade(name, names[name])
            results.append("ok")
        except AssertionError as error:
            results.append(str(error).splitlines()[0])
print(json.dumps({"results": results, "published": published}))
"""


@pytest.mark.slow
def test_sealed_grading_compiles_and_registers(tmp_path):
    """In a sealed kernel (autograder.seal.boot), do torch.library registration, opcheck and
    torch.compile run under grade(), twice, with signed passing verdicts and no tampering
    reported? (A subprocess: boot rebinds autograder.grade for good.)"""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    from autograder import seal
    from autograder.verdict import read_verdicts

    root = Path(__file__).resolve().parents[4]
    key = b"k" * 32
    key_file = tmp_path / "key"
    key_file.write_bytes(key)
    env = dict(os.environ, AUTOGRADER_DEVICE="cpu", PYTHONPATH=os.pathsep.join(
        [str(root), os.environ.get("PYTHONPATH", "")]))
    env[seal.KEY_FILE_VARIABLE] = str(key_file)
    done = subprocess.run([sys.executable, "-c", SEALED_SCRIPT], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["results"] == ["ok"] * 6
    verdicts = [read_verdicts([{"output_type": "display_data", "data": bundle}], key)
                for bundle in result["published"]]
    assert [passed for v in verdicts for passed, _ in v.values()] == [True] * 6


def test_stale_handle_is_named_without_being_called():
    """Is a redefined operator's old handle named without calling it? (Its registration is
    destroyed: a call reads freed memory, the cause of a random std::bad_alloc.)"""
    stale = fresh_solution("softplus")
    fresh_solution("softplus")

    def dangling(*args, **kwargs):
        raise AssertionError("the stale handle was called")

    stale._opoverload = dangling
    passed, message = grading.verdict("softplus", stale)
    assert not passed and "softplus is an older definition" in message.splitlines()[0], message


def test_float32_is_named_only_where_it_is_the_answers_values():
    """Is a softplus computed in float32 with log(1 + e^z) (neither float32's stable values nor
    float64's log form in the left tail) told what differs where, and no cause?"""
    from tools.catalogue import edit, load

    code = edit(SOFTPLUS, (
        "    z = beta * x\n    return (z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))) / beta",
        "    z = beta * x.float()\n    return ((z.clamp(min=0) + torch.log(1 + torch.exp("
        "-z.abs()))) / beta).to(x.dtype)"))
    passed, message = grading.verdict("softplus", load("softplus", code))
    first = message.splitlines()[0]
    assert not passed and first.startswith("softplus loses the left tail: at x = "), first
    assert first.endswith("about five significant digits far on the left (a relative 1e-5 "
                          "here)"), first


@pytest.mark.parametrize("exercise, name, expected", [
    ("LogSumExp", "old form: forward(ctx, ...) without setup_context",
     "LogSumExp/no-setup-context"),
    ("LogSumExp", "forward takes ctx in the setup_context form", "LogSumExp/forward-takes-ctx"),
    ("LogSumExp", "generate_vmap_rule missing", "LogSumExp/no-vmap-rule"),
    ("LogSumExp", "no jvp staticmethod", "LogSumExp/no-jvp"),
    ("LogSumExp", "backward without unsqueeze: grad_output meets x along its last dim",
     "LogSumExp/grad-output-not-unsqueezed"),
    ("LogSumExp", "jvp reads ctx.saved_tensors kept only with save_for_backward",
     "LogSumExp/jvp-without-save-for-forward"),
    ("LogSumExp", "jvp keeps the reduced dim", "LogSumExp/jvp-tangent-shape"),
    ("LogSumExp", "unstable log(sum(exp(x)))", "LogSumExp/overflows"),
    ("LogSumExp", "shifted by the whole tensor's maximum", "LogSumExp/max-not-per-row"),
    ("LogSumExp", "backward through a naive softmax, exp(x) / sum(exp(x))",
     "LogSumExp/backward-softmax-overflows"),
    ("LogSumExp", "jvp through a naive softmax, exp(x) / sum(exp(x))",
     "LogSumExp/jvp-softmax-overflows"),
    ("LogSumExp", "backward unsqueezes at -1 instead of ctx.dim",
     "LogSumExp/backward-assumes-last-dim"),
    ("LogSumExp", "jvp without save_for_forward: tensors kept as ctx attributes",
     "LogSumExp/tensor-on-ctx"),
    ("LogSumExp", "jvp without the softmax weights", "unnamed:check"),
    ("softplus", "a plain Python function, not a custom operator", "softplus/not-a-custom-op"),
    ("softplus", "forward writes into x (x.mul_(beta)) with mutates_args=()",
     "softplus/mutates-input"),
    ("softplus", "no register_fake", "softplus/no-fake"),
    ("softplus", "no register_autograd", "softplus/no-register-autograd"),
    ("softplus", "backward returns only grad_x", "softplus/gradient-count"),
    ("softplus", "a gradient returned for the float beta", "softplus/gradient-for-beta"),
    ("softplus", "the operator's setup_context with parameters named (ctx, inp, out)",
     "softplus/setup-context-parameter-names"),
    ("softplus", "a backward registered without setup_context", "softplus/no-setup-context"),
    ("softplus", "a fake implementation with the wrong dtype", "softplus/fake-mismatch"),
    ("softplus", "softplus that overflows for large beta * x", "softplus/overflows"),
    ("softplus", "the stable form written with log, not log1p: 0.0 at beta * x = -40",
     "softplus/log-without-log1p"),
    ("softplus", "computed in float32 inside the operator, with log1p",
     "softplus/computes-in-float32"),
    ("softplus", "backward times beta (the factors beta did not cancel)",
     "softplus/extra-beta-factor"),
    ("softplus", "backward over beta (the chain rule's inner beta forgotten)",
     "softplus/missing-inner-beta"),
    ("softplus", "backward sigmoid(x): beta forgotten inside the sigmoid",
     "softplus/forgets-beta-in-sigmoid"),
    ("softplus", "setup_context keeps x as a ctx attribute", "softplus/tensor-on-ctx"),
    ("softplus", "the stable form differentiated by hand, (z >= 0) and sign(0) = 0",
     "softplus/slope-at-kink"),
    ("squared_norm", "a plain Python function, not a custom operator",
     "squared_norm/not-a-custom-op"),
    ("squared_norm", "no register_fake", "squared_norm/no-fake"),
    ("squared_norm", "backward returns only grad_x", "squared_norm/gradient-count"),
    ("squared_norm", "a fake implementation of x's shape", "squared_norm/fake-mismatch"),
    ("squared_norm", "no batching rule: vmap falls back to a per-sample loop",
     "squared_norm/no-batching-rule"),
    ("squared_norm", "the rule does not shift a non-negative dim past the batch dim",
     "squared_norm/dim-not-shifted"),
    ("squared_norm", "a rule that loops over the samples (the fallback by hand)",
     "squared_norm/rule-loops-over-samples"),
])
def test_a_proven_mistake_is_graded_with_its_id(exercise, name, expected):
    """Does each mistake a probe proves in lesson 08 (the Function's form, jvp's saves and
    shape, an overflow, the dim, the operator's registrations, fake and batching rule) carry a
    stable id, so that a class's failures group by it?"""
    from tests.autograder.catalogued import graded_mistake

    assert graded_mistake(exercise, name) == expected


def test_a_slope_wrong_at_z_0_alone_is_not_called_an_e_z_switch():
    """Is a slope of 1 at beta * x = 0 only (e^0 = 1, but also a one-sided slope at the stable
    form's kink) left unnamed by the left-tail shortcut probe, which needs a failing point with
    z < 0, while a slope e^z below -10 is still named there?"""
    from autograder.errors import GradingError
    from autograder.exercises.lesson08_compile.left_sweep import Z, _name_shortcut

    x = Z.clone()
    truth = torch.sigmoid(x)
    kink = torch.where(x == 0, torch.ones_like(x), truth)
    _name_shortcut(x, x, kink, x, truth, 1.0, torch.float64, 1e-12)  # the value's truth unused
    switch = torch.where(x < -10, torch.exp(x), truth)
    with pytest.raises(GradingError, match=r"switches to e\^z .* at beta \* x = -10.125"):
        _name_shortcut(x, x, switch, x, truth, 1.0, torch.float64, 1e-12)

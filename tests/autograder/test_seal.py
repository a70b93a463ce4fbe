"""autograder.seal: restoring tampered functions, signing verdicts, and reading them back."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from autograder import diagnose, grading, seal
from autograder.errors import GradingError
from autograder.seal import Snapshot, make_sealed_grade
from autograder.verdict import VERDICT_MIME, read_verdicts, sign
from tools.solutions import solution
from tests.autograder.passing import passes

KEY = b"k" * 32
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def trusted():
    """The namespaces a sealed kernel protects (importing torch._dynamo once, ~1 s)."""
    return seal._trusted_namespaces()


@pytest.fixture
def snapshot(trusted):
    return Snapshot(trusted)


def display(bundle: dict, output_type="display_data") -> dict:
    """A notebook output carrying ``bundle`` as its data."""
    return {"output_type": output_type, "data": bundle, "metadata": {}}


def signed(exercise, passed, message, key=KEY) -> dict:
    payload = seal.verdict_payload(exercise, passed, message)
    return display({VERDICT_MIME: {"payload": payload, "signature": sign(key, payload)}})


class TestSnapshot:
    """Snapshot.restore: every trusted binding and function body put back, and reported."""

    def test_nothing_changed(self, snapshot):
        """Does restore report nothing when nothing changed?"""
        assert snapshot.restore() == []

    def test_replaced_allclose(self, snapshot, monkeypatch):
        """Is a replaced torch.allclose put back and reported?"""
        original = torch.allclose
        monkeypatch.setattr(torch, "allclose", lambda *args, **kwargs: True)
        assert snapshot.restore() == ["torch.allclose"]
        assert torch.allclose is original

    def test_replaced_gradcheck(self, snapshot, monkeypatch):
        """Is a replaced torch.autograd.gradcheck put back and reported?"""
        original = torch.autograd.gradcheck
        monkeypatch.setattr(torch.autograd, "gradcheck", lambda *args, **kwargs: True)
        assert snapshot.restore() == ["torch.autograd.gradcheck"]
        assert torch.autograd.gradcheck is original

    def test_replaced_code(self, snapshot, monkeypatch):
        """Is a grading function whose __code__ was swapped for a no-op put back and reported?"""
        function = diagnose.diagnose_gradient
        original = function.__code__
        monkeypatch.setattr(function, "__code__", (lambda *args, **kwargs: None).__code__)
        assert function("x", None, torch.zeros(1)) is None  # the swap really disarmed it
        assert snapshot.restore() == ["autograder.diagnose.diagnose_gradient"]
        assert function.__code__ is original
        with pytest.raises(GradingError):
            function("x", None, torch.zeros(1))

    def test_replaced_defaults(self, snapshot, monkeypatch):
        """Is a loosened default tolerance (rtol=1e9) put back and reported?"""
        function = diagnose.diagnose_gradient
        defaults = dict(function.__kwdefaults__)
        assert defaults["rtol"] == 1e-5
        monkeypatch.setattr(function, "__kwdefaults__", {**defaults, "rtol": 1e9, "atol": 1e9})
        assert snapshot.restore() == ["autograder.diagnose.diagnose_gradient"]
        assert function.__kwdefaults__ == defaults

    def test_rebound_method(self, snapshot, monkeypatch):
        """Is a method replaced on torch.Tensor put back?"""
        original = vars(torch.Tensor)["backward"]
        monkeypatch.setattr(torch.Tensor, "backward", lambda self, *args, **kwargs: None)
        assert snapshot.restore() == ["Tensor.backward"]
        assert vars(torch.Tensor)["backward"] is original

    def test_added_class_attribute(self, snapshot):
        """Is an attribute added to a trusted class (an override) removed and reported?"""
        torch.autograd.Function.apply_override = staticmethod(lambda *args: None)
        try:
            assert snapshot.restore() == ["Function.apply_override"]
            assert not hasattr(torch.autograd.Function, "apply_override")
        finally:
            if "apply_override" in vars(torch.autograd.Function):
                delattr(torch.autograd.Function, "apply_override")

    def test_small_namespace(self, monkeypatch):
        """Does a snapshot of one module watch that module only?"""
        only_torch = Snapshot([torch])
        monkeypatch.setattr(torch, "allclose", lambda *args, **kwargs: True)
        monkeypatch.setattr(torch.autograd, "gradcheck", lambda *args, **kwargs: True)
        assert only_torch.restore() == ["torch.allclose"]


class TestReadVerdicts:
    """read_verdicts: believe correctly signed verdicts only."""

    def test_signed(self):
        """Is a correctly signed verdict read back, from display data and execute results?"""
        outputs = [signed("Square", True, "Square: all hidden checks passed"),
                   dict(signed("MyReLU", False, "hint\ndetails"), output_type="execute_result")]
        assert read_verdicts(outputs, KEY) == {
            "Square": (True, "Square: all hidden checks passed"),
            "MyReLU": (False, "hint\ndetails")}

    def test_wrong_key(self):
        """Is a verdict signed with another key ignored?"""
        assert read_verdicts([signed("Square", True, "ok", key=b"other")], KEY) == {}

    def test_forged_payload(self):
        """Is a payload edited after signing (failed turned into passed) ignored?"""
        output = signed("Square", False, "hint")
        sealed = output["data"][VERDICT_MIME]
        sealed["payload"] = sealed["payload"].replace("false", "true")
        assert read_verdicts([output], KEY) == {}

    @pytest.mark.parametrize("output", [
        {"output_type": "stream", "name": "stdout", "text": "✓ Square: all hidden checks passed"},
        {"output_type": "error", "ename": "GradingError", "evalue": "x", "traceback": []},
        {"output_type": "display_data"},
        {"output_type": "display_data", "data": None},
        {"output_type": "display_data", "data": ["not", "a", "dict"]},
        display({"text/plain": "passed"}),
        display({VERDICT_MIME: "passed"}),
        display({VERDICT_MIME: {"payload": '{"passed": true}'}}),
        display({VERDICT_MIME: {"payload": 1, "signature": 2}}),
        display({VERDICT_MIME: {"payload": "{}", "signature": "é" * 64}}),
        display({VERDICT_MIME: {"payload": "\ud800", "signature": "0" * 64}}),
        {"data": {VERDICT_MIME: {"payload": "{}", "signature": "0" * 64}}},
        "not an output",
    ])
    def test_garbage_is_ignored(self, output):
        """Is anything that is not a correctly signed verdict ignored without raising?"""
        outputs = [output, signed("Square", True, "ok")]
        assert read_verdicts(outputs, KEY) == {"Square": (True, "ok")}


SQUARE = solution("Square")


class SquareThatPatchesAllclose(SQUARE):
    """Correct, but its backward makes every comparison succeed."""

    @staticmethod
    def backward(ctx, grad_output):
        torch.allclose = lambda *args, **kwargs: True
        return SQUARE.backward(ctx, grad_output)


class TestSealedGrade:
    """make_sealed_grade: restore, grade, notice tampering, publish a signed verdict."""

    @pytest.fixture
    def sealed(self, snapshot, monkeypatch):
        """A sealed grade with a fake publish and report; returns (grade, published, reported)."""
        monkeypatch.setattr(torch, "allclose", torch.allclose)  # put back even if a test fails
        published, reported = [], []
        grade = make_sealed_grade(KEY, snapshot.restore, grading.verdict,
                                  lambda passed, message: reported.append((passed, message)),
                                  published.append)
        return grade, published, reported

    def test_signed_pass(self, sealed):
        """Does a correct solution publish a passing verdict the grader believes?"""
        grade, published, reported = sealed
        grade("Square", SQUARE)
        assert reported == [(True, passes("Square"))]
        assert read_verdicts([display(bundle) for bundle in published], KEY) == {
            "Square": (True, passes("Square"))}

    def test_signed_failure(self, sealed):
        """Is a failure signed too, with its hint?"""
        grade, published, _ = sealed
        grade("Square", solution("MySigmoid"))
        (passed, message), = read_verdicts([display(b) for b in published], KEY).values()
        assert not passed and message.startswith("Square's output is wrong")

    def test_tampering_during_grading(self, sealed):
        """Does a backward that patches torch.allclose fail, named, with torch restored?"""
        original = torch.allclose
        grade, published, reported = sealed
        grade("Square", SquareThatPatchesAllclose)
        assert torch.allclose is original
        passed, message = reported[0]
        assert not passed
        assert message == ("Square's code replaced torch.allclose while it was being graded: "
                           "a submission must not modify torch or the grading library")
        assert read_verdicts([display(b) for b in published], KEY)["Square"] == (False, message)

    def test_tampering_before_grading_is_undone(self, sealed, monkeypatch):
        """If an earlier cell broke torch.allclose, is it restored before grading?"""
        grade, _, reported = sealed
        monkeypatch.setattr(torch, "allclose", lambda *args, **kwargs: True)
        grade("Square", solution("MySigmoid"))
        assert reported[0][0] is False

    def test_rebinding_sign_later_changes_nothing(self, sealed, monkeypatch):
        """Once sealed, does rebinding seal.sign or seal.verdict_payload change nothing?"""
        grade, published, _ = sealed
        monkeypatch.setattr(seal, "sign", lambda key, payload: "forged")
        monkeypatch.setattr(seal, "verdict_payload", lambda *args: "forged")
        grade("Square", SQUARE)
        sealed_verdict = published[0][VERDICT_MIME]
        assert sealed_verdict["signature"] != "forged" and sealed_verdict["payload"] != "forged"


BOOT_SCRIPT = textwrap.dedent("""
    import json, os, sys
    import IPython.display
    published = []
    IPython.display.publish_display_data = published.append
    import autograder, autograder.seal
    before = autograder.grade
    autograder.seal.boot()  # no key variable yet: must do nothing
    unsealed = autograder.grade is before
    os.environ[autograder.seal.KEY_FILE_VARIABLE] = sys.argv[1]
    autograder.seal.boot()
    import torch

    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            return grad_output * 2 * x

    class Tamper(Square):
        @staticmethod
        def backward(ctx, grad_output):
            torch.allclose = lambda *args, **kwargs: True
            return Square.backward(ctx, grad_output)

    results = []
    for submission in (Square, Tamper, Square):
        try:
            autograder.grade("Square", submission)
            results.append("ok")
        except AssertionError as error:
            results.append(str(error).splitlines()[0])
    print(json.dumps({"unsealed_without_key": unsealed, "sealed": autograder.grade is not before,
                      "key_variable_left": autograder.seal.KEY_FILE_VARIABLE in os.environ,
                      "results": results, "published": published}))
""")


def test_boot_seals_a_fresh_kernel(tmp_path):
    """In a fresh interpreter, does boot do nothing without a key, and with one: read and
    delete it, replace autograder.grade, pass a correct solution (even the first, while torch
    still loads modules lazily), and fail one that tampers? (A subprocess: boot rebinds
    autograder.grade for good.)"""
    key_file = tmp_path / "key"
    key_file.write_bytes(KEY)
    env = {k: v for k, v in os.environ.items() if k != seal.KEY_FILE_VARIABLE}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env["AUTOGRADER_DEVICE"] = "cpu"
    done = subprocess.run([sys.executable, "-c", BOOT_SCRIPT, str(key_file)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["unsealed_without_key"] and result["sealed"]
    assert not key_file.exists() and not result["key_variable_left"]
    assert result["results"] == [
        "ok", "Square's code replaced torch.allclose while it was being graded: a submission "
        "must not modify torch or the grading library", "ok"]
    verdicts = [read_verdicts([display(bundle)], KEY) for bundle in result["published"]]
    assert [v["Square"][0] for v in verdicts] == [True, False, True]


def test_a_learners_default_dtype_is_not_tampering():
    """torch.set_default_dtype rebinds torch.Storage itself: is that left alone, not reported
    as a change to torch (which would zero a correct answer)?"""
    snapshot = Snapshot([torch])
    try:
        torch.set_default_dtype(torch.float64)
        assert snapshot.restore() == []
    finally:
        torch.set_default_dtype(torch.float32)

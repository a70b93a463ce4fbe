"""lesson05_checkpointing.checkpointing: lesson 05's CheckpointFunction and checkpoint_sequential,
graded against correct and deliberately wrong submissions."""

import pytest
import torch

from autograder.exercises import EXERCISES
from autograder.exercises.lesson05_checkpointing import checkpointing as lesson
from autograder.exercises.lesson05_checkpointing.checkpoint_blocks import custom_nodes
from autograder.grading import verdict
from tests.autograder.catalogued import graded_mistake, mistake, unusual
from tools.solutions import solution

pytestmark = pytest.mark.lesson05

CHECKPOINT = EXERCISES["CheckpointFunction"]
SEQUENTIAL = EXERCISES["checkpoint_sequential"]


class TestLateBinding:
    def test_names_the_closure(self, raises_hint):
        """Is a closure that reads its loop variables at backward time named as recomputing
        different code, with the layer that ran too often?"""
        with raises_hint("the recomputation ran different code than forward (in backward layer "
                         "3 ran 2 times and layer 0 never)"):
            SEQUENTIAL.run(mistake("checkpoint_sequential",
                                     "late-binding closure in the loop"))


class TestRegistry:
    def test_exercises_are_registered(self):
        """Are both exercises found by name, for lesson 05?"""
        assert CHECKPOINT.lesson == SEQUENTIAL.lesson == "05_checkpointing"


class TestCorrect:
    def test_grading_leaves_the_random_stream_alone(self):
        """Does grading (which reseeds for dropout) leave the learner's random state as it was?"""
        function = solution("CheckpointFunction")  # loading the lesson seeds the generator
        torch.manual_seed(123)
        before = torch.get_rng_state()
        CHECKPOINT.run(function)
        assert torch.equal(before, torch.get_rng_state())

    def test_pytorch_reentrant_checkpoint_is_graded_through_backward(self, raises_hint):
        """Is PyTorch's own reentrant CheckpointFunction, which refuses torch.autograd.grad by
        design, graded the way it is used (.backward()), and failed only where it breaks the
        contract: a frozen block with a dummy input, where it raises "none of output has
        requires_grad=True" (review 58c)?"""
        reentrant = mistake("CheckpointFunction",
                            "PyTorch's reentrant CheckpointFunction, preserve_rng_state=True")
        with raises_hint("when every parameter of run_fn is frozen (requires_grad=False) and "
                         "the only tensor argument that requires grad is a dummy"):
            CHECKPOINT.run(reentrant)

    def test_random_state_in_save_for_backward_is_not_an_activation(self):
        """Is the CPU random state (a uint8 tensor) passed through save_for_backward accepted?"""
        CHECKPOINT.run(unusual("CheckpointFunction",
                                 "RNG state passed through save_for_backward"))


class TestMistakes:
    def test_overwritten_parameter_grads(self, raises_hint):
        """Is assigning p.grad = g (instead of accumulating) caught by the second call?"""
        with raises_hint("replaced the .grad of parameter 0.weight instead of adding to it"):
            CHECKPOINT.battery(mistake("CheckpointFunction", "overwrites the parameters' .grad"),
                            torch.device("cpu"))

    def test_cpu_state_only_fails_on_cuda(self, cuda, raises_hint):
        """Does restoring only the CPU random state fail with dropout on CUDA, naming CUDA?"""

        right = solution("CheckpointFunction")  # once: each call reruns the lesson's seeding

        class RestoresOnlyCPUState(right):
            @staticmethod
            def backward(ctx, grad_output):
                ctx.devices, ctx.cuda_states = [], []  # forget CUDA's random state
                return right.backward(ctx, grad_output)

        CHECKPOINT.battery(RestoresOnlyCPUState, torch.device("cpu"))
        with raises_hint("the CPU random state was restored, but not the CUDA device's"):
            CHECKPOINT.battery(RestoresOnlyCPUState, cuda)

    def test_cpu_state_only_is_told_cuda_was_not_exercised(self, monkeypatch):
        """Does restoring only the CPU random state (wrong, but only a GPU can show it) get a
        green line on a CPU machine that says the CUDA random state was not exercised?"""
        monkeypatch.setenv("AUTOGRADER_DEVICE", "cpu")
        right = solution("CheckpointFunction")

        class RestoresOnlyCPUState(right):
            @staticmethod
            def backward(ctx, grad_output):
                ctx.devices, ctx.cuda_states = [], []  # forget CUDA's random state
                return right.backward(ctx, grad_output)

        passed, message = verdict("CheckpointFunction", RestoresOnlyCPUState)
        assert passed, message
        assert ("not exercised without a GPU: the contract's GPU bullet (dropout's masks and "
                "random stream on a CUDA argument's device)") in message.splitlines()[0]

    def test_not_a_function(self, raises_hint):
        """Is a plain function passed as CheckpointFunction told what it must be?"""
        with raises_hint("CheckpointFunction must be a class deriving from "
                         "torch.autograd.Function"):
            CHECKPOINT.run(solution("checkpoint_sequential"))

    def test_stub_raises_not_implemented(self):
        """Does the notebook stub's NotImplementedError reach the learner unchanged?"""

        class Stub(torch.autograd.Function):
            @staticmethod
            def forward(ctx, run_fn, *args):
                raise NotImplementedError()

            @staticmethod
            def backward(ctx, grad_output):
                raise NotImplementedError()

        with pytest.raises(NotImplementedError):
            CHECKPOINT.run(Stub)

        def stub(layers, segments, x):
            raise NotImplementedError()

        with pytest.raises(NotImplementedError):
            SEQUENTIAL.run(stub)


class TestHelpers:
    def test_saved_bytes_are_the_inputs(self):
        """Does a correct CheckpointFunction save exactly its tensor arguments, by the probe?"""
        from autograder.checks import make_inputs, run_forward

        block = lesson.mlp_block("cpu")
        values = {"run_fn": block, "x": torch.randn(4, lesson.WIDTH, dtype=torch.float64)}
        forward = run_forward(solution("CheckpointFunction"), lesson.CHECKPOINT,
                              make_inputs(values))
        assert [s.role for s in forward.saved] == ["input x"]
        assert forward.saved_bytes == 4 * lesson.WIDTH * 8

    def test_custom_nodes_count_segments(self):
        """Does the graph walk count one custom node per checkpointed segment?"""
        layers = lesson.layer_stack("cpu", 6)
        x = torch.randn(2, lesson.WIDTH, dtype=torch.float64, requires_grad=True)
        for segments in (1, 2, 3, 6):
            checkpoint_sequential = solution("checkpoint_sequential")
            assert len(custom_nodes([checkpoint_sequential(layers, segments, x)])) == segments


class TestReentry:
    """A backward that backpropagates a graph leading back into its own node never returns: the
    batteries refuse the second entry instead (autograder.exercises.lesson05_checkpointing.checkpoint_blocks)."""

    @staticmethod
    def _doubler(reenters: bool):
        class Doubler(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = 2 * x
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, grad_output):
                if reenters:
                    y, = ctx.saved_tensors  # linked to this very node
                    torch.autograd.backward(y, grad_output)
                return 2 * grad_output
        return Doubler

    def test_a_node_that_runs_once_passes(self):
        """Does the guard let each node of a graph run once, two nodes in a row included?"""
        from autograder.exercises.lesson05_checkpointing.checkpoint_blocks import (custom_nodes,
                                                                                   refuse_reentry)
        x = torch.ones(3, requires_grad=True)
        doubler = self._doubler(reenters=False)
        y = doubler.apply(doubler.apply(x))
        with refuse_reentry(custom_nodes([y]), "re-entered"):
            y.sum().backward()
        assert torch.equal(x.grad, torch.full((3,), 4.0))

    def test_a_node_entered_again_is_refused_at_once(self):
        """Does a backward re-entering its own node raise the message instead of hanging?"""
        from autograder.errors import GradingError
        from autograder.exercises.lesson05_checkpointing.checkpoint_blocks import (custom_nodes,
                                                                                   refuse_reentry)
        y = self._doubler(reenters=True).apply(torch.ones(3, requires_grad=True))
        with pytest.raises(GradingError, match="re-entered"):
            with refuse_reentry(custom_nodes([y], whole_graph=False), "re-entered"):
                y.sum().backward()


class TestLateMaskCause:
    """rng_probe.late_mask names a cause only where the states at each run_fn call prove it."""

    FORWARD, AFTER, OTHER = [torch.tensor([0])], [torch.tensor([1])], [torch.tensor([2])]

    def test_recorded_late(self):
        from autograder.exercises.lesson05_checkpointing.rng_probe import late_mask
        hint = late_mask([self.FORWARD, self.AFTER], 1, self.AFTER)
        assert "the state was recorded after run_fn(*args) ran" in hint

    def test_extra_call(self):
        from autograder.exercises.lesson05_checkpointing.rng_probe import late_mask
        hint = late_mask([self.FORWARD, self.FORWARD, self.AFTER], 1, self.AFTER)
        assert "backward called run_fn 2 times" in hint

    @pytest.mark.parametrize("starts, n_forward", [([], 0), ([FORWARD, OTHER], 1),
                                                   ([FORWARD, FORWARD, AFTER], 2)])
    def test_unproved_gives_both_causes(self, starts, n_forward):
        """No hooks fired (run_fn.forward called directly), another state, or two forward calls:
        the hint gives both causes and asserts neither."""
        from autograder.exercises.lesson05_checkpointing.rng_probe import late_mask
        hint = late_mask(starts, n_forward, self.AFTER)
        assert "either the state was recorded after run_fn(*args) ran, or backward drew" in hint


class TestWrongStartCause:
    """rng_probe.wrong_start names the seed replay, or the caller's state, only where backward's
    first run_fn call began from exactly that state."""

    FORWARD, SEEDED, CALLER, OTHER = ([torch.tensor([i])] for i in range(4))

    def _hint(self, starts, n_forward=1):
        from autograder.exercises.lesson05_checkpointing.rng_probe import wrong_start
        return wrong_start(starts, n_forward, self.CALLER, self.SEEDED, torch.device("cpu"))

    def test_seed_replayed(self):
        assert "state torch.manual_seed(seed) gives" in self._hint([self.FORWARD, self.SEEDED])

    def test_caller_state(self):
        hint = self._hint([self.FORWARD, self.CALLER])
        assert "nothing restored forward's state before run_fn ran, or something put" in hint

    def test_cpu_state_only_on_cuda(self):
        """On a CUDA device: backward began from forward's CPU state and the caller's CUDA
        state (two generators each): the CUDA generator was never restored."""
        from autograder.exercises.lesson05_checkpointing.rng_probe import wrong_start
        forward, caller = [torch.tensor([0]), torch.tensor([10])], [torch.tensor([3]),
                                                                     torch.tensor([13])]
        hint = wrong_start([forward, [forward[0], caller[1]]], 1, caller,
                           [torch.tensor([1]), torch.tensor([11])], torch.device("cuda"))
        assert "the CPU random state was restored, but not the CUDA device's" in hint
        everything = wrong_start([forward, caller], 1, caller,
                                 [torch.tensor([1]), torch.tensor([11])], torch.device("cuda"))
        assert "from the caller's current state" in everything

    @pytest.mark.parametrize("starts, n_forward", [([], 0), ([FORWARD, OTHER], 1),
                                                   ([FORWARD, FORWARD, SEEDED], 2)])
    def test_unproved_names_no_cause(self, starts, n_forward):
        hint = self._hint(starts, n_forward)
        assert hint.endswith("the recomputation drew new random numbers: which random state "
                             "did forward's run_fn start from, and does the recomputation "
                             "start from it?")  # a question: no cause asserted, no fix given


@pytest.mark.parametrize("exercise, name, expected", [
    ("CheckpointFunction", "run_fn under enable_grad in forward",
     "CheckpointFunction/keeps-activations"),
    ("CheckpointFunction", "run_fn under enable_grad in forward, the graph dropped by apply",
     "CheckpointFunction/records-graph-in-forward"),
    ("CheckpointFunction", "arguments kept on ctx", "CheckpointFunction/tensor-on-ctx"),
    ("CheckpointFunction", "fresh leaves that never require grad (t.detach())",
     "CheckpointFunction/leaves-without-grad"),
    ("CheckpointFunction", "torch.autograd.grad of the inputs only",
     "CheckpointFunction/grad-skips-parameters"),
    ("CheckpointFunction", "output.backward(grad_output, inputs=leaves)",
     "CheckpointFunction/backward-inputs-only"),
    ("CheckpointFunction", "overwrites the parameters' .grad",
     "CheckpointFunction/overwrites-parameter-grad"),
    ("CheckpointFunction", "random state recorded after run_fn ran",
     "CheckpointFunction/records-state-late"),
    ("CheckpointFunction", "an extra run_fn call in backward before the recomputation",
     "CheckpointFunction/extra-run-fn-call"),
    ("CheckpointFunction", "ignores the random state", "CheckpointFunction/ignores-random-state"),
    ("CheckpointFunction", "the rebuilt graph kept on ctx for a second backward",
     "CheckpointFunction/keeps-rebuilt-graph"),
    ("CheckpointFunction", "replays the seed (torch.initial_seed()), not the state",
     "CheckpointFunction/replays-seed"),
    ("CheckpointFunction", "set_rng_state without fork_rng",
     "CheckpointFunction/leaves-state-rewound"),
    ("CheckpointFunction", "recomputes with gradients off",
     "CheckpointFunction/recomputes-without-grad"),
    ("CheckpointFunction", "requires_grad_() on every tensor",
     "CheckpointFunction/leaf-for-non-float"),
    ("CheckpointFunction", "forgets the None for run_fn", "CheckpointFunction/no-none-for-run-fn"),
    ("CheckpointFunction", "returns gradients for the tensors only (no None for scale and "
     "use_tanh)", "CheckpointFunction/no-none-for-non-tensors"),
    ("CheckpointFunction", "recomputes on the saved tensors themselves",
     "CheckpointFunction/recomputes-on-saved-tensors"),
    ("checkpoint_sequential", "no checkpoints", "checkpoint_sequential/checkpoints-nothing"),
    ("checkpoint_sequential", "len // segments chunks make too many segments",
     "checkpoint_sequential/wrong-segment-count"),
    ("checkpoint_sequential", "drops the remainder", "checkpoint_sequential/drops-remainder"),
    ("checkpoint_sequential", "late-binding closure in the loop",
     "checkpoint_sequential/recomputes-other-layers"),
    ("checkpoint_sequential", "ceil(n / k) layers per segment",
     "checkpoint_sequential/uneven-segments"),
    ("checkpoint_sequential", "built on torch.utils.checkpoint(use_reentrant=True)",
     "checkpoint_sequential/uses-torch-checkpoint"),
    ("ReversibleCoupling", "saves the inputs", "ReversibleCoupling/saves-input"),
    ("ReversibleCoupling", "saves f(x2), an activation", "ReversibleCoupling/saves-activation"),
    ("ReversibleCoupling", "saves a clone of the output y2", "ReversibleCoupling/saves-output-copy"),
    ("ReversibleCoupling", "keeps a NumPy copy of the input x2 on ctx",
     "ReversibleCoupling/keeps-a-copy-on-ctx"),
    ("ReversibleCoupling", "forward runs f alone under torch.enable_grad()",
     "ReversibleCoupling/records-graph-in-forward"),
    ("ReversibleCoupling", "recomputes with gradients off",
     "ReversibleCoupling/recomputes-without-grad"),
    ("ReversibleCoupling", "frees the saved outputs' storage in backward (the caller's y1 and y2 "
     "with it)", "ReversibleCoupling/frees-saved-outputs"),
    ("ReversibleCoupling", "inverts in place, into the saved outputs (the caller's y1 and y2 are "
     "overwritten)", "ReversibleCoupling/backward-modifies-saved-tensor"),
    ("ReversibleCoupling", "returns the two gradients swapped",
     "ReversibleCoupling/gradients-swapped"),
    ("ReversibleCoupling", "inverts in the wrong order", "ReversibleCoupling/inverts-wrong-tensor"),
    ("ReversibleCoupling", "recomputes g on a detached y1", "ReversibleCoupling/g-not-under-grad"),
    ("ReversibleCoupling", "backpropagates y1's gradient only",
     "ReversibleCoupling/drops-an-output-gradient"),
    ("ReversibleCoupling", "autograd.grad: parameters get nothing",
     "ReversibleCoupling/grad-skips-parameters"),
    ("ReversibleCoupling", "torch.autograd.backward with inputs=[x1, x2] only",
     "ReversibleCoupling/backward-inputs-only"),
    ("ReversibleCoupling", "fresh leaves cast to float32 (.float()) in backward",
     "ReversibleCoupling/recomputes-in-another-dtype"),
    # review 57: a frozen parameter inside run_fn or f (fine-tuning)
    ("CheckpointFunction", "autograd.grad over a module run_fn's every parameter, frozen ones too",
     "CheckpointFunction/frozen-parameter"),
    ("ReversibleCoupling", "autograd.grad over x1, x2 and every parameter of f and g, frozen "
     "ones too", "ReversibleCoupling/frozen-parameter"),
    ("ReversibleCoupling", "torch.autograd.backward with inputs= listing every parameter, "
     "frozen ones too", "ReversibleCoupling/frozen-parameter"),
    # review 58c: every parameter frozen, the only argument requiring grad a dummy run_fn ignores
    ("CheckpointFunction", "backward through a rebuilt output that requires no grad (a frozen "
     "block, a dummy input)", "CheckpointFunction/backward-without-graph"),
])
def test_a_proven_mistake_is_graded_with_its_id(exercise, name, expected):
    """Does each mistake a probe proves in lesson 05 (what forward kept, fresh leaves, .grad of
    the parameters, the random state, the segments, the inversion) carry a stable id?"""
    assert graded_mistake(exercise, name) == expected

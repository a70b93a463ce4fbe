"""autograder.exercises.checkpointing: lesson 05's CheckpointFunction and checkpoint_sequential,
graded against correct and deliberately wrong submissions."""

import pytest
import torch

from autograder.exercises import EXERCISES
from autograder.exercises import checkpointing as lesson
from autograder.grading import verdict
from functions import checkpointing as ref

pytestmark = pytest.mark.lesson05

CHECKPOINT = EXERCISES["CheckpointFunction"]
SEQUENTIAL = EXERCISES["checkpoint_sequential"]


class TestRegistry:
    def test_exercises_are_registered(self):
        """Are both exercises found by name, for lesson 05?"""
        assert CHECKPOINT.lesson == SEQUENTIAL.lesson == "05_checkpointing"
        assert CHECKPOINT.hidden_checks and "\n" not in CHECKPOINT.hidden_checks


class TestCorrect:
    def test_checkpoint_quick(self):
        """Does a correct CheckpointFunction pass the self-check?"""
        CHECKPOINT.quick(ref.CheckpointFunction)

    def test_checkpoint_full(self, device):
        """Does it pass every hidden check, on every device?"""
        CHECKPOINT.full(ref.CheckpointFunction, device)

    def test_sequential(self, device):
        """Does a correct checkpoint_sequential pass the self-check and the hidden checks?"""
        SEQUENTIAL.quick(ref.checkpoint_sequential)
        SEQUENTIAL.full(ref.checkpoint_sequential, device)

    def test_last_segment_plain_is_accepted(self, device):
        """Is torch.utils.checkpoint's convention (last segment not checkpointed) accepted?"""
        SEQUENTIAL.quick(ref.sequential_last_segment_plain)
        SEQUENTIAL.full(ref.sequential_last_segment_plain, device)

    def test_verdict(self):
        """Does the hidden-test entry point report a pass?"""
        assert verdict("CheckpointFunction", ref.CheckpointFunction)[0]
        assert verdict("checkpoint_sequential", ref.checkpoint_sequential)[0]

    def test_grading_leaves_the_random_stream_alone(self):
        """Does grading (which reseeds for dropout) leave the learner's random state as it was?"""
        torch.manual_seed(123)
        before = torch.get_rng_state()
        CHECKPOINT.quick(ref.CheckpointFunction)
        assert torch.equal(before, torch.get_rng_state())


MISTAKES = [
    (ref.IgnoresRandomState, "the recomputation drew new random numbers; save "
                             "torch.get_rng_state() in forward and restore it"),
    (ref.RewindsRandomState, "left the global random state rewound to the forward's"),
    (ref.GradOfInputsOnly, "the parameters used inside run_fn got no gradient (.grad is None): "
                           "torch.autograd.grad(outputs, inputs=...) returns gradients for the "
                           "listed inputs only; call torch.autograd.backward(outputs, "
                           "grad_outputs)"),
    (ref.SavesActivations, "kept 1440 bytes of activations"),
    (ref.NoEnableGrad, "recomputed run_fn with gradients off"),
    (ref.NoDetach, "wrote into the .grad of the caller's tensor x"),
    (ref.RequiresGradOnEveryInput, "gradients of a non-float input (e.g. a boolean mask)"),
    (ref.NoNoneForRunFn, "the first input is run_fn, so return None for it first"),
    (ref.ArgsOnCtx, "stores a tensor as ctx.args[0]: pass the tensor arguments through "
                    "ctx.save_for_backward"),
    (ref.SavesEveryArgument, "CheckpointFunction.forward passed a non-tensor to "
                             "ctx.save_for_backward: save tensors (or None) there"),
]


class TestMistakes:
    @pytest.mark.parametrize("function, hint", MISTAKES, ids=lambda v: getattr(v, "__name__", ""))
    def test_self_check_names_the_mistake(self, function, hint, raises_hint):
        """Does the visible self-check name each mistake?"""
        with raises_hint(hint):
            CHECKPOINT.quick(function)

    @pytest.mark.parametrize("function, hint", MISTAKES, ids=lambda v: getattr(v, "__name__", ""))
    def test_hidden_checks_name_the_mistake(self, function, hint, raises_hint):
        """Do the hidden checks name each mistake too?"""
        with raises_hint(hint):
            CHECKPOINT.full(function, torch.device("cpu"))

    def test_overwritten_parameter_grads(self, raises_hint):
        """Is assigning p.grad = g (instead of accumulating) caught by the second call?"""
        with raises_hint("replaced the .grad of parameter 0.weight instead of adding to it"):
            CHECKPOINT.full(ref.OverwritesParameterGrads, torch.device("cpu"))

    def test_cpu_state_only_fails_on_cuda(self, cuda, raises_hint):
        """Does restoring only the CPU random state fail with dropout on CUDA, naming CUDA?"""
        CHECKPOINT.full(ref.RestoresOnlyCPUState, torch.device("cpu"))
        with raises_hint("torch.cuda.get_rng_state() for CUDA tensors"):
            CHECKPOINT.full(ref.RestoresOnlyCPUState, cuda)

    def test_rng_mistake_costs_only_checkpoint_function(self):
        """Does ignoring the random state lose CheckpointFunction only, not checkpoint_sequential
        built on it?"""

        def sequential(layers, segments, x):
            return ref.checkpoint_sequential(layers, segments, x, function=ref.IgnoresRandomState)

        assert not verdict("CheckpointFunction", ref.IgnoresRandomState)[0]
        assert verdict("checkpoint_sequential", sequential)[0]

    def test_not_a_function(self, raises_hint):
        """Is a plain function passed as CheckpointFunction told what it must be?"""
        with raises_hint("CheckpointFunction must be a class deriving from "
                         "torch.autograd.Function"):
            CHECKPOINT.quick(ref.checkpoint_sequential)

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
            CHECKPOINT.quick(Stub)

        def stub(layers, segments, x):
            raise NotImplementedError()

        with pytest.raises(NotImplementedError):
            SEQUENTIAL.quick(stub)


SEQUENTIAL_MISTAKES = [
    (ref.sequential_without_checkpoints, "with 5 layers checkpointed nothing: run each segment "
                                         "through CheckpointFunction.apply"),
    (ref.sequential_too_many_segments, "with 5 layers made 3 checkpointed segments: split the "
                                       "layers into exactly 2 consecutive groups"),
    (ref.sequential_drops_remainder, "ran only the first 4 layers: every layer must run once"),
]


class TestSequentialMistakes:
    @pytest.mark.parametrize("function, hint", SEQUENTIAL_MISTAKES,
                             ids=lambda v: getattr(v, "__name__", ""))
    def test_names_the_mistake(self, function, hint, raises_hint):
        """Does the self-check name each segmentation mistake?"""
        with raises_hint(hint):
            SEQUENTIAL.quick(function)

    def test_parameters_without_gradient(self, raises_hint):
        """Built on a CheckpointFunction that uses torch.autograd.grad, are the parameters'
        missing gradients named?"""

        def sequential(layers, segments, x):
            return ref.checkpoint_sequential(layers, segments, x, function=ref.GradOfInputsOnly)

        with raises_hint("the parameters got no gradient"):
            SEQUENTIAL.quick(sequential)

    def test_not_callable(self, raises_hint):
        """Is something that is not a function rejected with its type?"""
        with raises_hint("checkpoint_sequential must be a function, got int"):
            SEQUENTIAL.quick(3)


class TestHelpers:
    def test_saved_bytes_are_the_inputs(self):
        """Does a correct CheckpointFunction save exactly its tensor arguments, by the probe?"""
        from autograder.checks import make_inputs, run_forward

        block = lesson.mlp_block("cpu")
        values = {"run_fn": block, "x": torch.randn(4, lesson.WIDTH, dtype=torch.float64)}
        forward = run_forward(ref.CheckpointFunction, lesson.CHECKPOINT, make_inputs(values))
        assert [s.role for s in forward.saved] == ["input x"]
        assert forward.saved_bytes == 4 * lesson.WIDTH * 8

    def test_custom_nodes_count_segments(self):
        """Does the graph walk count one custom node per checkpointed segment?"""
        layers = lesson.layer_stack("cpu", 6)
        x = torch.randn(2, lesson.WIDTH, dtype=torch.float64, requires_grad=True)
        for segments in (1, 2, 3, 6):
            assert lesson._custom_nodes(ref.checkpoint_sequential(layers, segments, x)) == segments

"""lesson05_checkpointing.checkpoint_sequential: the mistakes its battery names, and the
segments it reads from the order backward recomputes the layers in."""

import pytest
import torch
from torch import nn

from autograder.exercises import EXERCISES
from autograder.exercises.lesson05_checkpointing.checkpoint_sequential import (
    _outside_checkpoints, _recording_calls, _segment_sizes, check_outside_checkpoints)
from autograder.grading import verdict
from tests.autograder.catalogued import mistake
from tools.solutions import namespace, solution

pytestmark = pytest.mark.lesson05

SEQUENTIAL = EXERCISES["checkpoint_sequential"]


def _sequential_on(function):
    """The lesson's checkpoint_sequential, built on ``function`` instead of its own
    CheckpointFunction."""
    names = dict(namespace("05_checkpointing"), CheckpointFunction=function)
    original = solution("checkpoint_sequential")
    return type(original)(original.__code__, names, original.__name__, original.__defaults__)


class TestSequentialMistakes:
    def test_rng_mistake_costs_only_checkpoint_function(self):
        """Does ignoring the random state lose CheckpointFunction only, not checkpoint_sequential
        built on it?"""

        ignores = mistake("CheckpointFunction", "ignores the random state")
        sequential = _sequential_on(ignores)
        assert not verdict("CheckpointFunction", ignores)[0]
        assert verdict("checkpoint_sequential", sequential)[0]

    def test_parameters_without_gradient(self, raises_hint):
        """Built on a CheckpointFunction that uses torch.autograd.grad, are the parameters'
        missing gradients named?"""

        sequential = _sequential_on(mistake("CheckpointFunction",
                                            "torch.autograd.grad of the inputs only"))
        with raises_hint("the parameters got no gradient"):
            SEQUENTIAL.run(sequential)

    def test_not_callable(self, raises_hint):
        """Is something that is not a function rejected with its type?"""
        with raises_hint("checkpoint_sequential must be a function, got int"):
            SEQUENTIAL.run(3)


def test_segment_sizes_read_from_the_recomputation_order():
    """Are the recomputed segments recovered from the order backward ran the layers in
    (last segment first, each one's layers in order)?"""
    assert _segment_sizes([4, 5, 6, 2, 3, 0, 1]) == [2, 2, 3]
    assert _segment_sizes([3, 2, 1, 0]) == [1, 1, 1, 1]
    assert _segment_sizes([]) == []


def test_calls_are_recorded_through_forward_and_put_back():
    """Is a layer called as layer.forward(h) recorded like layer(h), with grad on or off, and
    is each layer's own forward back afterwards?"""
    layers = [nn.Tanh(), nn.Sigmoid()]
    x = torch.ones(2)
    with _recording_calls(layers) as calls:
        layers[1].forward(layers[0](x))
        with torch.no_grad():
            layers[0].forward(x)
    assert calls == [(0, True), (1, True), (0, False)]
    assert all("forward" not in vars(layer) for layer in layers)


def test_layers_outside_every_checkpoint_are_named(raises_hint):
    """Run under grad in forward and never recomputed: named, unless they form the last group
    (the one allowed to run plainly) or the first group (check_segment_sizes names that)."""
    assert _outside_checkpoints([(0, True), (1, False), (1, True)], [1]) == [0]
    check_outside_checkpoints("w", 7, 3, 2, [5, 6])  # the last group plainly: allowed
    check_outside_checkpoints("w", 7, 3, 2, [0, 1])  # the first group: left to the sizes
    with raises_hint("layers 4 to 6 ran in forward outside every checkpoint"):
        check_outside_checkpoints("w", 7, 5, 2, [4, 5, 6])
    with raises_hint("layer 0 ran in forward outside every checkpoint"):
        check_outside_checkpoints("w", 7, 1, 1, [0])


def test_ceil_sized_segments_are_named_and_the_split_is_asked_not_given():
    """Does ceil(n / k) layers per segment fail naming that split on its first line, and end in
    a question about the remainder rather than spelling out the groups to cut?"""
    message = verdict("checkpoint_sequential",
                      mistake("checkpoint_sequential", "ceil(n / k) layers per segment"))[1]
    first = message.splitlines()[0]
    assert "ceil(n / k) layers per segment" in first and first.endswith("?")
    assert "exactly 5" not in message and "none longer than" not in message


def test_the_lesson_s_loop_on_a_state_on_class_function_is_sent_to_that_function():
    """Is the lesson's own checkpoint_sequential, built on a CheckpointFunction that keeps
    run_fn on its class (every segment then recomputes the last one's layers), told to fix
    CheckpointFunction, not blamed for its loop (instructor trial, learner ann)?"""
    from autograder.grading import classified_verdict

    answer = _sequential_on(mistake("CheckpointFunction", "run_fn kept on the class"))
    verdict = classified_verdict("checkpoint_sequential", answer)
    assert verdict.mistake == "checkpoint_sequential/uses-failing-exercise"
    first, second = verdict.message.splitlines()[:2]
    assert first.startswith("checkpoint_sequential calls your CheckpointFunction, which fails its "
                            "own check")
    assert "CheckpointFunction.forward sets CheckpointFunction.run_fn" in first
    assert second.startswith("What checkpoint_sequential's own check saw, through your "
                             "CheckpointFunction: ")

"""Lesson 05: CheckpointFunction with random numbers inside run_fn: the recomputation draws
forward's (an nn.Dropout, a plain function calling the block, and a module drawing with
F.dropout, no nn.Dropout among its modules), forward neither reseeds nor forks, and backward
leaves the caller's stream where the block unchecked leaves it."""

import torch

from ...checks import make_inputs, run_forward
from ...diagnose import diagnose_values
from ...errors import GradingError
from ...exercise import sample
from .checkpoint_backward import (_backward, _check_input_grads, _check_parameter_grads,
                                  _spec_for)
from .checkpoint_blocks import (WIDTH, clear_grads, fork_rng, mlp_block, parameters_of,
                                reference, rng_states)
from .rng_probe import late_mask, same_states, wrong_start

ONLY_FOR_DROPOUT = (
    "with dropout drawn by F.dropout in a module that is no nn.Dropout, the recomputation drew "
    "new random numbers from the caller's current state, though it drew forward's when run_fn "
    "held an nn.Dropout: does your backward decide whether to restore the random state from "
    "what run_fn contains? Any op in run_fn may draw random numbers (F.dropout, torch.rand, "
    "a module of the caller's own), and a checkpoint cannot see them: restore it on every "
    "recomputation")

def _recomputed_on(states, block, x, device) -> torch.Tensor:
    """x's true gradient through the block with dropout drawing from ``states``."""
    with fork_rng(device):
        torch.set_rng_state(states[0])
        if device.type == "cuda":
            torch.cuda.set_rng_state(states[1], device)
        return reference(lambda x: block(x), {"x": x}, {"x"}, {})[2]["x"]


def check_random_state(function, device, *, seed: int = 0, closure: bool = False,
                       functional: bool = False) -> None:
    """With dropout inside run_fn, gradients equal an un-checkpointed run with the same seed,
    and backward leaves the caller's random streams where they were. With ``closure``, run_fn
    is a plain function calling the block, not the module itself (no nn.Dropout to find); with
    ``functional`` the block draws with F.dropout from a module that is no nn.Dropout."""
    block = mlp_block(device, seed=seed, dropout=0.5, functional=functional)
    parameters = parameters_of(block)

    def run_block(x):
        return block(x)

    values = {"run_fn": run_block if closure else block,
              "x": sample((4, WIDTH), device, seed=seed + 10)}
    spec = _spec_for(values)
    with fork_rng(device):
        torch.manual_seed(seed)
        seeded = rng_states(device)  # a seed replayed in backward starts here (wrong_start)
        torch.rand(17, device=device)  # code before the block draws after seeding, as in training
        expected, grad_output, truth, parameter_truth = reference(
            lambda x: block(x), {"x": values["x"]}, {"x"}, parameters)
        unchecked = rng_states(device)  # where the block unchecked leaves the random state
        clear_grads(block)
        torch.manual_seed(seed)
        inputs = make_inputs(values)
        torch.rand(17, device=device)
        starts = []  # the random state as each call of run_fn began (rng_probe.late_mask)
        block.register_forward_pre_hook(lambda *_: starts.append(rng_states(device)))
        before = rng_states(device)
        forward = run_forward(function, spec, inputs)
        n_forward = len(starts)
        if (isinstance(forward.output, torch.Tensor) and forward.output.shape == expected.shape
                and not torch.allclose(forward.output, expected)):
            raise GradingError(
                "CheckpointFunction's output with dropout inside run_fn differs from run_fn's "
                "own with the same seed: forward should run run_fn on the random state it "
                "finds (record it, don't reseed)")
        diagnose_values("CheckpointFunction's output", forward.output, expected)
        after_run_fn = rng_states(device)  # a state recorded too late: dropout has drawn
        if n_forward and not same_states(after_run_fn, unchecked) \
                and same_states(after_run_fn, before):
            raise GradingError(
                "CheckpointFunction's forward put the random state back (fork_rng in forward?): "
                "run_fn's dropout drew from it, yet forward left it where it found it, while the "
                "same block unchecked leaves it advanced, so the layers after a checkpoint would "
                "draw the very numbers its dropout drew; which of forward and backward should leave "
                "the caller's stream untouched?",
                mistake="CheckpointFunction/forks-rng-in-forward")
        torch.rand(1000, device=device)  # layers after the block draw random numbers too
        if device.type == "cuda":  # on the CPU too: a CPU-only restore then shows (wrong_start)
            torch.rand(1000)
        states = rng_states(device)
        grads = _backward(spec, forward.output, inputs, grad_output)
        calls = list(starts)  # the calls after this one are the grader's
        try:
            _check_input_grads(inputs, grads, {"x": truth["x"]})
            _check_parameter_grads(parameters, parameter_truth)
        except GradingError as error:
            if "no gradient" in error.hint or ".grad of the caller" in error.hint:
                raise
            got = dict(zip(inputs, grads))["x"]
            if got is not None and got.shape == values["x"].shape and torch.allclose(
                    got, _recomputed_on(after_run_fn, block, values["x"], device)):
                raise GradingError(late_mask(calls, n_forward, after_run_fn), str(error), mistake={
                    "the state was recorded after run_fn(*args) ran; record it before":
                        "CheckpointFunction/records-state-late",
                    "spent forward's mask": "CheckpointFunction/extra-run-fn-call"}) from error
            hint = wrong_start(calls, n_forward, states, seeded, device)
            if functional and "from the caller's current state" in hint:
                hint = ONLY_FOR_DROPOUT  # the nn.Dropout cases, graded first, passed
            raise GradingError(hint, str(error),
                               mistake={"restore it on every recomputation":
                                        "CheckpointFunction/replays-only-for-dropout-modules",
                                        "state torch.manual_seed(seed) gives":
                                        "CheckpointFunction/replays-seed",
                                        "from the caller's current state":
                                        "CheckpointFunction/ignores-random-state",
                                        "but not the CUDA device's":
                                        "CheckpointFunction/ignores-cuda-state"}) from error
        if not same_states(states, rng_states(device)):
            raise GradingError(
                "CheckpointFunction's backward left the global random state rewound to the "
                "forward's, so later random numbers repeat: after the recomputation, whose "
                "random state should the caller's next random numbers come from?",
                mistake="CheckpointFunction/leaves-state-rewound")

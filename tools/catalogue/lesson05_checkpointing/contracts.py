"""Lesson 05's contracts as data (``tools.catalogue.clauses``), keyed by exercise: ``CLAUSES``,
each exercise's bullets as the lesson lists them, each with the checks that enforce it and a
wrong answer of this catalogue that each check fails; ``RULES``, the checks through which each
exercise enforces the Function contract's rules (``autograder.function_contract``), which the
page states once and no bullet repeats, each with its witness. Grading never reads them
(``tools.catalogue.contract_of`` does)."""

from ..clauses import Clause

# the prefix of each exercise's mistake ids
Q = "checkpoint_sequential/"
C = "CheckpointFunction/"
R = "ReversibleCoupling/"


REVERSIBLE_CLAUSES = (
    Clause("forward saves only the outputs `y1` and `y2`, no input in any form and no activation "
           "of `f` or `g`, and backward keeps nothing of what it rebuilds once it returns;",
           {R + "saves-input": "saves the inputs",
            R + "saves-activation": "saves f(x2), an activation",
            R + "tensor-on-ctx": "keeps forward's call of f as functools.partial(f, x2) on ctx",
            R + "saves-output-copy": "saves a float64 copy of the output y1 for accuracy",
            R + "keeps-a-copy-on-ctx": "keeps a flattened NumPy copy of x2 on ctx and reads x2 "
                                        "back from it",
            R + "records-graph-in-forward":
                "forward runs f and g under torch.enable_grad(), saving only y1 and y2"}),
    Clause("backward rebuilds the inputs from the outputs and returns the gradients of `x1` and "
           "`x2` the two equations give, also when a loss uses only one of the outputs;",
           {R + "inverts-wrong-tensor": "inverts in the wrong order",
            R + "wrong-inverse": "rebuilds x1 as y1 + f(x2), the inverse's sign wrong",
            R + "records-inversion": "records the inversion under grad and differentiates with "
                                     "respect to the rebuilt x1 and x2",
            R + "recomputes-without-grad": "recomputes with gradients off",
            R + "g-not-under-grad": "recomputes g on a detached y1",
            R + "gradients-swapped": "returns the two gradients swapped",
            R + "drops-direct-term": "RevNet's one-call backward without grad_y2's direct term",
            R + "g-on-own-leaf": "recomputes g on a fresh leaf of the saved y1",
            R + "drops-an-output-gradient": "backpropagates y1's gradient only"}),
    Clause("the parameters of `f` and `g` receive their gradients in `.grad`, added to what it "
           "holds, whenever `x1` or `x2` requires grad; frozen ones get none.",
           {R + "grad-skips-parameters": "autograd.grad: parameters get nothing",
            R + "backward-inputs-only": "torch.autograd.backward with inputs=[x1, x2] only",
            R + "frozen-parameter": "autograd.grad over x1, x2 and every parameter of f and g, "
                                    "frozen ones too",
            R + "skips-zero-gradient": "returns zeros without recomputing when both incoming "
                                       "gradients are all zero"}),
)
REVERSIBLE_RULES = {
    "values": {R + "recomputes-in-another-dtype": "fresh leaves cast to float32 (.float()) in "
                                                  "backward"},
    "ctx": {R + "state-on-class": "f and g kept on the class",
            R + "backward-changes-state-it-reads": "the inverse computed once, its leaves "
                                                   "cached on ctx for a second backward",
            R + "saves-unversioned-alias": "saves y1.data and y2.data"},
    "unwritten": {R + "backward-modifies-saved-tensor": "inverts in place, into the saved outputs "
                                                        "(the caller's y1 and y2 are overwritten)",
                  R + "frees-saved-outputs": "frees the saved outputs' storage in backward (the "
                                             "caller's y1 and y2 with it)"},
}


CHECKPOINTING_CLAUSES = (
    Clause("forward keeps only the tensor arguments and the random states, recording no graph of "
           "`run_fn`, and backward keeps nothing of what it rebuilds once it returns;",
           {C + "keeps-activations": "run_fn under enable_grad in forward",
            C + "saves-input-copy": "saves clones of its tensor arguments",
            C + "saves-non-tensor": "saves every argument",
            C + "records-graph-in-forward":
                "run_fn under enable_grad in forward, the graph dropped by apply",
            C + "keeps-rebuilt-graph": "the rebuilt graph kept on ctx for a second backward",
            C + "keeps-backward-tensors": "the fresh leaves (and so their .grad) kept on ctx"}),
    Clause("backward re-runs `run_fn` on the arguments as forward saw them and returns, for each "
           "argument, the gradient a plain run of `run_fn(*args)` gives it;",
           {C + "recomputes-without-grad": "recomputes with gradients off",
            C + "recomputes-on-saved-tensors": "recomputes on the saved tensors themselves",
            C + "leaves-without-grad": "fresh leaves that never require grad (t.detach())",
            C + "none-taken-for-tensor": "marks the tensor slots with None",
            C + "zeros-for-unused-argument": "zeros for an argument run_fn ignores",
            C + "one-leaf-for-repeated-tensor":
                "one fresh leaf per distinct saved tensor (a memo by id)",
            C + "arguments-out-of-order": "arguments rebuilt with the tensors first, then the rest",
            C + "recomputes-in-another-dtype":
                "recomputes on float32 copies of the saved tensors",
            C + "identity-run-fn": "backpropagates only when the rebuilt output has a grad_fn"}),
    Clause("the parameters used inside `run_fn` receive their gradients in `.grad`, added to what "
           "it holds, whenever a tensor argument requires grad; frozen ones get none;",
           {C + "grad-skips-parameters": "torch.autograd.grad of the inputs only",
            C + "backward-inputs-only": "torch.autograd.backward(output, grad_output, "
                                        "inputs=leaves)",
            C + "overwrites-parameter-grad": "overwrites the parameters' .grad",
            C + "frozen-parameter": "autograd.grad over a module run_fn's every parameter, "
                                    "frozen ones too",
            C + "backward-without-graph": "backward through a rebuilt output that requires no "
                                          "grad (a frozen block, a dummy input)",
            C + "skips-zero-gradient": "returns zeros without recomputing when grad_output is "
                                       "all zero"}),
    Clause("the recomputation draws the random numbers forward drew (dropout's masks), on the CPU "
           "and on the device of each CUDA argument (the CUDA part is graded only where a GPU is "
           "present).",
           {C + "ignores-random-state": "ignores the random state",
            C + "replays-seed": "replays the seed (torch.initial_seed()), not the state",
            C + "records-state-late": "random state recorded after run_fn ran",
            C + "extra-run-fn-call": "an extra run_fn call in backward before the recomputation",
            C + "replays-only-for-dropout-modules":
                "restores the random state only when run_fn holds an nn.Dropout",
            C + "ignores-cuda-state": "restores the CPU random state only, never a CUDA "
                                      "device's"}),
)
CHECKPOINTING_RULES = {
    "values": {C + "output-not-a-tensor": "forward returns (output,), a tuple",
               C + "gradient-in-output-dtype": "gradients returned in grad_output's dtype"},
    "gradients": {C + "leaf-for-non-float": "requires_grad_() on every tensor",
                  C + "gradient-not-required": "fresh leaves require grad for every float tensor",
                  C + "reads-requires-grad":
                      "non-tensor arguments in a dict by position, output.backward",
                  C + "no-none-for-run-fn": "forgets the None for run_fn",
                  C + "no-none-for-non-tensors":
                      "returns gradients for the tensors only (no None for scale and use_tanh)"},
    "ctx": {C + "tensor-on-ctx": "arguments kept on ctx",
            C + "reuses-leaves-across-backwards":
                "fresh leaves built once, cached on ctx for a second backward",
            C + "backward-changes-state-it-reads":
                "run_fn dropped from ctx by the first backward (ctx.run_fn = None)",
            C + "saves-unversioned-alias": "saves the tensor arguments' .data",
            C + "state-shared-between-calls": "the CPU random state kept in a global",
            C + "state-on-run-fn": "random state kept on run_fn (run_fn._ckpt_rng_state)",
            C + "state-on-class": "random states on a stack kept on the class",
            C + "state-outside-ctx": "random states on a stack in a global list"},
    "caller": {C + "leaves-state-rewound": "set_rng_state without fork_rng",
               "case:forward should run run_fn on the random state it finds":
                   "forward seeds the generator (torch.manual_seed(0)) before run_fn",
               C + "forks-rng-in-forward": "runs run_fn inside torch.random.fork_rng() in forward",
               C + "changes-caller-state": "run_fn.train() in backward before the recomputation"},
}


CHECKPOINT_SEQUENTIAL_CLAUSES = (
    Clause("every layer runs once in forward, in order, in exactly `segments` consecutive groups, "
           "each through `CheckpointFunction.apply` (the last may run without it);",
           {Q + "checkpoints-nothing": "no checkpoints",
            Q + "wrong-segment-count": "len // segments chunks make too many segments",
            Q + "drops-remainder": "drops the remainder",
            Q + "first-group-plain": "the first group run plainly, the rest checkpointed",
            Q + "runs-outside-checkpoints": "one-layer groups run without a checkpoint",
            Q + "uneven-segments": "ceil(n / k) layers per segment",
            Q + "uses-torch-checkpoint": "built on torch.utils.checkpoint(use_reentrant=True)",
            Q + "plain-on-data": "the stack run plainly when x requires no grad",
            Q + "uses-torch-checkpoint-non-reentrant":
                "built on torch.utils.checkpoint(use_reentrant=False)",
            Q + "runs-layers-twice": "the whole stack run once under no_grad before the groups",
            Q + "groups-out-of-order": "groups run in reverse order",
            Q + "walks-into-blocks": "layers taken from .modules(), nn.Sequential left out",
            Q + "runs-parts-of-layers": "the layers taken as the stack's modules without "
                                        "children (.modules())"}),
    Clause("no group holds more layers than the best split into `segments` groups needs;",
           {Q + "remainder-in-one-segment": "torch's split: n // k each, the remainder in the "
                                            "last"}),
    Clause("the output is the plain stack's, dropout masks included, and so are the gradients "
           "of `x` and of every layer's parameters whenever `x` requires grad.",
           {Q + "recomputes-other-layers": "late-binding closure in the loop",
            Q + "recomputes-fewer-layers":
                "late-binding closure, the loop ending with start = end",
            Q + "cuts-graph": "each segment fed a detached copy of its input",
            Q + "float-bounds": "bounds int(i * (n / k)), computed in floating point",
            Q + "runs-no-layer": "segments - 1 groups checkpointed, the last never run",
            Q + "draws-other-masks": "the generator seeded before the groups",
            Q + "skips-hooks": "each layer called as layer.forward(h)"}),
)
CHECKPOINT_SEQUENTIAL_RULES = {
    "ctx": {Q + "runs-cached-layers": "groups cached by (number of layers, segments) across "
                                      "calls",
            Q + "state-outside-ctx": "groups cached by id(layers) across calls",
            Q + "stale-split": "the split cached by segments across calls"},
    "caller": {Q + "mutates-layers": "takes the groups off the caller's list with pop(0)",
               Q + "changes-layer-mode": "sets the caller's nn.Sequential to train()",
               Q + "wipes-layer-grads": "zero_grad(set_to_none=True) on every layer",
               Q + "runs-copies": "deep copies of the caller's layers",
               Q + "changes-caller-state": "requires_grad_() on every layer, frozen ones too",
               Q + "changes-callers-x": "requires_grad_() on the caller's batch",
               Q + "rng-not-advanced": "the whole loop inside torch.random.fork_rng"},
}


# each exercise's tables, by its name
CLAUSES = {"ReversibleCoupling": REVERSIBLE_CLAUSES, "CheckpointFunction": CHECKPOINTING_CLAUSES,
           "checkpoint_sequential": CHECKPOINT_SEQUENTIAL_CLAUSES}
RULES = {"ReversibleCoupling": REVERSIBLE_RULES, "CheckpointFunction": CHECKPOINTING_RULES,
         "checkpoint_sequential": CHECKPOINT_SEQUENTIAL_RULES}

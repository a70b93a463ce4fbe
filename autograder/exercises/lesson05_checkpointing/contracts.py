"""Lesson 05's contracts as the learner reads them: each exercise's bullets, with
the checks that enforce each and a wrong answer each check fails (autograder.clauses)."""

from ...clauses import Clause

# the prefix of each exercise's mistake ids
Q = "checkpoint_sequential/"
C = "CheckpointFunction/"
R = "ReversibleCoupling/"


REVERSIBLE_CLAUSES = (
    Clause("`ReversibleCoupling.apply(x1, x2, f, g)` returns the tuple `(y1, y2)`, which still "
           "hold those values after backward (the caller may read them again);",
           {R + "overwrites-saved-outputs": "inverts in place, into the saved outputs (the "
                                            "caller's y1 and y2 are overwritten)",
            R + "frees-saved-outputs": "frees the saved outputs' storage in backward (the "
                                       "caller's y1 and y2 with it)"}),
    Clause("forward saves **only the outputs** `y1` and `y2` (no input in any form, not even a "
           "NumPy copy; nothing tensor-valued on `ctx`; no activation of `f` or `g`, not even "
           "for a moment: forward records no graph of them, as grad is off in any forward, and "
           "the self-check measures it);",
           {R + "saves-input": "saves the inputs",
            R + "saves-activation": "saves f(x2), an activation",
            R + "tensor-on-ctx": "keeps forward's call of f as functools.partial(f, x2) on ctx",
            R + "saves-output-copy": "saves a float64 copy of the output y1 for accuracy",
            R + "keeps-a-copy-on-ctx": "keeps a flattened NumPy copy of x2 on ctx and reads x2 "
                                        "back from it",
            R + "records-graph-in-forward":
                "forward runs f and g under torch.enable_grad(), saving only y1 and y2"}),
    Clause("backward returns the gradients of `x1` and `x2` that the two equations give, `None` "
           "for `f` and `g`, even with several calls in one graph, and the same again when "
           "backward runs a second time on one graph (`retain_graph=True`); `y1` or `y2` changed "
           "in place between forward and backward makes backward raise PyTorch's in-place "
           "error; the parameters of `f` and `g` receive theirs in `.grad` (zeros, not `None`, "
           "when both incoming gradients are all zero), added to what "
           "`.grad` already holds (a frozen one, `requires_grad=False`, gets none, and backward "
           "still runs);",
           {R + "inverts-wrong-tensor": "inverts in the wrong order",
            R + "records-inversion": "records the inversion under grad and differentiates with "
                                     "respect to the rebuilt x1 and x2",
            R + "recomputes-without-grad": "recomputes with gradients off",
            R + "g-not-under-grad": "recomputes g on a detached y1",
            R + "gradients-swapped": "returns the two gradients swapped",
            R + "drops-direct-term": "RevNet's one-call backward without grad_y2's direct term",
            R + "g-on-own-leaf": "recomputes g on a fresh leaf of the saved y1",
            R + "grad-skips-parameters": "autograd.grad: parameters get nothing",
            R + "backward-inputs-only": "torch.autograd.backward with inputs=[x1, x2] only",
            R + "state-on-class": "f and g kept on the class",
            R + "reuses-leaves-across-backwards": "the inverse computed once, its leaves cached "
                                                  "on ctx for a second backward",
            R + "saves-unversioned-alias": "saves y1.data and y2.data",
            R + "frozen-parameter": "autograd.grad over x1, x2 and every parameter of f and g, "
                                    "frozen ones too",
            R + "recomputes-in-another-dtype": "fresh leaves cast to float32 (.float()) in "
                                               "backward",
            R + "skips-zero-gradient": "returns zeros without recomputing when both incoming "
                                       "gradients are all zero"}),
    Clause("a loss may use only one of the two outputs.",
           {R + "drops-an-output-gradient": "backpropagates y1's gradient only"}),
)


CHECKPOINTING_CLAUSES = (
    Clause("**returns** `run_fn(*args)`, one tensor;",
           {C + "output-not-a-tensor": "forward returns (output,), a tuple"}),
    Clause("**keeps** for backward its tensor arguments and nothing more, besides the random "
           "states it restores (on `ctx` or through `ctx.save_for_backward`, either will do): no "
           "copy of an argument, and no other tensor on `ctx` outside `ctx.save_for_backward`;",
           {C + "keeps-activations": "run_fn under enable_grad in forward",
            C + "tensor-on-ctx": "arguments kept on ctx",
            C + "saves-non-tensor": "saves every argument",
            C + "saves-input-copy": "saves clones of its tensor arguments"}),
    Clause("**records no graph** of `run_fn` in forward, whose ops save nothing, not even for a "
           "moment (the self-check measures it), and leaves nothing of what backward builds on "
           "`ctx` once backward returns (not the rebuilt graph, its fresh leaves or their "
           "gradients);",
           {C + "records-graph-in-forward":
                "run_fn under enable_grad in forward, the graph dropped by apply",
            C + "keeps-rebuilt-graph": "the rebuilt graph kept on ctx for a second backward",
            C + "keeps-backward-tensors": "the fresh leaves (and so their .grad) kept on ctx"}),
    Clause("**gradients**: those it returns for the tensor arguments are the ones `run_fn(*args)` "
           "run plainly gives, one per position;",
           {C + "recomputes-without-grad": "recomputes with gradients off",
            C + "recomputes-on-saved-tensors": "recomputes on the saved tensors themselves",
            C + "leaves-without-grad": "fresh leaves that never require grad (t.detach())",
            C + "none-taken-for-tensor": "marks the tensor slots with None",
            C + "zeros-for-unused-argument": "zeros for an argument run_fn ignores",
            C + "gradient-in-output-dtype": "gradients returned in grad_output's dtype"}),
    Clause("a tensor argument that does not require grad gets `None`;",
           {C + "leaf-for-non-float": "requires_grad_() on every tensor",
            C + "gradient-not-required": "fresh leaves require grad for every float tensor"}),
    Clause("a tensor passed in two positions gets each position's own gradient (autograd adds "
           "them up for it);",
           {C + "one-leaf-for-repeated-tensor":
                "one fresh leaf per distinct saved tensor (a memo by id)"}),
    Clause("a second backward on one graph (`retain_graph=True`) gets the same gradients again;",
           {C + "reuses-leaves-across-backwards":
                "fresh leaves built once, cached on ctx for a second backward",
            C + "backward-changes-state-it-reads":
                "run_fn dropped from ctx by the first backward (ctx.run_fn = None)"}),
    Clause("backward recomputes on the arguments as forward saw them, dtype included: an "
           "argument changed in place between forward and backward makes backward raise "
           "PyTorch's in-place error;",
           {C + "recomputes-in-another-dtype":
                "recomputes on float32 copies of the saved tensors",
            C + "saves-unversioned-alias": "saves the tensor arguments' .data"}),
    Clause("**random numbers**: when `run_fn` draws them on the CPU, the recomputation draws the "
           "same ones (dropout's masks are forward's);",
           {C + "ignores-random-state": "ignores the random state",
            C + "replays-seed": "replays the seed (torch.initial_seed()), not the state",
            C + "records-state-late": "random state recorded after run_fn ran",
            C + "extra-run-fn-call": "an extra run_fn call in backward before the recomputation",
            C + "state-shared-between-calls": "the CPU random state kept in a global",
            C + "state-on-run-fn": "random state kept on run_fn (run_fn._ckpt_rng_state)",
            C + "state-in-shared-container": "random states on a stack kept on the class",
            C + "replays-only-for-dropout-modules":
                "restores the random state only when run_fn holds an nn.Dropout"}),
    Clause("after backward the caller's random stream is where it would be without the "
           "checkpoint;",
           {C + "leaves-state-rewound": "set_rng_state without fork_rng"}),
    Clause("**on a GPU** (graded only by a grader with one, on one device; a CPU grader cannot "
           "run CUDA, so neither your self-check nor grading there checks this bullet, and the "
           "self-check's green line says so): the two bullets above hold for the generator of "
           "each CUDA tensor argument's device too;",
           {C + "ignores-cuda-state": "restores the CPU random state only, never a CUDA "
                                      "device's"}),
    Clause("**returns `None`** for `run_fn` and for every non-tensor argument;",
           {C + "no-none-for-run-fn": "forgets the None for run_fn",
            C + "no-none-for-non-tensors":
                "returns gradients for the tensors only (no None for scale and use_tanh)"}),
    Clause("**parameters** used inside `run_fn` receive their gradients in `.grad` whenever at "
           "least one tensor argument requires grad (zeros, not `None`, when the gradient that "
           "reaches the block is all zero, as a plain run leaves them); a frozen one (`requires_grad=False`, as in "
           "fine-tuning) gets none, and backward still runs, even when all are frozen and the "
           "only argument that requires grad is one `run_fn` ignores (a dummy);",
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
    Clause("**no seeding**: forward runs `run_fn` on the random state it finds and sets or draws "
           "nothing of its own (no `torch.manual_seed`), since a checkpointed model must draw "
           "the same dropout masks as the same model unchecked; the self-check compares the "
           "two.",
           {"case:forward should run run_fn on the random state it finds":
                "forward seeds the generator (torch.manual_seed(0)) before run_fn",
            C + "forks-rng-in-forward": "runs run_fn inside torch.random.fork_rng() in forward"}),
)


CHECKPOINT_SEQUENTIAL_CLAUSES = (
    Clause("every layer runs once in forward (no extra run, not even under `torch.no_grad()`), "
           "in order, in exactly `segments` consecutive groups, each "
           "group through `CheckpointFunction.apply` whether or not `x` requires grad (the last "
           "group may run without one: backward needs its activations first anyway);",
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
            Q + "runs-layers-twice": "the whole stack run once under no_grad before the groups"}),
    Clause("no group is longer than it has to be: backward rebuilds one group at a time, so the "
           "longest group's activations are all alive at once at some point, and it holds no "
           "more layers than the best split into `segments` groups needs;",
           {Q + "remainder-in-one-segment": "torch's split: n // k each, the remainder in the "
                                            "last"}),
    Clause("the output is the plain stack's (with dropout layers too, run from the same seed: "
           "the same masks), and so, whenever `x` requires grad, are the gradients of `x` and of "
           "every layer's parameters, for every number of segments from 1 to the number of "
           "layers;",
           {Q + "recomputes-other-layers": "late-binding closure in the loop",
            Q + "recomputes-fewer-layers":
                "late-binding closure, the loop ending with start = end",
            Q + "cuts-graph": "each segment fed a detached copy of its input",
            Q + "float-bounds": "bounds int(i * (n / k)), computed in floating point",
            Q + "runs-cached-layers": "groups cached by (number of layers, segments) across "
                                      "calls",
            Q + "state-kept-between-calls": "groups cached by id(layers) across calls",
            Q + "stale-split": "the split cached by segments across calls",
            Q + "runs-no-layer": "segments - 1 groups checkpointed, the last never run",
            Q + "draws-other-masks": "the generator seeded before the groups"}),
    Clause("`layers` is the caller's: read it and leave it as it was given, the same layers in "
           "the same order, each in its mode (`train()` or `eval()`), their parameters' `.grad` "
           "untouched (backward adds to it: the caller may be accumulating micro-batches).",
           {Q + "mutates-layers": "takes the groups off the caller's list with pop(0)",
            Q + "changes-layer-mode": "sets the caller's nn.Sequential to train()",
            Q + "wipes-layer-grads": "zero_grad(set_to_none=True) on every layer",
            Q + "runs-copies": "deep copies of the caller's layers"}),
)

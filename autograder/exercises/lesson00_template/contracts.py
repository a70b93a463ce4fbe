"""Lesson 00's contracts as the learner reads them: each exercise's bullets, with
the checks that enforce each and a wrong answer each check fails (autograder.clauses)."""

from ...clauses import Clause

# the layouts each exercise's domain tries (autograder.domain.LAYOUTS): the grader quotes these
# words when one fails, and the lesson's contract lists them
SQUARE_LAYOUTS = ("`x` in any layout torch's own ops accept: transposed, a column slice of a "
                  "wider tensor, or expanded (strides other than its shape's)")
WEIGHTED_SUM_LAYOUTS = ("`x1` and `x2` in any layout torch's own ops accept, each alone or both: "
                        "transposed, a column slice of a wider tensor, or expanded")
OUTER_LAYOUTS = ("`u` and `v` of any stride, each alone or both: every other element of a longer "
                 "tensor, or expanded (stride 0)")


SQUARE_CLAUSES = (
    Clause("`x` of any shape and size, a 0-d tensor and an empty one included, in float64 or "
           "float32, any finite value (the extremes in the note below included): the value and "
           "the gradient autograd gives `x ** 2`, never through a dtype narrower than `x`'s;",
           {"Square/wrong-gradient-sign": "wrong sign", "Square/uses-abs-x": "2|x|",
            "Square/nan-at-zero": "2 * y / x, from the saved output and x",
            "Square/overflows-from-output": "2 * y / x with x = 0 guarded: inf where x ** 2 "
                                            "overflows",
            "Square/underflows-from-output": "2 * y / x guarded at x = 0 and where y is inf: "
                                             "0 where x ** 2 underflows",
            "Square/makes-overflow-finite": "nan_to_num on the gradient: the largest float "
                                            "where 2x overflows",
            "Square/ignores-grad-output": "forgets grad_output",
            "Square/fails-on-empty-input": "entries multiplied in a Python loop, torch.stack",
            "Square/narrows-large-input": "float32 arithmetic when x has 10,000 entries or more"}),
    Clause("backward's memory is linear in the size of `x`: at most a few tensors of `x`'s size "
           "alive at once, never the Jacobian as a matrix;",
           {"Square/builds-jacobian": "a Jacobian as a matrix: grad_output @ torch.diag(2 * x)"}),
    Clause(f"{SQUARE_LAYOUTS}: the same value and gradient;",
           {"case:transposed inputs": "x flattened with .view(-1) in forward"}),
    Clause("forward keeps what backward needs with `ctx.save_for_backward`, and backward takes it "
           "from `ctx.saved_tensors`: nothing kept as a `ctx` attribute, on the class or in a "
           "global;",
           {"Square/tensor-on-ctx": "tensor on ctx",
            "Square/state-shared-between-calls": "x kept in a global",
            "Square/state-on-class": "x kept on the class",
            "Square/saves-untracked-alias": "saves x.data",
            "Square/saves-output-loses-sign": "saves the output, x recovered as sqrt(y)",
            "Square/bypasses-saved-tensors": "a copy of x in a module dict keyed by id(ctx)",
            "Square/cache-keyed-by-input":
                "2x cached by the tensor x in forward, saved for backward"}),
    Clause("`grad_output` may come as a non-contiguous view: the gradient must not depend on its "
           "strides;",
           {"case:view size is not compatible": "grad_output flattened with .view(-1)"}),
    Clause("backward never writes into `grad_output` (its values, its shape or its strides): "
           "autograd may read it after your backward.",
           {"Square/writes-grad-output": "grad_output multiplied in place"}),
)


WEIGHTED_SUM_CLAUSES = (
    Clause("`x1` and `x2` finite float32 or float64 tensors of the same shape, 0-d and empty "
           "included, values near the end of the range (`1e308`) too, `w1` and `w2` any Python floats, 0, tiny ones "
           "(`5e-8`) and ones at the ends of the range (`1e-310` beside `1.0`, `1e-200` beside "
           "`1e200`) included: the value and the gradients autograd gives;",
           {"WeightedSum/swaps-weights": "swapped weights",
            "WeightedSum/ignores-grad-output": "forgets grad_output",
            "WeightedSum/none-for-zero-weight": "None for a weight of 0",
            "WeightedSum/gate-on-wrong-entry": "grad_x1 gated on needs_input_grad[1]",
            "WeightedSum/fails-at-zero-weight": "the ratio w2 / w1 kept, which w1 = 0 divides by",
            "WeightedSum/fails-on-empty-input": "entries weighted in a Python loop, torch.stack",
            "WeightedSum/drops-tiny-weight": "weights below 1e-7 taken for 0",
            "WeightedSum/weight-ratio": "grad_x2 as grad_x1 * (w2 / w1), guarded at w1 = 0",
            "WeightedSum/overflows-at-large-inputs":
                "w1 * (x1 + x2) when w1 == w2: x1 + x2 overflows"}),
    Clause(f"{WEIGHTED_SUM_LAYOUTS}: the same value and gradients;",
           {"case:transposed inputs": "x1 and x2 flattened with .view(-1) in forward"}),
    Clause("backward's memory is linear in the sizes: at most a few tensors of `x1`'s size alive "
           "at once, never a Jacobian as a matrix;",
           {"WeightedSum/builds-jacobian": "each Jacobian built as w * torch.eye"}),
    Clause("backward returns one value for each of the four inputs, no more (autograd would drop "
           "an extra trailing `None` silently; the grader counts what your backward returns);",
           {"WeightedSum/wrong-gradient-count": "two gradients for four inputs",
            "WeightedSum/gradient-for-non-tensor": "a gradient for the float w1"}),
    Clause("for float64 inputs, `w1` and `w2` never pass through a narrower tensor (float32, "
           "bfloat16 or float16): the value and both gradients keep every digit of them;",
           {"WeightedSum/float32-constant": "torch.tensor(w1) in forward, a float32 constant"}),
    Clause("each call's backward uses that call's own `w1` and `w2`, even when another call runs "
           "before it, on the same tensors included; a tensor forward keeps for backward, if any, "
           "is one autograd guards against in-place changes;",
           {"WeightedSum/state-shared-between-calls": "weights in a global dict, keyed by x1",
            "WeightedSum/state-in-default-argument":
                "weights kept in a mutable default argument of forward",
            "WeightedSum/state-on-input": "weights hung on the input x1",
            "WeightedSum/weight-as-tensor-on-ctx": "weights made into tensors on ctx",
            "WeightedSum/state-on-class": "weights in a dict on the class, keyed by x1",
            "WeightedSum/cache-keyed-by-input":
                "the output cached by the tensors x1, x2 and the weights"}),
    Clause("backward never writes into `grad_output` (its values, its shape or its strides): "
           "autograd may read it after your backward.",
           {"WeightedSum/writes-grad-output": "grad_output scaled in place for grad_x2"}),
)


OUTER_CLAUSES = (
    Clause("the value and both gradients autograd gives `torch.outer(u, v)`, for any $m$ and $n$ "
           "($0$ included), each gradient of its input's shape;",
           {"Outer/grad-output-on-wrong-side": "grad_u = grad_output.T @ v (the wrong side)",
            "Outer/wrong-gradient-shape": "sums over the wrong index",
            "Outer/returns-gradient-of-another-shape":
                "grad_u as a (1, m) row, which the engine sums to (m,)",
            "Outer/ignores-grad-output": "forgets grad_output",
            "Outer/fails-on-empty-input": "rows built in a Python loop and joined by torch.stack",
            "Outer/narrows-large-input": "grad_v rounded through float32 when m > 64"}),
    Clause("backward's memory is linear in the sizes: at most a few tensors of the output's size "
           "alive at once, never a Jacobian as a matrix;",
           {"Outer/builds-jacobian": "both Jacobians built and summed over the outputs"}),
    Clause(f"{OUTER_LAYOUTS}: the same value and gradients;",
           {"case:column slice inputs": "u spread down the rows with as_strided, stride 1"}),
    Clause("a gradient for each input only when it is needed, `None` otherwise (can backward tell "
           "which inputs need none?);",
           {"Outer/computes-frozen-gradient": "ignores needs_input_grad",
            "Outer/gate-on-wrong-entry": "entries of needs_input_grad swapped",
            "Outer/computes-unneeded-gradient":
                "both gradients computed, None returned for the unneeded one"}),
    Clause("forward keeps only `u` and `v`, in the way autograd guards against in-place changes, "
           "and backward takes them from `ctx.saved_tensors`: no copy kept aside, nothing set on "
           "the class (a call counter included);",
           {"Outer/saves-more-than-inputs": "saves the output",
            "Outer/saves-untracked-alias": "saves u.data and v.data",
            "Outer/state-on-class": "u and v kept on the class",
            "Outer/state-shared-between-calls": "u and v kept in a module global",
            "Outer/bypasses-saved-tensors": "copies of u and v in a module dict keyed by id(ctx)",
            "Outer/cache-keyed-by-input": "the output cached by the tensors u and v"}),
    Clause("backward computes the gradients itself, from your sums, without asking autograd;",
           {"Outer/asks-autograd": "asks autograd for both gradients inside backward"}),
    Clause("`grad_output` may come as a non-contiguous view (transposed, or every other column of "
           "a wider tensor): the gradients must not depend on its strides;",
           {"case:view size is not compatible": "grad_output flattened with .view(-1)"}),
    Clause("backward never writes into `grad_output` (its values, its shape or its strides): "
           "autograd may read it after your backward.",
           {"Outer/writes-grad-output": "grad_output transposed in place with t_"}),
)

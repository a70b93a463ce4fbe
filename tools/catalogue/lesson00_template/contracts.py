"""Lesson 00's contracts as data (``tools.catalogue.clauses``), keyed by exercise: ``CLAUSES``,
each exercise's bullets as the lesson lists them, each with the checks that enforce it and a
wrong answer of this catalogue that each check fails; ``RULES``, the checks through which
each exercise enforces the Function contract's rules (``autograder.function_contract``),
which the page states once and no bullet repeats, each with its witness. Grading never
reads them (``tools.catalogue.contract_of`` does)."""

from ..clauses import Clause

SQUARE_CLAUSES = (
    Clause("the value and the gradient autograd gives `x ** 2`, for every `x` at which that "
           "gradient is finite, `x = 0` included.",
           {"Square/wrong-gradient-sign": "wrong sign", "Square/uses-abs-x": "2|x|",
            "Square/nan-at-zero": "2 * y / x, from the saved output and x",
            "Square/ignores-grad-output": "forgets grad_output",
            "Square/saves-output-loses-sign": "saves the output, x recovered as sqrt(y)",
            "Square/wrong-where-square-overflows":
                "2 * y / x guarded at x = 0: inf where x ** 2 overflows float32",
            "Square/wrong-at-tiny-x": "the gradient set to 0 where |x| < 1e-6"}),
)
SQUARE_RULES = {
    "values": {"Square/wrong-gradient-shape": "gradient squeezed",
               "Square/fails-on-empty-input": "entries multiplied in a Python loop, torch.stack",
               "Square/narrows-large-input": "float32 arithmetic when x has 10,000 entries or "
                                             "more",
               "Square/float16-step": "forward in float16 for float32 x, cast back",
               "case:transposed inputs": "x flattened with .view(-1) in forward",
               "case:view size is not compatible": "grad_output flattened with .view(-1)"},
    "by-hand": {"Square/builds-jacobian":
                "a Jacobian as a matrix: grad_output @ torch.diag(2 * x)",
                "Square/asks-autograd":
                "autograd of x ** 2 recomputed in backward, torch.autograd.grad",
                "case:calls Tensor.backward":
                "x ** 2 recomputed in backward and .backward() called on it"},
    "ctx": {"Square/tensor-on-ctx": "tensor on ctx",
            "Square/state-shared-between-calls": "x kept in a global",
            "Square/state-on-class": "x kept on the class",
            "Square/saves-untracked-alias": "saves x.data",
            "Square/state-on-input": "2x hung on the input x, read back through the saved x",
            "Square/bypasses-saved-tensors": "a copy of x in a module dict keyed by id(ctx)",
            "Square/cache-keyed-by-input":
                "2x cached by the tensor x in forward, saved for backward"},
    "unwritten": {"Square/writes-grad-output": "grad_output multiplied in place"},
}


WEIGHTED_SUM_CLAUSES = (
    Clause("the value and the gradients autograd gives `w1 * x1 + w2 * x2`, for Python floats "
           "`w1` and `w2`;",
           {"WeightedSum/swaps-weights": "swapped weights",
            "WeightedSum/ignores-grad-output": "forgets grad_output",
            "WeightedSum/none-for-zero-weight": "None for a weight of 0",
            "WeightedSum/fails-at-zero-weight": "the ratio w2 / w1 kept, which w1 = 0 divides by",
            "WeightedSum/drops-tiny-weight": "weights below 1e-7 taken for 0",
            "WeightedSum/float32-constant": "torch.tensor(w1) in forward, a float32 constant",
            "WeightedSum/rounds-weight": "weights rounded to 12 decimals"}),
    Clause("forward saves only what the gradients read: a saved tensor is held in memory until "
           "backward runs.",
           {"WeightedSum/saves-unread-input":
                "x1 and x2 saved though no gradient reads them, floats on ctx"}),
)
WEIGHTED_SUM_RULES = {
    "values": {"WeightedSum/wrong-gradient-shape": "grad_output squeezed",
               "WeightedSum/fails-on-empty-input":
                   "entries weighted in a Python loop, torch.stack",
               "case:transposed inputs": "x1 and x2 flattened with .view(-1) in forward",
               "WeightedSum/returns-input": "x1 itself returned when w1 = 1 and w2 = 0",
               "WeightedSum/returns-input-view": "x1.view_as(x1) returned when w1 = 1 and w2 = 0"},
    "gradients": {"WeightedSum/gate-on-wrong-entry": "grad_x1 gated on needs_input_grad[1]",
                  "WeightedSum/wrong-gradient-count": "two gradients for four inputs",
                  "WeightedSum/gradient-for-non-tensor": "a gradient for the float w1"},
    "by-hand": {"WeightedSum/builds-jacobian": "each Jacobian built as w * torch.eye",
                "WeightedSum/asks-autograd":
                    "autograd of the weighted sum at zeros, torch.autograd.grad"},
    "ctx": {"WeightedSum/state-shared-between-calls": "weights in a global dict, keyed by x1",
            "WeightedSum/state-in-default-argument":
                "weights kept in a mutable default argument of forward",
            "WeightedSum/state-on-input": "weights hung on the input x1",
            "WeightedSum/weight-as-tensor-on-ctx": "weights made into tensors on ctx",
            "WeightedSum/state-on-class": "weights in a dict on the class, keyed by x1",
            "WeightedSum/cache-keyed-by-input":
                "the output cached by the tensors x1, x2 and the weights"},
    "unwritten": {"WeightedSum/writes-grad-output": "grad_output scaled in place for grad_x2"},
}


OUTER_CLAUSES = (
    Clause("the value and both gradients autograd gives `torch.outer(u, v)`, for any $m$ and "
           "$n$, $0$ included;",
           {"Outer/grad-output-on-wrong-side": "grad_u = grad_output.T @ v (the wrong side)",
            "Outer/wrong-gradient-shape": "sums over the wrong index",
            "Outer/ignores-grad-output": "forgets grad_output",
            "Outer/fails-on-empty-input": "rows built in a Python loop and joined by torch.stack"}),
    Clause("forward saves no memory it allocated;",
           {"Outer/saves-more-than-inputs": "saves the output"}),
    Clause("backward does no work for a gradient nobody needs.",
           {"Outer/computes-unneeded-gradient":
                "both gradients computed, None returned for the unneeded one",
            "Outer/does-unneeded-work":
                "grad_output's transpose copied before the gates, used by grad_v only"}),
)
OUTER_RULES = {
    "values": {"Outer/narrows-large-input": "grad_v rounded through float32 when m > 64",
               "Outer/returns-input-view": "v.unsqueeze(0) when u is [1.0]",
               "case:column slice inputs": "u spread down the rows with as_strided, stride 1",
               "case:view size is not compatible": "grad_output flattened with .view(-1)"},
    "gradients": {"Outer/computes-frozen-gradient": "ignores needs_input_grad",
                  "Outer/gate-on-wrong-entry": "entries of needs_input_grad swapped"},
    "by-hand": {"Outer/builds-jacobian": "both Jacobians built and summed over the outputs",
                "Outer/asks-autograd": "asks autograd for both gradients inside backward"},
    "ctx": {"Outer/saves-untracked-alias": "saves u.data and v.data",
            "Outer/state-on-class": "u and v kept on the class",
            "Outer/state-shared-between-calls": "u and v kept in a module global",
            "Outer/state-on-input": "v hung on u as u.partner, read back in backward",
            "case:an attribute on its input u":
                "an attribute set on the input u in forward, unused",
            "Outer/bypasses-saved-tensors": "copies of u and v in a module dict keyed by id(ctx)",
            "Outer/cache-keyed-by-input": "the output cached by the tensors u and v"},
    "unwritten": {"Outer/writes-grad-output": "grad_output transposed in place with t_"},
}


# each exercise's tables, by its name
CLAUSES = {"Square": SQUARE_CLAUSES, "WeightedSum": WEIGHTED_SUM_CLAUSES, "Outer": OUTER_CLAUSES}
RULES = {"Square": SQUARE_RULES, "WeightedSum": WEIGHTED_SUM_RULES, "Outer": OUTER_RULES}

"""Lesson 02's contracts as the learner reads them: each exercise's bullets, with
the checks that enforce each and a wrong answer each check fails (autograder.clauses)."""

from ...clauses import Clause

# the layouts each contract names, as a failed layout case cites them (autograder.domain)
LINEAR_LAYOUT_CLAUSE = ("x, weight and bias of any strides F.linear accepts (a transposed, "
                        "sliced or expanded view too)")
BILINEAR_LAYOUT_CLAUSE = ("x1, x2, weight and bias of any strides F.bilinear accepts (a "
                          "transposed, sliced or expanded view too)")


MY_LINEAR_CLAUSES = (
    Clause("`x` of shape $(*, \\text{in})$: any number of leading dimensions, **none** included, "
           "each of any size, **0** included (an empty batch);",
           {"MyLinearFunction/two-d-only": "2-D only, as in PyTorch's docs",
            "MyLinearFunction/fails-without-leading-dims":
                "leading dims flattened with flatten(0, -2): no dim -2 for 1-D x",
            "MyLinearFunction/transposes-a-vector":
                "grad_weight = grad_output.mT @ x (learner trial 53)",
            "MyLinearFunction/returns-gradient-of-another-shape":
                "grad_weight as (G.mT @ x).sum(0) past 2-D: a leading dim left for 4-D x",
            "MyLinearFunction/empty-batch": "x flattened as x.reshape(rows, -1)",
            "MyLinearFunction/squeezes-feature-dim":
                "1-D x unsqueezed, output and grad_x squeeze()d: shape () for out = 1"}),
    Clause("`weight` of shape $(\\text{out}, \\text{in})$, `bias` of shape $(\\text{out},)$ or "
           "`None`: the value and the gradients `F.linear` gives, each gradient of its input's "
           "shape, the value computed in the inputs' dtype;",
           {"MyLinearFunction/computes-in-wider-dtype": "forward in float64, cast back",
            "MyLinearFunction/grad-x-transposed": "grad_x = grad_output @ weight.T",
            "MyLinearFunction/wrong-gradient-shape": "grad_weight = x.T @ grad_output",
            "MyLinearFunction/bias-sums-features": "bias gradient summed over dim 0 only",
            "raised:TypeError": "+ bias with no bias=None path"}),
    Clause("the same for `x`, `weight` and `bias` of any strides `F.linear` accepts (a "
           "transposed, sliced or expanded view too), and for a `grad_output` that is not "
           "contiguous in memory (autograd hands one to backward for `y.transpose(0, 1)`);",
           {"case:with transposed inputs": "the saved x flattened with .view in backward",
            "case:with transposed inputs, bias=None":
                "x flattened with .view on the bias=None path only",
            "case:view size is not compatible":
                "grad_output.view on a non-contiguous grad_output"}),
    Clause("in backward, each gradient computed only if `ctx.needs_input_grad` asks for it (its "
           "input required grad when forward ran), and `None` otherwise;",
           {"MyLinearFunction/ignores-needs-input-grad": "ignores needs_input_grad",
            "MyLinearFunction/gate-on-wrong-entry": "grad_x gated on needs_input_grad[1]",
            "MyLinearFunction/computes-unneeded-gradient":
                "every gradient without a matmul, then None where not needed",
            "MyLinearFunction/reads-past-needs-input-grad":
                "needs_input_grad[2] read without a bias",
            "MyLinearFunction/computes-frozen-gradient":
                "grad_bias summed whenever there is a bias, then None when it is frozen",
            "MyLinearFunction/reads-requires-grad": "grad_x gated on x.requires_grad (review 59)"}),
    Clause("backward never writes into `grad_output`: each gradient it returns is a new tensor;",
           {"MyLinearFunction/writes-grad-output":
                "grad_x written into grad_output's buffer where shapes match",
            "MyLinearFunction/returns-view-of-grad-output":
                "grad_bias as g2[0] for one row: a view of grad_output"}),
    Clause("forward keeps what backward reads with `ctx.save_for_backward`, one call's state per "
           "`ctx`: nothing on the class, on an input tensor or in a global (a mutable default "
           "argument is one);",
           {"MyLinearFunction/tensor-on-ctx": "tensors kept on ctx",
            "MyLinearFunction/drops-needed-input":
                "saves x only when x needs a gradient (the reads swapped)",
            "MyLinearFunction/reads-unsaved-input":
                "saves conditionally, backward reads weight.shape for g2",
            "case:two calls in one graph": "the bias flag in a module global",
            "MyLinearFunction/state-shared-between-calls":
                "x's shape in a module global, for grad_x's reshape",
            "MyLinearFunction/reads-unguarded-input":
                "x and weight kept in a module dict keyed by id(ctx)",
            "MyLinearFunction/state-on-input": "x hung on weight.__dict__ (review 59b)",
            "MyLinearFunction/state-in-default-argument":
                "the bias flag in a dict default of forward, keyed by id(ctx) (review 59b)"}),
    Clause("backward applies the formulas you derived yourself: no `F.linear` or autograd calls "
           "inside it.", {"MyLinearFunction/asks-autograd": "asks autograd inside backward",
                          "MyLinearFunction/linear-in-backward":
                              "F.linear for the products in backward"}),
)


FUSED_CLAUSES = (
    Clause("shapes and strides as in Exercise 1, an empty batch and a non-contiguous "
           "`grad_output` included: the value and the gradients autograd gives "
           "`torch.relu(F.linear(x, weight, bias))`, each of its input's shape;",
           {"FusedLinearReLU/grad-bias-unmasked": "grad_bias from the unmasked grad_output",
            "FusedLinearReLU/grad-x-transposed": "grad_x = grad_z @ weight.T",
            "FusedLinearReLU/grad-x-unmasked": "forgets the ReLU in backward",
            "FusedLinearReLU/bias-sums-features":
                "grad_bias summed over dims range(ndim - 1): dim=() for 1-D x",
            "FusedLinearReLU/returns-gradient-of-another-shape":
                "grad_weight as (G.mT @ x).sum(0) past 2-D: a leading dim left for 4-D x",
            "FusedLinearReLU/empty-batch": "x flattened as x.reshape(rows, -1)",
            "FusedLinearReLU/squeezes-feature-dim":
                "1-D x unsqueezed, output and grad_x squeeze()d: shape () for out = 1",
            "unproven:wrong-value": "mask taken before the bias is added",
            "case:with transposed inputs, bias=None":
                "x flattened with .view on the bias=None path only"}),
    Clause("the gradients autograd gives `torch.relu(F.linear(x, weight, bias))` at every "
           "pre-activation, exactly 0 and however small included, for any `grad_output`, nan "
           "and $\\pm\\infty$ entries included; the value also where a pre-activation "
           "overflows to $-\\infty$ or $+\\infty$; the pre-activation computed in the "
           "inputs' dtype;",
           {"FusedLinearReLU/computes-in-wider-dtype":
                "the pre-activation in float64, the output cast back",
            "FusedLinearReLU/output-multiplies-mask":
                "forward returns z * mask: nan where z overflows to -inf",
            "FusedLinearReLU/mask-includes-zero": "mask z >= 0",
            "FusedLinearReLU/mask-multiplies-infinite-grad":
                "grad_output times the mask: inf * 0 is nan where z <= 0",
            "FusedLinearReLU/mask-drops-tiny-positive": "mask z > finfo.eps",
            "FusedLinearReLU/changes-grad-output-where-on":
                "nan_to_num(grad_output * mask): nan and inf rewritten where z > 0"}),
    Clause("forward saves, with `ctx.save_for_backward`, at least what your gradients read of "
           "`x` and `weight`, and for the ReLU the least that backward needs to know of the "
           "pre-activation (what that is, is question 1; the fine print says how it is graded): "
           "made in forward, not recomputed in backward, whichever inputs require grad;",
           {"FusedLinearReLU/saves-float-pre-activation": "saves the float pre-activation",
            "FusedLinearReLU/saves-float-mask": "a float mask",
            "FusedLinearReLU/saves-integer-mask": "a uint8 mask",
            "FusedLinearReLU/saves-no-mask":
                "no mask saved: the pre-activation recomputed in backward",
            "FusedLinearReLU/saves-packed-mask": "the mask packed 8 to a byte",
            "FusedLinearReLU/saves-more-than-one-mask": "the mask and its negation both saved",
            "FusedLinearReLU/mask-views-wider-storage":
                "mask a view of cat([z > 0, z < 0]) (review 59d)",
            "FusedLinearReLU/tensor-on-ctx": "mask kept as ctx.mask",
            "FusedLinearReLU/drops-needed-input":
                "saves weight only when weight needs a gradient",
            "case:only x requiring grad":
                "the float pre-activation saved when the weight is frozen (review 60)"}),
    Clause("no float tensor of the output's size saved (neither the pre-activation nor the "
           "output), and nothing kept after forward in a global, a mutable default argument, "
           "the class, an input tensor, a closure or the storage behind the returned output;",
           {"FusedLinearReLU/saves-float-output": "saves the float output, reads y > 0 in backward",
            "FusedLinearReLU/keeps-float-pre-activation":
                "the float pre-activation kept in a module dict keyed by id(ctx)",
            "FusedLinearReLU/state-in-default-argument":
                "the output kept in a dict default of forward (review 59b)",
            "FusedLinearReLU/state-on-input": "the mask hung on x.__dict__ (review 59b)",
            "FusedLinearReLU/output-views-wider-storage":
                "output a view into cat([relu(z), z]) (review 59d)"}),
    Clause("backward never writes into `grad_output`, and still skips the gradients "
           "`ctx.needs_input_grad` rules out.",
           {"FusedLinearReLU/writes-grad-output": "masks grad_output in place",
            "FusedLinearReLU/ignores-needs-input-grad": "ignores needs_input_grad",
            "FusedLinearReLU/computes-frozen-gradient":
                "grad_bias computed whatever needs_input_grad says",
            "FusedLinearReLU/gate-on-wrong-entry": "grad_x gated on needs_input_grad[1]",
            "FusedLinearReLU/computes-unneeded-gradient":
                "every gradient by broadcasting, needs_input_grad ignored",
            "FusedLinearReLU/reads-requires-grad": "grad_x gated on x.requires_grad (review 59)"}),
)


BILINEAR_CLAUSES = (
    Clause("each of the four gradients is computed only when `ctx.needs_input_grad` asks for it, "
           "and is `None` otherwise, whichever of the inputs require grad (one, two, three or "
           "all four);",
           {"Bilinear/computes-frozen-gradient": "ignores needs_input_grad",
            "Bilinear/gate-on-wrong-entry": "grad_x1 gated on needs_input_grad[1]",
            "Bilinear/computes-unneeded-gradient":
                "all four gradients computed, None returned where not needed",
            "Bilinear/reads-missing-bias-flag":
                "needs_input_grad[3] read through a local without a bias",
            "Bilinear/reads-unsaved-input":
                "saves selectively, then reads x1.shape when only x1 needs a gradient",
            "Bilinear/drops-needed-input": "saves x2 only when weight needs a gradient",
            "Bilinear/reads-requires-grad": "grad_x1 gated on x1.requires_grad (review 59)"}),
    Clause("the value and the gradients `F.bilinear` gives, each of its input's shape, for "
           "`x1`, `x2`, `weight` and `bias` of any strides `F.bilinear` accepts (a transposed, "
           "sliced or expanded view too) and for any `grad_output` autograd hands you, a "
           "non-contiguous one included, the value computed in the inputs' dtype;",
           {"Bilinear/computes-in-wider-dtype": "forward in float64, cast back",
            "unproven:wrong-value": "grad_x2 sums over the wrong input",
            "Bilinear/weight-indices-swapped":
                "grad_x2 reads weight[o, j, i] where the shapes let it (n1 == n2)",
            "Bilinear/empty-batch": "grad_bias over numel // out rows",
            "Bilinear/bias-sums-features": "bias gradient summed over dim 0 only",
            "Bilinear/returns-gradient-of-another-shape":
                "grad_bias kept as (1, out) by keepdim=True",
            "Bilinear/squeezes-feature-dim":
                "1-D x1, x2 unsqueezed, output and grads squeeze()d: shape () for out = 1",
            "case:view size is not compatible":
                "grad_output.view on a non-contiguous grad_output",
            "case:with transposed inputs": "the saved x1 and x2 flattened with .view",
            "case:with transposed inputs, bias=None":
                "x1 and x2 flattened with .view on the bias=None path only",
            "case:with transposed x1 alone":
                "outer product of x1 and x2 rows flattened with .view"}),
    Clause("forward keeps what backward reads with `ctx.save_for_backward`, one call's state per "
           "`ctx`, as in Exercise 1: nothing on the class, on an input tensor or in a global (a "
           "mutable default argument is one);",
           {"Bilinear/state-shared-between-calls":
                "out kept in a module global, for grad_bias's reshape",
            "Bilinear/state-on-input": "the bias flag hung on x1.__dict__ (review 59b)",
            "Bilinear/state-in-default-argument":
                "grad_weight kept in a list default of backward (review 59b)",
            "Bilinear/saves-untracked-alias": "x1, x2 and weight saved as .data"}),
    Clause("backward never writes into `grad_output`, and each gradient it returns is a new "
           "tensor, as in Exercise 1: `grad_output` itself or a view of it is not one;",
           {"Bilinear/returns-view-of-grad-output":
                "grad_bias = grad_output itself for 1-D inputs (review 59b)",
            "Bilinear/writes-grad-output": "grad_output scaled in place for grad_x1 (review 59b)"}),
    Clause("backward written by hand: deriving the gradients is the exercise.",
           {"Bilinear/asks-autograd": "asks torch.autograd.grad for the needed inputs only"}),
)

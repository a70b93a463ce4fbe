"""Lesson 02's layout clauses, which a failed layout case quotes, and the Function contract's
rules as each exercise's checks enforce them, each check with its witness: grading reads the
"values" rule's checks (``global_state.state_before_values`` blames state kept outside ctx for
a failure of one). The exercises' bullets are the catalogue's (tools/catalogue/lesson02_linear)."""

from ...function_contract import rule_reference

# the layouts rule 1 of the Function contract asks for, as a failed layout case cites them
# (autograder.domain)
LINEAR_LAYOUT_CLAUSE = ("x, weight and bias of any strides F.linear accepts (a transposed, "
                        f"sliced or expanded view too) {rule_reference('values')}")
BILINEAR_LAYOUT_CLAUSE = ("x1, x2, weight and bias of any strides F.bilinear accepts (a "
                          f"transposed, sliced or expanded view too) {rule_reference('values')}")


# the Function contract's rules (autograder.function_contract), as MyLinearFunction's checks
# enforce them
MY_LINEAR_RULES = {
    "values": {
        "MyLinearFunction/two-d-only": "2-D only, as in PyTorch's docs",
        "MyLinearFunction/ignores-grad-output":
            "grad_weight without grad_output: x summed over the rows for every output",
        "MyLinearFunction/fails-without-leading-dims":
            "leading dims flattened with flatten(0, -2): no dim -2 for 1-D x",
        "MyLinearFunction/transposes-a-vector": "grad_weight = grad_output.mT @ x (learner trial 53)",
        "MyLinearFunction/empty-batch": "x flattened as x.reshape(rows, -1)",
        "MyLinearFunction/wrong-output-dtype": "x = x.float() in forward, weight cast to match",
        "MyLinearFunction/squeezes-feature-dim":
            "1-D x unsqueezed, output and grad_x squeeze()d: shape () for out = 1",
        "MyLinearFunction/grad-x-transposed": "grad_x = grad_output @ weight.T",
        "MyLinearFunction/wrong-gradient-shape": "grad_weight = x.T @ grad_output",
        "MyLinearFunction/bias-sums-features": "bias gradient summed over dim 0 only",
        "raised:TypeError": "+ bias with no bias=None path",
        "case:with transposed inputs": "the saved x flattened with .view in backward",
        "case:with transposed inputs, bias=None":
            "x flattened with .view on the bias=None path only",
        "case:view size is not compatible": "grad_output.view on a non-contiguous grad_output",
        "MyLinearFunction/drops-needed-input":
            "saves x only when x needs a gradient (the reads swapped)",
        "MyLinearFunction/reads-unsaved-input":
            "saves conditionally, backward reads weight.shape for g2"},
    "gradients": {
        "MyLinearFunction/ignores-needs-input-grad": "ignores needs_input_grad",
        "MyLinearFunction/gate-on-wrong-entry": "grad_x gated on needs_input_grad[1]",
        "MyLinearFunction/reads-past-needs-input-grad": "needs_input_grad[2] read without a bias",
        "MyLinearFunction/reads-requires-grad": "grad_x gated on x.requires_grad (review 59)",
        "MyLinearFunction/not-none-on-every-path":
            "zeros for every input on an empty batch, needed or not"},
    "by-hand": {"MyLinearFunction/asks-autograd": "asks autograd inside backward"},
    "ctx": {
        "MyLinearFunction/tensor-on-ctx": "tensors kept on ctx",
        "case:two calls in one graph": "the bias flag in a module global",
        "MyLinearFunction/state-shared-between-calls":
            "x's shape in a module global, for grad_x's reshape",
        "MyLinearFunction/reads-unguarded-input":
            "x and weight kept in a module dict keyed by id(ctx)",
        "MyLinearFunction/state-on-input": "x hung on weight.__dict__ (review 59b)",
        "MyLinearFunction/state-in-default-argument":
            "the bias flag in a dict default of forward, keyed by id(ctx) (review 59b)"},
    "unwritten": {
        "MyLinearFunction/writes-grad-output":
            "grad_x written into grad_output's buffer where shapes match"},
}


FUSED_RULES = {
    "values": {
        "FusedLinearReLU/grad-bias-unmasked": "grad_bias from the unmasked grad_output",
        "FusedLinearReLU/mask-from-grad-output":
            "backward's mask from grad_output: torch.relu(grad_output)",
        "FusedLinearReLU/grad-x-transposed": "grad_x = grad_z @ weight.T",
        "FusedLinearReLU/grad-x-unmasked": "forgets the ReLU in backward",
        "FusedLinearReLU/bias-sums-features":
            "grad_bias summed over dims range(ndim - 1): dim=() for 1-D x",
        "FusedLinearReLU/empty-batch": "x flattened as x.reshape(rows, -1)",
        "FusedLinearReLU/squeezes-feature-dim":
            "1-D x unsqueezed, output and grad_x squeeze()d: shape () for out = 1",
        "unproven:wrong-value": "mask taken before the bias is added",
        "case:with transposed inputs, bias=None":
            "x flattened with .view on the bias=None path only",
        "FusedLinearReLU/drops-needed-input": "saves weight only when weight needs a gradient"},
    "gradients": {
        "FusedLinearReLU/ignores-needs-input-grad": "ignores needs_input_grad",
        "FusedLinearReLU/gate-on-wrong-entry": "grad_x gated on needs_input_grad[1]",
        "FusedLinearReLU/reads-requires-grad": "grad_x gated on x.requires_grad (review 59)",
        "FusedLinearReLU/not-none-on-every-path":
            "zeros for every input where the ReLU is off everywhere"},
    "ctx": {
        "FusedLinearReLU/tensor-on-ctx": "mask kept as ctx.mask",
        "FusedLinearReLU/state-in-default-argument":
            "the output kept in a dict default of forward (review 59b)",
        "FusedLinearReLU/state-on-input": "the mask hung on x.__dict__ (review 59b)"},
    "unwritten": {"FusedLinearReLU/writes-grad-output": "masks grad_output in place"},
}


BILINEAR_RULES = {
    "values": {
        "Bilinear/wrong-output-dtype": "inputs cast to float32 in forward, the float64 ones saved",
        "unproven:wrong-value": "grad_x2 sums over the wrong input",
        "Bilinear/weight-indices-swapped":
            "grad_x2 reads weight[o, j, i] where the shapes let it (n1 == n2)",
        "Bilinear/empty-batch": "grad_bias over numel // out rows",
        "Bilinear/bias-sums-features": "bias gradient summed over dim 0 only",
        "Bilinear/squeezes-feature-dim":
            "1-D x1, x2 unsqueezed, output and grads squeeze()d: shape () for out = 1",
        "case:view size is not compatible": "grad_output.view on a non-contiguous grad_output",
        "case:with transposed inputs": "the saved x1 and x2 flattened with .view",
        "case:with transposed inputs, bias=None":
            "x1 and x2 flattened with .view on the bias=None path only",
        "case:with transposed x1 alone": "outer product of x1 and x2 rows flattened with .view",
        "Bilinear/reads-unsaved-input":
            "saves selectively, then reads x1.shape when only x1 needs a gradient",
        "Bilinear/drops-needed-input": "saves x2 only when weight needs a gradient",
        "Bilinear/two-d-only": "einsums with a letter for the position: 2-D inputs alone",
        "Bilinear/ignores-grad-output": "grad_weight without the grad_output factor"},
    "gradients": {
        "Bilinear/computes-frozen-gradient": "ignores needs_input_grad",
        "Bilinear/gate-on-wrong-entry": "grad_x1 gated on needs_input_grad[1]",
        "Bilinear/reads-missing-bias-flag":
            "needs_input_grad[3] read through a local without a bias",
        "Bilinear/reads-requires-grad": "grad_x1 gated on x1.requires_grad (review 59)",
        "Bilinear/not-none-on-every-path":
            "zeros for every input when grad_output is all zeros"},
    "by-hand": {"Bilinear/asks-autograd": "asks torch.autograd.grad for the needed inputs only"},
    "ctx": {
        "Bilinear/state-shared-between-calls":
            "out kept in a module global, for grad_bias's reshape",
        "Bilinear/state-on-input": "the bias flag hung on x1.__dict__ (review 59b)",
        "Bilinear/state-in-default-argument":
            "grad_weight kept in a list default of backward (review 59b)",
        "Bilinear/saves-untracked-alias": "x1, x2 and weight saved as .data"},
    "unwritten": {
        "Bilinear/writes-grad-output": "grad_output scaled in place for grad_x1 (review 59b)"},
}

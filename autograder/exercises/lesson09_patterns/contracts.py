"""Lesson 09's contracts as the learner reads them: each exercise's bullets, with
the checks that enforce each and a wrong answer each check fails (autograder.clauses)."""

from ...clauses import Clause

# the ids of the exercises' mistakes start with their names
BM_, PROD_, CUMSUM_ = "BroadcastMul/", "ProdOverDim/", "Cumsum/"
SELECT_, NORMALIZE_, CUMMAX_ = "IndexSelect/", "Normalize/", "CumMax/"
# the message of a gradient added into a buffer of another dtype (index_add, scatter_add)
OTHER_DTYPE = "case:added values into a tensor of another dtype"


BROADCAST_MUL_CLAUSES = (
    Clause("`a` and `b` of **any** two broadcastable shapes: either may be the one broadcast, "
           "along dims of size 1 (against a dim of size 0 too), missing leading dims, or both, "
           "and either may be 0-dim; the value and the gradients autograd gives `a * b`, inputs "
           "holding zeros included, and factors so small or so large that `a * b` underflows to "
           "0 or overflows to inf; `a` and `b` of one dtype, float64 or float32 (mixed dtypes "
           "are not tried), backward returning each gradient in that dtype;",
           {BM_ + "multiplies-by-own-input": "gradients swapped",
            "case:keep the input's dtype":
                "reduced in float64 and returned in float64 for float32 inputs",
            BM_ + "divides-by-input": "the other input recovered as y / a (nan where a holds 0)",
            BM_ + "sum-of-no-dims-sums-all":
                "leading dims summed with t.sum(()) when there are none",
            "case:the output size 0 was not summed":
                "sums only the dims where the input is smaller than the output"}),
    Clause("backward returns gradients of **exactly** `a.shape` and `b.shape`: it reduces the "
           "broadcast dims itself (the autograd engine sums some gradients of a broadcast shape "
           "for you; that does not count);",
           {BM_ + "broadcast-dims-not-summed": "forgot to sum the broadcast dims",
            "case:a dim of size 1 that a has was dropped": "sum without keepdim",
            BM_ + "extra-size-1-dims":
                "summed with keepdim after left-padding (extra dims of size 1)",
            BM_ + "size-1-dims-left-aligned":
                "size-1 dims summed left-aligned, before the leading dims"}),
    Clause("`None`, and no work, for the gradient of an input that needs none.",
           {BM_ + "ignores-needs-input-grad": "computes grad_b always, returns None when not "
                                              "needed"}),
)


PROD_OVER_DIM_CLAUSES = (
    Clause("`x` with at least one dim and `dim` a Python int, negative allowed, along which `x` "
           "has at least one entry: the value of `torch.prod(x, dim)` and, as the gradient for "
           "each entry, $g$ times the product of the other entries of its slice, up to rounding "
           "(the fine print below puts numbers on it: any order of the products passes), "
           "whichever dim `dim` is, and however small a non-zero entry, subnormals included, "
           "backward returning the gradient in `x`'s dtype (float64 and float32);",
           {PROD_ + "grad-output-not-unsqueezed": "grad_output not unsqueezed",
            PROD_ + "grad-output-unsqueezed-at-last-dim":
                "grad_output unsqueezed at the last dim, not at dim",
            PROD_ + "last-dim-only": "exclusive products written for the last dim only",
            PROD_ + "inclusive-products": "inclusive cumprods (no shift)",
            PROD_ + "tiny-entry-as-zero": "zeros counted with a tolerance (x.abs() < 1e-12)",
            PROD_ + "divides-subnormal":
                "y / x on slices with no zero (zeros counted exactly)",
            "case:keep the input's dtype":
                "exclusive products taken in float64, returned in float64"}),
    Clause("the gradient **finite** whether a slice along `dim` holds no zero, exactly one "
           "zero, or several, and **exactly 0** (not a tiny number) wherever the product of the "
           "other entries holds a zero.",
           {PROD_ + "divides-by-zero": "prod / x divides by zero",
            "case:wrong on a slice with exactly one zero": "y/x with nan_to_num (one zero gets 0)",
            "case:wrong on a slice with two zeros": "several zeros treated like one",
            PROD_ + "not-exact-at-zeros": "zeros nudged to 1e-30 before dividing"}),
)


CUMSUM_CLAUSES = (
    Clause("`x` with at least one dim and `dim` a Python int, negative allowed, along which `x` "
           "has at least one entry: the value and the gradient autograd gives "
           "`torch.cumsum(x, dim)`, backward returning the gradient in `x`'s dtype (float64 "
           "and float32);",
           {CUMSUM_ + "scans-forward": "forward scan in backward",
            CUMSUM_ + "total-minus-inclusive": "total minus the inclusive running sum (off by one)",
            CUMSUM_ + "last-dim-only": "flips and scans the last dim, whatever dim is",
            CUMSUM_ + "wrong-first-entry":
                "total less an exclusive scan shifted with roll (wraps round)",
            "unproven:wrong-value": "flips only once",
            "case:keep the input's dtype": "the reversed scan in float64, returned in float64"}),
    Clause("each entry of the gradient within a few roundings of the entries of `grad_output` it "
           "adds up, also where `grad_output` decays along `dim` (the self-check tries $10^8$ "
           "down to $10^{-8}$ in float64, $10^3$ down to $10^{-3}$ in float32);",
           {CUMSUM_ + "total-minus-prefix": "total minus the exclusive prefix",
            CUMSUM_ + "loses-late-entries": "reversed scan in float32"}),
    Clause("forward saves no tensor that a correct backward can do without: your answer to step "
           "3 says which those are.",
           {CUMSUM_ + "saves-tensor": "saves x"}),
)


INDEX_SELECT_CLAUSES = (
    Clause("`x` with at least one dim and `index` a 1-D int64 tensor whose entries may "
           "**repeat**, or that may be **empty**: the value and the gradient autograd gives "
           "`torch.index_select(x, 0, index)`, backward returning that gradient in `x`'s dtype "
           "(float32 too);",
           {SELECT_ + "writes-repeated-rows": "grad[index] = grad_output",
            SELECT_ + "repeats-not-summed": "index_reduce with 'mean': repeats averaged, not added",
            "case:keep the input's dtype": "zeros in the default dtype",
            OTHER_DTYPE: "buffer from torch.zeros(ctx.shape), float32 whatever x is"}),
    Clause("forward saves, with `ctx.save_for_backward`, nothing that a correct backward can do "
           "without and **no byte of its own** (nothing made only to be saved), and keeps no "
           "tensor as a `ctx` attribute: what backward needs, and where each "
           "part goes, is your answer to step 4.",
           {SELECT_ + "saves-tensor": "saves x",
            SELECT_ + "saves-copy-of-index": "index.contiguous() saved, a copy of a strided index",
            SELECT_ + "tensor-on-ctx": "index kept on ctx"}),
)


NORMALIZE_CLAUSES = (
    Clause("`x` with at least one dim, rows along the last, and `eps` a Python float from "
           "$10^{-12}$ to $10$: the value and the gradient autograd gives "
           "`F.normalize(x, dim=-1, eps=eps)`, on rows whose norm is above `eps` and on rows "
           "**below** it (zeros included), however close to `eps` on either side, each row on "
           "the side of `eps` where `F.normalize` puts it (the note below says what that means "
           "at `eps` itself), in float32 as in float64, backward returning the gradient in "
           "`x`'s dtype;",
           {NORMALIZE_ + "missing-projection": "missing projection term",
            NORMALIZE_ + "at-eps-float32":
                "saves the clamped divisor; above eps told by divisor > eps",
            NORMALIZE_ + "eps-compared-in-float64":
                "float32 norm compared with eps in float64 (norm.double() >= eps)",
            NORMALIZE_ + "wrong-below-eps": "projection on rows below eps too",
            NORMALIZE_ + "case-from-length-of-y":
                "above eps told from the length of y (length > 0.99)",
            NORMALIZE_ + "just-below-eps-as-above": "norm for the test computed on x.float()",
            NORMALIZE_ + "near-above-as-below":
                "above eps told from the divisor with a safety margin "
                "(divisor > ctx.eps * (1 + 1e-6))",
            NORMALIZE_ + "rounded-test-off-grid-eps":
                "above eps told from the saved reciprocal (1 / max(norm, eps) < 1 / eps)",
            NORMALIZE_ + "eps-as-float32-tensor":
                "eps as torch.tensor(eps) in forward and backward",
            NORMALIZE_ + "row-quantity-lost-dim": "radial sum without keepdim",
            NORMALIZE_ + "norm-not-f-normalize": "norm as (x * x).sum(-1).sqrt()",
            NORMALIZE_ + "norm-in-another-dtype":
                "the norm taken in float64 for accuracy, saved in float64",
            "case:keep the input's dtype": "the projection taken in float64, returned in float64"}),
    Clause("backward in **closed form**: a few tensors of `x`'s size, never a $d \\times d$ "
           "Jacobian per row;",
           {NORMALIZE_ + "builds-jacobian": "builds each row's Jacobian"}),
    Clause("forward saves the output and one number per row in `x`'s dtype, nothing else: "
           "which number is your answer to step 5.",
           {NORMALIZE_ + "saves-input": "saves x",
            NORMALIZE_ + "row-number-in-another-dtype":
                "x's norm saved in float64 (placed right, bytes of its own)"}),
)


CUMMAX_CLAUSES = (
    Clause("`x` with at least one dim and `dim` any of its dims, negative too: the value and the "
           "gradient autograd gives through `torch.cummax(x, dim).values`, ties included (as "
           "`torch.cummax` breaks them), and entries one ulp apart told apart, backward returning "
           "the gradient in `x`'s dtype (float64 and float32);",
           {CUMMAX_ + "ties-to-earliest": "ties to the earliest of equal values (strict >)",
            CUMMAX_ + "gathers-with-indices":
                "grad_output gathered with the indices (the forward's direction)",
            CUMMAX_ + "returns-grad-output": "the gradient of each output to its own position",
            CUMMAX_ + "loses-shared-gradients":
                "an assignment where outputs share an entry (scatter without add)",
            CUMMAX_ + "last-dim-only": "scatter_add along the last dim, whatever dim is",
            CUMMAX_ + "negative-dim-changed": "a negative dim turned into -1 in backward",
            CUMMAX_ + "indices-from-rounded-copy": "running maximum found on a float32 copy",
            OTHER_DTYPE: "buffer from torch.zeros(grad_output.shape), float32 whatever x is",
            "case:keep the input's dtype": "scatter_add into a float64 buffer, returned in float64"}),
    Clause("forward saves, with `ctx.save_for_backward`, nothing that a correct backward can do "
           "without and **no tensor made only to be saved** (no conversion, no copy): what "
           "backward needs, and why it is enough, is yours to find.",
           {CUMMAX_ + "saves-float-tensor": "saves values and indices",
            CUMMAX_ + "saves-more-than-needed": "saves the indices and an arange of positions",
            CUMMAX_ + "narrow-indices": "the indices saved as int32",
            CUMMAX_ + "saves-rebuilt-indices":
                "the indices rebuilt by hand and saved (torch.cummax's discarded)"}),
)

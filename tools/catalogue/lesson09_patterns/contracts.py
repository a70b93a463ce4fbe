"""Lesson 09's contracts as data (``tools.catalogue.clauses``), keyed by exercise: ``CLAUSES``,
each exercise's bullets as the lesson lists them, each with the checks that enforce it and a
wrong answer of this catalogue that each check fails; ``RULES``, the checks through which
each exercise enforces the Function contract's rules (``autograder.function_contract``),
which the page states once and no bullet repeats, each with its witness. Grading never
reads them (``tools.catalogue.contract_of`` does)."""

from ..clauses import Clause

# the ids of the exercises' mistakes start with their names
BM_, PROD_, CUMSUM_ = "BroadcastMul/", "ProdOverDim/", "Cumsum/"
SELECT_, NORMALIZE_, CUMMAX_ = "IndexSelect/", "Normalize/", "CumMax/"
# the message of a gradient added into a buffer of another dtype (index_add, scatter_add)
OTHER_DTYPE = "case:added values into a tensor of another dtype"


BROADCAST_MUL_CLAUSES = (
    Clause("backward returns each gradient in exactly its input's shape, never a shape the "
           "engine would still have to sum down;",
           {BM_ + "gradient-left-to-engine": "leaves the broadcast sums to the engine "
                                             "(needs_input_grad respected)",
            BM_ + "extra-size-1-dims": "summed with keepdim after left-padding (extra dims of "
                                       "size 1)"}),
    Clause("each gradient exact to rounding where an input holds 0 and where `a * b` underflows "
           "to 0 or overflows to inf.",
           {BM_ + "divides-by-input": "the other input recovered as y / a (nan where a holds 0)",
            BM_ + "computes-in-float32": "the gradients computed in float32 for float64 inputs"}),
)
BROADCAST_MUL_RULES = {
    "values": {BM_ + "multiplies-by-own-input": "gradients swapped",
               BM_ + "sum-of-no-dims-sums-all":
                   "leading dims summed with t.sum(()) when there are none"},
    "gradients": {"case:a dim of size 1 that a has was dropped": "sum without keepdim",
                  "case:keep the input's dtype":
                      "reduced in float64 and returned in float64 for float32 inputs",
                  BM_ + "ignores-needs-input-grad":
                      "computes grad_b always, returns None when not needed",
                  BM_ + "size-1-dims-left-aligned":
                      "size-1 dims summed left-aligned, before the leading dims"},
    "ctx": {BM_ + "tensor-on-ctx": "a and b kept as ctx attributes",
            "case:two calls in one graph": "the shapes kept in a module global"},
    "unwritten": {"case:modified grad_output in place":
                      "grad_output multiplied in place when one gradient is asked for"},
}


PROD_OVER_DIM_CLAUSES = (
    Clause("the gradient correct to rounding along any `dim`;",
           {PROD_ + "last-dim-only": "exclusive products written for the last dim only",
            PROD_ + "inclusive-products": "inclusive cumprods (no shift)",
            PROD_ + "tiny-entry-as-zero": "zeros counted with a tolerance (x.abs() < 1e-12)"}),
    Clause("the gradient is finite whether a slice holds no zero, one zero or several, and "
           "exactly 0 where a zero of the slice makes the product of the others 0 (slices whose "
           "partial products underflow or overflow are exempt).",
           {PROD_ + "divides-by-zero": "prod / x divides by zero",
            "case:wrong on a slice with exactly one zero": "y/x with nan_to_num (one zero gets 0)",
            "case:wrong on a slice with two zeros": "several zeros treated like one",
            PROD_ + "not-exact-at-zeros": "zeros nudged to 1e-30 before dividing"}),
)
PROD_OVER_DIM_RULES = {
    "values": {PROD_ + "grad-output-not-unsqueezed": "grad_output not unsqueezed",
               PROD_ + "grad-output-unsqueezed-at-last-dim":
                   "grad_output unsqueezed at the last dim, not at dim",
               "case:on a 0-d x": "exclusive products by narrow: raises on a 0-d x",
               "case:empty along dim": "exclusive products by narrow(dim, 1, size - 1): raises "
                                       "on an x empty along dim"},
    "gradients": {"case:keep the input's dtype":
                      "exclusive products taken in float64, returned in float64"},
    "ctx": {PROD_ + "tensor-on-ctx": "x kept as a ctx attribute"},
    "unwritten": {PROD_ + "writes-input": "zeros overwritten with ones in the saved x "
                                          "(x[x == 0] = 1)"},
}


CUMSUM_CLAUSES = (
    Clause("each entry of the gradient within a few roundings of the entries of `grad_output` it "
           "adds up, also where `grad_output` decays along `dim`;",
           {CUMSUM_ + "total-minus-prefix": "total minus the exclusive prefix",
            CUMSUM_ + "loses-late-entries": "reversed scan in float32"}),
    Clause("forward saves no tensor that a correct backward can do without.",
           {CUMSUM_ + "saves-tensor": "saves x"}),
)
CUMSUM_RULES = {
    "values": {CUMSUM_ + "scans-forward": "forward scan in backward",
               CUMSUM_ + "total-minus-inclusive": "total minus the inclusive running sum (off by one)",
               CUMSUM_ + "last-dim-only": "flips and scans the last dim, whatever dim is",
               CUMSUM_ + "wrong-first-entry":
                   "total less an exclusive scan shifted with roll (wraps round)",
               CUMSUM_ + "raises-on-0-d": "dim normalised with dim % x.dim() in forward",
               "unproven:wrong-value": "flips only once"},
    "gradients": {"case:keep the input's dtype":
                      "the reversed scan in float64, returned in float64"},
    "by-hand": {CUMSUM_ + "builds-jacobian": "an upper-triangular matrix of ones"},
}


INDEX_SELECT_CLAUSES = (
    Clause("forward saves nothing that a correct backward can do without, and no tensor made "
           "only to be saved.",
           {SELECT_ + "saves-tensor": "saves x",
            SELECT_ + "saves-copy-of-index": "index.contiguous() saved, a copy of a strided index"}),
)
INDEX_SELECT_RULES = {
    "values": {SELECT_ + "writes-repeated-rows": "grad[index] = grad_output",
               SELECT_ + "repeats-not-summed": "index_reduce with 'mean': repeats averaged, not added",
               SELECT_ + "raises-on-0-d":
                   "in-place index_add_ on torch.zeros, the shape kept in two parts",
               SELECT_ + "view-on-strided-x": "x flattened with x.view(x.shape[0], -1)",
               OTHER_DTYPE: "buffer from torch.zeros(ctx.shape), float32 whatever x is"},
    "gradients": {"case:keep the input's dtype": "zeros in the default dtype"},
    "ctx": {SELECT_ + "tensor-on-ctx": "index kept on ctx",
            "case:kept state outside ctx": "the index kept in a module global"},
    "by-hand": {SELECT_ + "builds-jacobian": "a one-hot matrix product"},
}


NORMALIZE_CLAUSES = (
    Clause("each row takes the gradient of its side of `eps`, placed by its norm as "
           "`F.normalize` computes it; a row whose norm is within a relative $10^{-3}$ of `eps` "
           "may take either side;",
           {NORMALIZE_ + "wrong-below-eps": "projection on rows below eps too",
            NORMALIZE_ + "boundary-below-eps":
                "above eps told from the length of y (length > 0.99)",
            NORMALIZE_ + "nan-on-zero-row":
                "both cases mixed by multiplying with a mask (nan from 0 x inf on a zero row)",
            NORMALIZE_ + "near-above-as-below":
                "above eps told from the divisor with isclose "
                "(~torch.isclose(divisor, torch.full_like(divisor, ctx.eps)))"}),
    Clause("the memory forward's saved tensors add, beyond what a next layer `y @ W` already "
           "keeps for its own backward, is at most one number per row, in `x`'s dtype.",
           {NORMALIZE_ + "saves-input": "saves x",
            NORMALIZE_ + "row-number-in-another-dtype":
                "x's norm saved in float64 (placed right, bytes of its own)",
            NORMALIZE_ + "saves-more-than-a-number-per-row":
                "saves y, the divisor and a bool mask per row"}),
)
NORMALIZE_RULES = {
    "values": {NORMALIZE_ + "missing-projection": "missing projection term",
               NORMALIZE_ + "row-quantity-lost-dim": "radial sum without keepdim"},
    "gradients": {"case:keep the input's dtype":
                      "the projection taken in float64, returned in float64"},
    "by-hand": {NORMALIZE_ + "builds-jacobian": "builds each row's Jacobian"},
    "unwritten": {NORMALIZE_ + "writes-grad-output":
                      "the projection subtracted from grad_output in place, always"},
}


CUMMAX_CLAUSES = (
    Clause("where entries tie for the running maximum, the gradient goes where autograd sends "
           "the gradient of `torch.cummax(x, dim).values`;",
           {CUMMAX_ + "ties-to-earliest": "ties to the earliest of equal values (strict >)"}),
    Clause("forward saves nothing that a correct backward can do without, and no tensor made "
           "only to be saved.",
           {CUMMAX_ + "saves-float-tensor": "saves values and indices",
            CUMMAX_ + "saves-more-than-needed": "saves the indices and an arange of positions",
            CUMMAX_ + "narrow-indices": "the indices saved as int32",
            CUMMAX_ + "saves-rebuilt-indices":
                "the indices rebuilt by hand and saved (torch.cummax's discarded)"}),
)
CUMMAX_RULES = {
    "values": {CUMMAX_ + "gathers-with-indices":
                   "grad_output gathered with the indices (the forward's direction)",
               CUMMAX_ + "returns-grad-output": "the gradient of each output to its own position",
               CUMMAX_ + "loses-shared-gradients":
                   "an assignment where outputs share an entry (scatter without add)",
               CUMMAX_ + "last-dim-only": "scatter_add along the last dim, whatever dim is",
               CUMMAX_ + "negative-dim-changed": "a negative dim turned into -1 in backward",
               CUMMAX_ + "indices-from-rounded-copy": "running maximum found on a float32 copy",
               CUMMAX_ + "raises-on-0-d": "dim normalised with dim % x.dim() in forward",
               OTHER_DTYPE: "buffer from torch.zeros(grad_output.shape), float32 whatever x is"},
    "gradients": {"case:keep the input's dtype":
                      "scatter_add into a float64 buffer, returned in float64"},
    "ctx": {"case:kept state outside ctx": "the indices of the last call kept in a module global"},
}


# each exercise's tables, by its name
CLAUSES = {
    "BroadcastMul": BROADCAST_MUL_CLAUSES,
    "ProdOverDim": PROD_OVER_DIM_CLAUSES,
    "Cumsum": CUMSUM_CLAUSES,
    "IndexSelect": INDEX_SELECT_CLAUSES,
    "Normalize": NORMALIZE_CLAUSES,
    "CumMax": CUMMAX_CLAUSES,
}
RULES = {
    "BroadcastMul": BROADCAST_MUL_RULES,
    "ProdOverDim": PROD_OVER_DIM_RULES,
    "Cumsum": CUMSUM_RULES,
    "IndexSelect": INDEX_SELECT_RULES,
    "Normalize": NORMALIZE_RULES,
    "CumMax": CUMMAX_RULES,
}

"""Lesson 07's contracts as data (``tools.catalogue.clauses``), keyed by exercise: ``CLAUSES``,
each exercise's bullets as the lesson lists them, each with the checks that enforce it and a
wrong answer of this catalogue that each check fails; ``RULES``, the checks through which
each exercise enforces the Function contract's rules (``autograder.function_contract``),
which the page states once and no bullet repeats, each with its witness. Grading never
reads them (``tools.catalogue.contract_of`` does)."""

from ..clauses import Clause

SORT_CLAUSES = (
    Clause("`indices` are int64, each row a permutation with `x.gather(-1, indices) == values` "
           "(ties in any order), marked with `ctx.mark_non_differentiable`; at ties, the "
           "gradient of `x` follows your own `indices`.",
           {"SortWithIndices/gathers-instead-of-scattering": "gather instead of scatter",
            "SortWithIndices/positions-by-value": "positions found by comparing values",
            "SortWithIndices/ties-in-another-order":
                "stable sort's indices returned, argsort's saved",
            "SortWithIndices/indices-not-marked": "indices not marked non-differentiable",
            "SortWithIndices/marks-a-copy-of-indices": "a clone of the indices marked",
            "SortWithIndices/indexes-with-every-row": "every row's indices at once",
            "SortWithIndices/right-on-one-row-only":
                "the inverse read by grad_values[..., inverse], right on one row only"}),
    Clause("Forward saves what backward needs and nothing besides, at most 8 bytes per element "
           "of `x` in all.",
           {"SortWithIndices/saves-float-tensor": "saves the values too",
            "SortWithIndices/saves-more-than-one-permutation":
                "indices and their inverse both saved",
            "SortWithIndices/indices-narrowed": "indices saved as int16",
            "SortWithIndices/saves-beyond-permutation":
                "int32 indices and an unused bool mask of x's non-finite entries"}),
    Clause("Backward allocates at most 64 bytes per element of `x`, whatever the length of a "
           "row.",
           {"SortWithIndices/backward-memory-grows-with-row":
                "the permutation matrix, a one-hot of the indices, multiplied in"}),
)

SORT_RULES = {
    "values": {"SortWithIndices/sorted-in-float32":
                   "sorts a float32 copy of x, gathers the values from x",
               "SortWithIndices/float32-step": "scattered into torch.zeros (float32)",
               "case:x of shape (0, 5)":
                   "the saved dtype picked from indices.max(), raising on an empty x",
               "raised:RuntimeError": "scatter along dim 0"},
    "ctx": {"SortWithIndices/tensor-on-ctx": "indices kept as a ctx attribute",
            "SortWithIndices/state-on-class": "indices kept on the Function class"},
}


SPLIT_CLAUSES = (
    Clause("The caller may write into either half in place, and a write into `x` afterwards "
           "leaves both halves as they were.",
           {"SplitHalves/returns-views-of-x": "views returned",
            "SplitHalves/outputs-not-writable": "chunks of a clone"}),
    Clause("A half the loss does not use costs nothing: no tensor is made for its gradient, and "
           "when no gradient reaches either half, backward allocates nothing.",
           {"SplitHalves/gradients-materialised": "set_materialize_grads not called",
            "SplitHalves/none-gradient-not-handled": "None gradient concatenated",
            "SplitHalves/tensor-when-both-none": "zeros when both gradients are None"}),
    Clause("Between forward and backward the Function keeps no tensor alive, `x` included.",
           {"SplitHalves/saves-x": "x saved to read its shape in backward",
            "SplitHalves/zeros-saved-in-forward":
                "zeros of a half made in forward and saved, concatenated in backward",
            "SplitHalves/saves-a-tensor": "the half width saved as a 0-d tensor"}),
    Clause("Backward allocates at most 1.25 times the bytes of `x` in all, whichever halves the "
           "loss used.",
           {"SplitHalves/zeros-for-missing-half": "zeros built for the missing half",
            "SplitHalves/gradient-in-wider-dtype":
                "the gradient buffer built as float64 whatever x's dtype",
            "SplitHalves/pads-both-halves": "each half padded to full width, the two added",
            "SplitHalves/allocates-beyond-gradient":
                "both halves made contiguous before the cat"}),
)

SPLIT_RULES = {
    "values": {"SplitHalves/float32-step": "the gradient built in torch.zeros (float32)",
               "SplitHalves/unused-half-not-zero": "new_empty, the missing half left unwritten",
               "case:x of shape (0, 4)":
                   "halves by reshape(*lead, 2, -1).unbind(-2), raising on an empty x",
               "case:x of shape (3, 0)": "torch.split(x, h), one piece when h is 0"},
    "ctx": {"SplitHalves/state-shared-between-calls": "x's shape kept in a module global"},
}


RELU_CLAUSES = (
    Clause("`x` itself is returned, written in place, and autograd knows it: a loss built on "
           "`x` afterwards gets the gradient through the clamp, and a leaf that requires grad "
           "gets autograd's own leaf RuntimeError (raised once forward has written; "
           "`torch.relu_` refuses before writing).",
           {"ReLUInPlace/mark-dirty-missing": "mark_dirty not called",
            "ReLUInPlace/returns-new-tensor": "returns a new tensor",
            "ReLUInPlace/dirty-not-returned": "marked dirty, x.view_as(x) returned",
            "ReLUInPlace/own-leaf-guard":
                "its own leaf guard with torch.relu_'s text, under no_grad too",
            "ReLUInPlace/forward-under-enable-grad": "the clamp made under torch.enable_grad()"}),
    Clause("Afterwards `x == torch.relu(x)` exactly, and the gradient at $x = 0$ is 0, as "
           "`torch.relu`'s.",
           {"ReLUInPlace/write-not-exact": "masked_fill_ of x < -1e-6",
            "ReLUInPlace/gradient-at-zero": "gradient 1 at x == 0",
            "ReLUInPlace/mask-always-true": "mask y >= 0 after the clamp"}),
    Clause("Forward allocates no tensor as large as `x` in bytes, the memory that writing in "
           "place saves.",
           {"ReLUInPlace/allocates-as-much-as-x":
                "torch.relu(x) computed out of place, copied into x",
            "ReLUInPlace/boolean-mask-indexing": "x[neg] = torch.zeros_like(x[neg])"}),
    Clause("Forward makes no tensor to save beyond one byte per element of `x`.",
           {"ReLUInPlace/saves-copy": "a clone of the output saved"}),
)

RELU_RULES = {
    "values": {"ReLUInPlace/float32-step": "the gradient computed in float32 (grad_output.float())",
               "ReLUInPlace/writes-into-a-copy": "clamps x.reshape(-1), a copy for a transposed x",
               "unproven:wrong-value": "the mask y / y with nan made 0",
               "raised:RuntimeError": "clamps x.view(-1), which needs contiguous memory",
               "case:x of shape (0, 3)": "x.min() to skip the clamp, which raises on an empty x"},
    "unwritten": {"ReLUInPlace/writes-grad-output": "grad_output modified in place"},
    "ctx": {"ReLUInPlace/tensor-on-ctx": "the output kept as a ctx attribute",
            "ReLUInPlace/state-outside-ctx": "masks on a module-global stack, popped in backward"},
}


ABS_IN_PLACE_CLAUSES = (
    Clause("As for `ReLUInPlace`: `x` itself is returned, written in place and known to "
           "autograd, a leaf that requires grad gets PyTorch's own RuntimeError, and afterwards "
           "`x == torch.abs(x)` exactly.",
           {"AbsInPlace/mark-dirty-missing": "mark_dirty not called",
            "AbsInPlace/returns-new-tensor": "a new tensor returned",
            "AbsInPlace/dirty-not-returned": "marked dirty, x[...] returned",
            "AbsInPlace/own-leaf-guard":
                "its own leaf guard with torch.abs_'s text, under no_grad too",
            "AbsInPlace/forward-under-enable-grad": "the write made under torch.enable_grad()",
            "AbsInPlace/write-not-exact": "the write negates only x < -1e-6"}),
    Clause("The gradient is `torch.abs`'s at every value of `x`, 0 at $x = 0$ included.",
           {"AbsInPlace/bool-mask-takes-sides-at-zero": "a bool mask x > 0",
            "AbsInPlace/sign-nonzero-at-zero": "an int8 sign that is +1 at 0 (signbit)",
            "AbsInPlace/one-sign-mask": "a bool x < 0 multiplied in",
            "AbsInPlace/bool-of-nonzero": "a bool of the sign, True for -1 as for +1",
            "AbsInPlace/sign-as-uint8": "the sign saved as uint8",
            "AbsInPlace/sign-truncated-by-cast": "x.clamp(-1, 1) cast to int8"}),
    Clause("Forward allocates nothing of `x`'s size, and saves at most one byte per element of "
           "`x` in all.",
           {"AbsInPlace/allocates-as-much-as-x": "the sign taken with torch.sign(x), then int8",
            "AbsInPlace/boolean-mask-indexing": "x[x < 0] *= -1",
            "AbsInPlace/saved-dtype-too-wide": "the sign saved as a float tensor",
            "AbsInPlace/saves-narrow-copy-of-x": "a float8 copy of x, its sign taken in backward"}),
    Clause("Backward still works after the rest of the model writes into the returned `x` in "
           "place again.",
           {"AbsInPlace/sign-read-after-write": "sign read from the returned tensor",
            "AbsInPlace/sign-of-output": "an int8 sign taken after the write",
            "AbsInPlace/saves-output": "a bool x < 0 and the returned tensor for the zeros"}),
)

ABS_IN_PLACE_RULES = {
    "values": {"AbsInPlace/sign-in-narrower-dtype": "the sign of x.half(), as int8",
               "AbsInPlace/writes-into-a-copy": "abs_ of x.reshape(-1), a copy for a transposed x",
               "AbsInPlace/float32-step": "the gradient computed in float32 (grad_output.float())",
               "unproven:wrong-value": "the sign x / |x| with nan made 0"},
    "unwritten": {"AbsInPlace/writes-grad-output": "grad_output multiplied by the sign in place"},
    "ctx": {"AbsInPlace/tensor-on-ctx": "the int8 sign kept as a ctx attribute",
            "AbsInPlace/saves-nothing": "the int8 sign kept in a module global"},
}


# each exercise's tables, by its name
CLAUSES = {
    "SortWithIndices": SORT_CLAUSES,
    "SplitHalves": SPLIT_CLAUSES,
    "ReLUInPlace": RELU_CLAUSES,
    "AbsInPlace": ABS_IN_PLACE_CLAUSES,
}
RULES = {
    "SortWithIndices": SORT_RULES,
    "SplitHalves": SPLIT_RULES,
    "ReLUInPlace": RELU_RULES,
    "AbsInPlace": ABS_IN_PLACE_RULES,
}

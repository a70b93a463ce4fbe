"""Lesson 07's contracts as the learner reads them: each exercise's bullets, with
the checks that enforce each and a wrong answer each check fails (autograder.clauses)."""

from ...clauses import Clause


SORT_CLAUSES = (
    Clause("`x` of any shape, 0-dim and empty ((0, 5), (3, 0)) included: the values of "
           "`torch.sort(x, dim=-1)` and int64 indices of `x`'s shape, each row a permutation "
           "with `x.gather(-1, indices) == values` (ties in any order); the gradient of `x` is "
           "the one `x.gather(-1, indices)` gets for your indices;",
           {"SortWithIndices/gathers-instead-of-scattering": "gather instead of scatter",
            "SortWithIndices/positions-by-value": "positions found by comparing values",
            "SortWithIndices/ties-in-another-order":
                "stable sort's indices returned, argsort's saved",
            "SortWithIndices/sorted-in-float32":
                "sorts a float32 copy of x, gathers the values from x",
            "SortWithIndices/float32-step": "scattered into torch.zeros (float32)",
            "case:x of shape (0, 5)":
                "the saved dtype picked from indices.max(), raising on an empty x"}),
    Clause("`indices` marked with `ctx.mark_non_differentiable`;",
           {"SortWithIndices/indices-not-marked": "indices not marked non-differentiable",
            "SortWithIndices/marks-a-copy-of-indices": "a clone of the indices marked"}),
    Clause("forward saves, with `ctx.save_for_backward`, what backward needs and nothing "
           "besides: decide what that is, and in how many bytes (the self-check looks at every "
           "tensor forward saves);",
           {"SortWithIndices/saves-float-tensor": "saves the values too",
            "SortWithIndices/saves-more-than-one-permutation":
                "indices and their inverse both saved",
            "SortWithIndices/indices-narrowed": "indices saved as int16",
            "SortWithIndices/saves-beyond-permutation":
                "int32 indices and an unused bool mask of x's non-finite entries",
            "SortWithIndices/tensor-on-ctx": "indices kept as a ctx attribute",
            "SortWithIndices/state-on-class": "indices kept on the Function class"}),
    Clause("backward receives `grad_values` (perhaps not contiguous) and `grad_indices` (zeros, "
           "which it ignores) and routes `grad_values` back along the last dimension as you "
           "derived above, each row with its own indices;",
           {"SortWithIndices/indexes-with-every-row": "every row's indices at once",
            "SortWithIndices/right-on-one-row-only":
                "the inverse read by grad_values[..., inverse], right on one row only",
            "raised:RuntimeError": "scatter along dim 0"}),
    Clause("backward allocates at most 64 bytes per element of `x`, whatever the length of a "
           "row (the self-check measures it on rows of 64; the int64 zeros autograd hands "
           "backward for `grad_indices` count too).",
           {"SortWithIndices/backward-memory-grows-with-row":
                "the permutation matrix, a one-hot of the indices, multiplied in"}),
)


SPLIT_CLAUSES = (
    Clause("the two halves as **fresh** tensors, which the caller may write into in place, and "
           "the gradient of `x` autograd gives them, for `x` of any leading shape, empty "
           "included, such as shapes (0, 4) and (3, 0);",
           {"SplitHalves/returns-views-of-x": "views returned",
            "SplitHalves/outputs-not-writable": "chunks of a clone",
            "SplitHalves/state-shared-between-calls": "x's shape kept in a module global",
            "SplitHalves/float32-step": "the gradient built in torch.zeros (float32)",
            "SplitHalves/unused-half-not-zero": "new_empty, the missing half left unwritten",
            "case:x of shape (0, 4)":
                "halves by reshape(*lead, 2, -1).unbind(-2), raising on an empty x",
            "case:x of shape (3, 0)": "torch.split(x, h), one piece when h is 0"}),
    Clause("a half the loss does not use costs nothing: autograd makes no zeros for its "
           "gradient, and when neither half's gradient is defined, backward returns no gradient "
           "and allocates nothing;",
           {"SplitHalves/gradients-materialised": "set_materialize_grads not called",
            "SplitHalves/none-gradient-not-handled": "None gradient concatenated",
            "SplitHalves/tensor-when-both-none": "zeros when both gradients are None"}),
    Clause("forward saves no tensor, `x` included;",
           {"SplitHalves/saves-x": "x saved to read its shape in backward",
            "SplitHalves/zeros-saved-in-forward":
                "zeros of a half made in forward and saved, concatenated in backward",
            "SplitHalves/saves-a-tensor": "the half width saved as a 0-d tensor"}),
    Clause("backward allocates at most 1.25 times the bytes of `x` in all, whichever halves "
           "the loss used (measured on every `x` that is not empty).",
           {"SplitHalves/zeros-for-missing-half": "zeros built for the missing half",
            "SplitHalves/gradient-in-wider-dtype":
                "the gradient buffer built as float64 whatever x's dtype",
            "SplitHalves/pads-both-halves": "each half padded to full width, the two added",
            "SplitHalves/allocates-beyond-gradient":
                "both halves made contiguous before the cat"}),
)


RELU_CLAUSES = (
    Clause("`x` itself is returned, and autograd knows it was written: a loss built on `x` "
           "afterwards gets the gradient through the clamp, and a leaf that requires grad gets a "
           "RuntimeError from PyTorch itself, not from your code (as `torch.relu_` does);",
           {"ReLUInPlace/mark-dirty-missing": "mark_dirty not called",
            "ReLUInPlace/returns-new-tensor": "returns a new tensor",
            "ReLUInPlace/own-leaf-guard":
                "its own leaf guard with torch.relu_'s text, under no_grad too",
            "ReLUInPlace/forward-under-enable-grad": "the clamp made under torch.enable_grad()"}),
    Clause("`x` of any shape (empty included) and any strides an in-place write accepts, entries "
           "at 0, beside 0 or infinite: afterwards `x == torch.relu(x)` exactly (`-0.0 == 0.0`, "
           "so either zero passes), and the gradient is `torch.relu`'s, **0 at $x = 0$** "
           "included, as for `MyReLU` in lesson 01 (NaN entries are outside the contract);",
           {"ReLUInPlace/write-not-exact": "masked_fill_ of x < -1e-6",
            "ReLUInPlace/gradient-at-zero": "gradient 1 at x == 0",
            "ReLUInPlace/mask-always-true": "mask y >= 0 after the clamp",
            "ReLUInPlace/mask-in-float32": "the mask x.float() > 0",
            "ReLUInPlace/float32-step": "the gradient computed in float32 (grad_output.float())",
            "ReLUInPlace/writes-into-a-copy": "clamps x.reshape(-1), a copy for a transposed x",
            "ReLUInPlace/subnormal-read-as-zero":
                "the mask y > finfo.tiny, a cutoff at the smallest normal number",
            "unproven:wrong-value": "the mask y / y with nan made 0",
            "raised:RuntimeError": "clamps x.view(-1), which needs contiguous memory",
            "case:x of shape (0, 3)": "x.min() to skip the clamp, which raises on an empty x"}),
    Clause("forward allocates no new tensor as large as `x` in bytes (the memory writing in "
           "place saves), for `x` in float64, float32, float16 or bfloat16, mixed-sign, "
           "all-negative or all-positive;",
           {"ReLUInPlace/allocates-as-much-as-x":
                "torch.relu(x) computed out of place, copied into x",
            "ReLUInPlace/boolean-mask-indexing": "x[neg] = torch.zeros_like(x[neg])"}),
    Clause("backward never writes into `grad_output` (autograd may still use it);",
           {"ReLUInPlace/modifies-grad-output": "grad_output modified in place"}),
    Clause("what backward needs is saved through `ctx.save_for_backward` (never as a `ctx` "
           "attribute), and forward makes no tensor to save beyond one byte per element: answer "
           "the question of the previous section for the clamp.",
           {"ReLUInPlace/saves-copy": "a clone of the output saved",
            "ReLUInPlace/tensor-on-ctx": "the output kept as a ctx attribute",
            "ReLUInPlace/state-outside-ctx": "masks on a module-global stack, popped in backward"}),
)


ABS_IN_PLACE_CLAUSES = (
    Clause("as for `ReLUInPlace`: `x` itself is the returned tensor, and autograd knows it was "
           "written; a leaf that requires grad gets a RuntimeError from PyTorch itself (as "
           "`torch.abs_` refuses it, in its own words);",
           {"AbsInPlace/mark-dirty-missing": "mark_dirty not called",
            "AbsInPlace/returns-new-tensor": "a new tensor returned",
            "AbsInPlace/own-leaf-guard":
                "its own leaf guard with torch.abs_'s text, under no_grad too",
            "AbsInPlace/forward-under-enable-grad": "the write made under torch.enable_grad()"}),
    Clause("`x` of any shape (empty included) and of any strides an in-place write accepts, "
           "with entries at 0, beside 0 or infinite: afterwards `x == torch.abs(x)` at every "
           "entry (exact, no tolerance, either zero passing, as for `ReLUInPlace`), and the "
           "gradient "
           "of `x` is `torch.abs`'s at every value of `x`, 0 included (NaN entries are outside the "
           "contract);",
           {"AbsInPlace/write-not-exact": "the write negates only x < -1e-6",
            "AbsInPlace/bool-mask-takes-sides-at-zero": "a bool mask x > 0",
            "AbsInPlace/sign-nonzero-at-zero": "an int8 sign that is +1 at 0 (signbit)",
            "AbsInPlace/one-sign-mask": "a bool x < 0 multiplied in",
            "AbsInPlace/bool-of-nonzero": "a bool of the sign, True for -1 as for +1",
            "AbsInPlace/sign-as-uint8": "the sign saved as uint8",
            "AbsInPlace/sign-in-float32": "the sign of x.float(), as int8",
            "AbsInPlace/sign-in-narrower-dtype": "the sign of x.half(), as int8",
            "AbsInPlace/writes-into-a-copy": "abs_ of x.reshape(-1), a copy for a transposed x",
            "AbsInPlace/float32-step": "the gradient computed in float32 (grad_output.float())",
            "AbsInPlace/subnormal-read-as-zero": "a sign with a dead zone at finfo.tiny",
            "AbsInPlace/sign-truncated-by-cast": "x.clamp(-1, 1) cast to int8",
            "unproven:wrong-value": "the sign x / |x| with nan made 0"}),
    Clause("as for `ReLUInPlace`: forward allocates nothing of `x`'s size, and backward never "
           "writes into `grad_output`;",
           {"AbsInPlace/allocates-as-much-as-x": "the sign taken with torch.sign(x), then int8",
            "AbsInPlace/boolean-mask-indexing": "x[x < 0] *= -1",
            "AbsInPlace/modifies-grad-output": "grad_output multiplied by the sign in place"}),
    Clause("what backward needs is saved through `ctx.save_for_backward` (never as a `ctx` "
           "attribute), **at most one byte per element** of `x` in all, and backward still "
           "works after the rest of the model writes into the returned `x` in place again.",
           {"AbsInPlace/tensor-on-ctx": "the int8 sign kept as a ctx attribute",
            "AbsInPlace/saves-nothing": "the int8 sign kept in a module global",
            "AbsInPlace/sign-read-after-write": "sign read from the returned tensor",
            "AbsInPlace/sign-of-output": "an int8 sign taken after the write",
            "AbsInPlace/saves-output": "a bool x < 0 and the returned tensor for the zeros",
            "AbsInPlace/saved-dtype-too-wide": "the sign saved as a float tensor",
            "AbsInPlace/saves-narrow-copy-of-x": "a float8 copy of x, its sign taken in backward"}),
)

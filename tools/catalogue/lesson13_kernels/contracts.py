"""Lesson 13's contracts as data (``tools.catalogue.clauses``), keyed by exercise: ``CLAUSES``,
each exercise's bullets as the lesson lists them, each with the checks that enforce it and a
wrong answer of this catalogue that each check fails; ``RULES``, the checks through which each
exercise enforces the Function contract's rules (``autograder.function_contract``), which the
page states once and no bullet repeats, each with its witness. Grading never reads them
(``tools.catalogue.contract_of`` does)."""

from ..clauses import Clause
SILU_MUL_CLAUSES = (
    Clause("**one** forward kernel and **one** backward kernel, each launched once, the backward "
           "computing the gradients needed in a single pass over memory;",
           {"silu_mul/more-than-one-launch":
                "the backward kernel launched twice, one gradient each",
            "silu_mul/stores-unneeded-gradient":
                "both gradients stored when only one input requires grad"}),
    Clause("each kernel behind a `torch.library.custom_op` (not `triton_op`) with a fake "
           "implementation, and an autograd registration on `silu_mul`: `opcheck` and "
           "`torch.compile(fullgraph=True)` pass;",
           {"silu_mul/kernel-on-fake-tensor": "the backward kernel launched directly in backward",
            "silu_mul/no-fake": "no fake implementation",
            "silu_mul/fake-mismatch": "register_fake always float32",
            "silu_mul/fake-strides": "register_fake with the input's strides",
            "silu_mul/fake-output-structure":
                "the backward operator's fake returns one tensor for two",
            "silu_mul/backward-fake-mismatch":
                "the backward operator's fake with the saved inputs' strides",
            "silu_mul/triton-op": "the forward operator a torch.library.triton_op"}),
    Clause("the arithmetic in your kernels (the host only allocates, views, copies and casts); "
           "float16 and bfloat16 computed in float32, every product included, and returned in "
           "the input's dtype;",
           {"silu_mul/host-arithmetic":
                "a host fast path for small tensors: F.silu(a) * b below 9 elements",
            "silu_mul/half-product-overflows":
                "float16 backward: grad_output * b in float16, the rest in float32",
            "silu_mul/half-not-converted": "half precision loaded and never converted",
            "silu_mul/bfloat16-step-in-interpreter":
                "silu(a) cast back to the input's dtype before the product with b",
            "silu_mul/bfloat16-through-float16": "bfloat16 carried to the forward kernel as "
                                                 "float16",
            "silu_mul/half-step-in-float16":
                "float16: sigmoid in float32, the two products in float16"}),
    Clause("`setup_context` keeps nothing beyond the inputs' own memory (no copy, no output); "
           "finite wherever silu is, and each gradient a tensor of its own.",
           {"silu_mul/saves-extra-tensor": "setup_context saves a, b and the output y (unused)",
            "silu_mul/saves-input-copy": "a.contiguous() and b.contiguous() saved",
            "silu_mul/exp-overflows": "sigmoid as exp(a) / (1 + exp(a))",
            "silu_mul/not-finite-at-zero":
                "silu and sigmoid recovered from the saved output, y / b and silu / a",
            "silu_mul/outputs-alias-each-other": "two gradients returned as views of one buffer",
            "silu_mul/gradients-share-a-buffer":
                "the backward operator returns one (2, ...) tensor, its rows the two gradients"}),
)
SILU_MUL_RULES = {
    "values": {"silu_mul/unmasked-access": "no mask on the tail",
               "case:past 2**20 elements":
                   "one program over the whole tensor, BLOCK = next_power_of_2(n) (issue 37)",
               "silu_mul/strided-read-as-flat": "non-contiguous inputs read as flat memory",
               "silu_mul/output-takes-input-strides":
                   "the output made with empty_like(a) before a.contiguous()",
               "silu_mul/grad-output-expanded": "grad_output not made contiguous",
               "silu_mul/float64-gate-saturated":
                   "sigmoid taken as 1 past a = 15 (a float32-tuned fast path)",
               "silu_mul/float64-in-float32": "float64 computed in float32"},
    "ctx": {"silu_mul/tensor-on-ctx": "setup_context keeps a and b as ctx attributes",
            "silu_mul/state-outside-ctx": "a call counter in a module global",
            "silu_mul/cache-in-global": "the launch grid cached per numel in a module-level dict",
            "silu_mul/size-shared-between-calls":
                "the launch grid kept in a module global by forward, reused by backward",
            "silu_mul/buffer-kept-between-calls":
                "float16/bfloat16: a float32 staging buffer kept per size in a global, cast to a "
                "fresh output",
            "silu_mul/same-output-every-call":
                "the output buffer kept per shape and returned again by every call",
            "silu_mul/output-changed-by-later-call":
                "the output buffer kept per shape, a fresh view of it returned by every call (a "
                "later call overwrites an earlier call's output)"},
    "gradients": {"silu_mul/computes-frozen-gradient":
                      "both gradients returned when only one input requires grad",
                  "silu_mul/reads-requires-grad":
                      "the saved inputs' requires_grad read instead of ctx.needs_input_grad"},
    "unwritten": {"silu_mul/writes-input": "the output written into the input a",
                  "silu_mul/returns-input":
                      "the gradients written into a and b and returned (Liger-Kernel's way)",
                  "silu_mul/writes-grad-output": "grad_a written into grad_output's buffer"},
}


RMS_NORM_ROWS_CLAUSES = (
    Clause("`setup_context` keeps nothing beyond the inputs' own memory but at most one number "
           "per row, none narrower than float32 (nor than float64 for float64 input); backward "
           "sums no row's squares again;",
           {"rms_norm_rows/rstd-not-saved":
                "no rstd saved: the backward kernel computes each row's rstd again",
            "rms_norm_rows/rstd-wrong-dtype": "rstd saved in x's dtype",
            "rms_norm_rows/rstd-not-read":
                "rstd saved and passed, the backward kernel summing x**2 again",
            "rms_norm_rows/saves-narrower-dtype": "a float32 rstd for float64 input (issue 37)",
            "rms_norm_rows/saves-more-per-row": "rstd saved twice, two tensors of one value per row",
            "rms_norm_rows/saves-extra-tensor": "setup_context saves y as well as x, weight and rstd",
            "rms_norm_rows/saves-input-copy":
                "x.contiguous() and weight.contiguous() saved (w_r9)"}),
    Clause("the weight's gradient summed across programs with no atomic adds and no address "
           "that two programs of one launch store to without a lock;",
           {"rms_norm_rows/weight-gradient-one-row": "weight gradient not reduced across programs",
            "rms_norm_rows/atomic-add":
                "every program adds into one shared row with tl.atomic_add",
            "rms_norm_rows/shared-row-race":
                "every program adds into one shared row (load, add, store): a race"}),
    Clause("`F.rms_norm`'s values and gradients for any `D` up to 4096 and any number of rows, "
           "finite for any weight (zeros included), and nothing returned that no program "
           "stored;",
           {"rms_norm_rows/eps-outside-root": "eps outside the square root",
            "rms_norm_rows/eps-ignored": "eps left out of rstd",
            "rms_norm_rows/eps-divided-by-d": "eps added to the sum of squares, then divided by D",
            "rms_norm_rows/direct-path-only":
                "row gradient with the direct path only: r's dependence on the row left out",
            "rms_norm_rows/weight-out-of-projection":
                "the weight left out of the projection's row sum",
            "rms_norm_rows/row-sum-not-averaged":
                "the row's sum where the gradient needs its mean (no 1/D)",
            "rms_norm_rows/not-finite-at-zero-weight": "y saved, x_hat recovered as y / weight",
            "rms_norm_rows/block-narrower-than-row": "a block narrower than the row",
            "rms_norm_rows/unmasked-access": "no mask past the row's end",
            "rms_norm_rows/mean-over-block": "the mean over the row divided by BLOCK_D, not D",
            "rms_norm_rows/masked-load-without-other":
                "masked loads without other= feeding tl.sum",
            "rms_norm_rows/rows-left-out":
                "rows per program rounded down (rows // programs): the last rows left out",
            "rms_norm_rows/loop-past-last-row": "each program's loop not stopped at the last row",
            "rms_norm_rows/reads-unwritten-memory":
                "partial rows from torch.empty summed with no rows"}),
    Clause("each kernel behind a `torch.library.custom_op` whose fake describes its real "
           "outputs, strides included; the arithmetic in your kernels (on the host nothing but "
           "allocations, views, copies, casts and sums), float16 and bfloat16 computed in "
           "float32.",
           {"rms_norm_rows/fake-strides": "register_fake with the input's strides",
            "rms_norm_rows/forward-fake-mismatch":
                "the forward operator's fake with a float16 rstd for float32 x",
            "rms_norm_rows/backward-fake-mismatch":
                "the backward operator's fake with the saved x's strides",
            "rms_norm_rows/kernel-on-fake-tensor":
                "the backward kernel launched directly in backward",
            "rms_norm_rows/host-arithmetic": "the weight gradient computed on the host",
            "rms_norm_rows/half-rounded-step": "float16 accumulated in float16",
            "rms_norm_rows/half-step-in-float16":
                "float16 forward: x_hat rounded to float16 before the product with the weight",
            "rms_norm_rows/half-square-in-float16":
                "float16 forward: x * x squared in float16, then summed in "
                "float32 (bfloat16 converted first)"}),
)
RMS_NORM_ROWS_RULES = {
    "values": {"rms_norm_rows/strided-read-as-flat": "a 2-D input passed as is, strides ignored",
               "rms_norm_rows/grad-output-expanded":
                   "grad_output not made contiguous (an expanded gradient)",
               "case:column slice inputs": "D as the row stride of a column slice (issue 37)"},
    "ctx": {"rms_norm_rows/tensor-on-ctx":
                "setup_context keeps x, weight and rstd as ctx attributes",
            "rms_norm_rows/state-outside-ctx":
                "the rows seen so far counted in a module global",
            "rms_norm_rows/size-shared-between-calls":
                "the backward's grid (the number of rows) kept in a module global by forward",
            "rms_norm_rows/buffer-kept-between-calls":
                "weight-gradient partial rows kept per D between calls, summed whole"},
    "unwritten": {"rms_norm_rows/writes-input": "y written into the input x"},
    "gradients": {"rms_norm_rows/computes-frozen-gradient":
                      "the weight's gradient returned when only x requires grad",
                  "rms_norm_rows/reads-requires-grad":
                      "the saved inputs' requires_grad read instead of ctx.needs_input_grad"},
}


# each exercise's tables, by its name
CLAUSES = {"silu_mul": SILU_MUL_CLAUSES, "rms_norm_rows": RMS_NORM_ROWS_CLAUSES}
RULES = {"silu_mul": SILU_MUL_RULES, "rms_norm_rows": RMS_NORM_ROWS_RULES}

"""Lesson 06's contracts as data (``tools.catalogue.clauses``), keyed by exercise: ``CLAUSES``,
each exercise's bullets as the lesson lists them, each with the checks that enforce it and a
wrong answer of this catalogue that each check fails; ``RULES``, the checks through which
each exercise enforces the Function contract's rules (``autograder.function_contract``),
which the page states once and no bullet repeats, each with its witness. Grading never
reads them (``tools.catalogue.contract_of`` does)."""

from ..clauses import Clause

# the prefixes of the exercises' mistake ids, and the memory clause's case
S_ = "ScaledDotProductAttention/"
M_ = "MemoryEfficientAttention/"
F_ = "FlashAttention/"
FULL = "case:materialises the full Lq x Lk matrix"
B_ = "AttentionWithBias/"


SCALED_DOT_PRODUCT_CLAUSES = (
    Clause("`mask` is `None` or a boolean tensor broadcastable to `(..., Lq, Lk)`, `True` = "
           "attend: a masked key gets probability exactly 0, even where its score lies far above "
           "every visible one.",
           {S_ + "mask-polarity-reversed": "reversed mask",
            "raised:TypeError": "no mask=None path",
            S_ + "finite-mask-fill": "masked scores filled with -1e4",
            S_ + "masked-scores-take-part": "softmax over every key, then masked and renormalised"}),
    Clause("Any Python-float `scale` of the size models use, 0 and negative ones included, and "
           "scores of any size a model meets, far beyond where $e^s$ overflows.",
           {S_ + "scale-ignored": "d ** -0.5 in place of the scale given",
            S_ + "scale-out-of-range": "scale split as its square root over Q and K",
            S_ + "mask-filled-before-scaling": "masked scores filled with -inf before scaling",
            S_ + "no-row-maximum": "no maximum subtracted",
            S_ + "mask-after-global-maximum": "mask applied after a global max",
            S_ + "one-global-maximum": "one global max, the mask filled first"}),
    Clause("Between the passes forward keeps nothing but `Q`, `K`, `V`, the mask and the output "
           "as they are (the caller holds them already) and at most 8 bytes of floats per "
           "query-key pair besides: no copy of an input, scaled or not.",
           {S_ + "saves-a-copy": "saves K transposed and made contiguous",
            S_ + "saves-more-than-the-scores": "Q * scale saved instead of Q",
            S_ + "saves-a-new-mask": "the inverted mask saved"}),
    Clause("A second derivative whose only path runs through your Function raises (the "
           "`@once_differentiable` on `backward` makes it) or comes out right: never silently "
           "wrong.",
           {S_ + "missing-once-differentiable": "backward without @once_differentiable"}),
)

SCALED_DOT_PRODUCT_RULES = {
    "values": {S_ + "softmax-as-element-wise": "no row sum",
               S_ + "jacobian-diagonal-only": "diagonal of the Jacobian only",
               S_ + "row-sum-over-the-queries": "row sum over the queries",
               S_ + "row-sum-without-keepdim": "row sum without keepdim",
               S_ + "row-sum-laid-out-as-a-row": "row sums unsqueezed as a row",
               S_ + "gradient-off-by-a-factor": "scale missing from dQ and dK",
               S_ + "computes-in-float32": "softmax computed in float32 for float64 inputs",
               S_ + "view-on-multihead-layout": "scores by torch.bmm on Q.view(-1, Lq, d)",
               S_ + "view-on-multihead-grad-output": "grad_output flattened by .view"},
    "gradients": {S_ + "computes-frozen-gradient": "ignores needs_input_grad",
                  "case:computes dK = dS^T Q": "every gradient computed, returned only when needed",
                  "case:computes dP = dO V^T": "dP and dS built even when V alone needs a gradient",
                  S_ + "gradient-for-non-tensor": "a gradient for the float scale",
                  S_ + "gradient-for-integer-input": "zeros returned as the mask's gradient"},
    "by-hand": {S_ + "asks-autograd": "softmax gradient from torch.autograd.grad",
                S_ + "builtin-backward-op": "built-in _softmax_backward_data"},
    "ctx": {S_ + "tensor-on-ctx": "mask kept as a ctx attribute",
            S_ + "state-on-class": "scale kept on the class",
            S_ + "state-outside-ctx": "P kept in a dict on the class, keyed by id(ctx)"},
    "unwritten": {S_ + "backward-modifies-saved-tensor": "dS built in place on the saved P"},
}


MEMORY_EFFICIENT_CLAUSES = (
    Clause("Between the passes forward keeps only $Q$, $K$, $V$, the mask and the output as "
           "given, and at most two numbers per query row, of shape `(..., Lq)` or "
           "`(..., Lq, 1)`, in the inputs' dtype or wider.",
           {M_ + "saves-full-size-tensor": "saves the probabilities",
            M_ + "saves-expanded-mask": "saves the mask expanded to the scores' shape",
            M_ + "saves-a-new-mask": "the inverted mask saved",
            M_ + "saves-mask-as-float": "mask saved as a float copy",
            M_ + "saves-in-lower-precision": "log-sum-exp kept in float32 for float64 inputs",
            M_ + "saves-a-copy": "saves a float64 copy of the output for accuracy",
            M_ + "saves-more-than-row-statistics": "saves K transposed and made contiguous",
            M_ + "saves-copy-of-output": "saves a copy of the output",
            M_ + "saves-something-else": "the scale saved as a 0-d tensor beside L",
            M_ + "row-statistic-misshapen": "L squeezed of every dimension of size 1",
            M_ + "saves-expanded-row-statistic": "L saved expanded to the scores' shape"}),
    Clause("Backward rebuilds $P$ from what forward kept, taking no new row maximum and no new "
           "normalising sum ($\\operatorname{rowsum}(dP \\odot P)$ from that $P$ is fine).",
           {M_ + "recomputes-softmax-without-lse":
                "backward calls softmax again, ignoring the saved log-sum-exp",
            M_ + "renormalises-recomputed-probabilities":
                "backward divides exp(S - L) by its row sum again",
            M_ + "backward-takes-row-maximum-again":
                "backward takes each row's maximum again beside the saved L"}),
    Clause("Right at scores of any size a model meets, far beyond where $e^s$ overflows.",
           {M_ + "log-sum-exp-without-maximum": "log-sum-exp without the row maximum",
            M_ + "masked-scores-take-part": "row maximum taken before the mask fill",
            M_ + "one-global-maximum": "log-sum-exp with one global max, the mask filled first",
            M_ + "probabilities-as-exp-over-exp": "P = exp(S) / exp(L) in backward"}),
    Clause("The mask, the scale and `@once_differentiable` as in Exercise 1.",
           {M_ + "finite-mask-fill": "masked scores filled with -1e4 in both passes",
            M_ + "backward-drops-mask": "mask left out of backward's recomputation",
            M_ + "mask-multiplied-after-exp": "the recomputed P multiplied by the mask",
            M_ + "missing-once-differentiable": "backward without @once_differentiable"}),
)

MEMORY_EFFICIENT_RULES = {
    "values": {M_ + "softmax-as-element-wise": "no row sum",
               M_ + "row-sum-without-keepdim": "D = rowsum(dO * O) without keepdim",
               M_ + "log-sum-exp-scaled-afterwards":
                   "log-sum-exp of the unscaled scores, multiplied by scale afterwards",
               M_ + "computes-in-float32":
                   "log-sum-exp computed in float32 for float64 inputs, cast back",
               M_ + "view-on-multihead-layout": "scores by torch.bmm on Q.view(-1, Lq, d)",
               M_ + "view-on-multihead-grad-output": "grad_output flattened by .view"},
    "gradients": {M_ + "computes-frozen-gradient": "ignores needs_input_grad",
                  "case:computes dK = dS^T Q": "every gradient computed, returned only when needed",
                  "case:computes dP = dO V^T": "dP and dS built even when V alone needs a gradient",
                  M_ + "gradient-for-integer-input": "zeros returned as the mask's gradient"},
    "ctx": {M_ + "tensor-on-ctx": "L kept as a ctx attribute",
            M_ + "state-outside-ctx": "P kept in a dict on the class, keyed by id(ctx)",
            M_ + "row-statistic-in-ctx-container": "L kept in a list on ctx"},
}


FLASH_ATTENTION_CLAUSES = (
    Clause("Per batch-head, neither pass creates a tensor larger than a `BLOCK x BLOCK` tile "
           "unless it is shaped `N x d` or `N` (inputs, outputs, gradients, per-row numbers), "
           "and only a few are alive at once.",
           {FULL: "full Lq x Lk matrix in forward",
            "case:under torch.no_grad()":
                "composed ops when no input requires grad (the full scores under no_grad)",
            "case:builds a full Lq x Lk mask": "full causal mask, sliced per tile",
            F_ + "row-block-tensor-in-forward":
                "a query block's causal mask against every key, sliced per tile",
            F_ + "row-block-tensor-in-backward":
                "a key block's causal mask against every query, sliced per tile in backward",
            F_ + "blocks-of-more-than-block-rows":
                "query blocks of 1 row, key blocks of BLOCK^2 rows",
            F_ + "tail-block-dropped": "the last, shorter query block left out",
            F_ + "block-hard-coded-in-forward": "block size hard-coded",
            F_ + "block-hard-coded-in-backward": "block size hard-coded in backward only",
            F_ + "block-default-not-64": "BLOCK = 128 by default",
            "case:no list of tiles": "two-pass backward keeping every dS tile for the dQ pass",
            F_ + "tiles-kept-alive-in-forward":
                "a query block's score tiles kept in a list: exact maximum, then exp"}),
    Clause("Between the passes forward keeps nothing but $Q$, $K$, $V$ and the output as they "
           "are, and one number per query row.",
           {"case:tensors besides Q, K, V and O": "every score tile saved for backward",
            F_ + "saves-a-copy": "saves a float64 copy of the output for accuracy",
            F_ + "saves-output-accumulator":
                "the float32 accumulator of O saved for half inputs, O rounded returned",
            F_ + "saves-something-else-than-the-inputs": "Q * scale saved in place of Q",
            F_ + "log-sum-exp-narrower-than-inputs":
                "log-sum-exp kept in float32 for float64 inputs"}),
    Clause("Backward makes no pass of its own to rebuild a row's statistics, and under "
           "`causal` neither pass computes a tile entirely above the diagonal.",
           {F_ + "recomputes-softmax-without-lse":
                "backward recomputes L by its own pass over the tiles, ignoring the saved one",
            "case:computes score tiles entirely above the causal diagonal":
                "every tile computed under causal",
            F_ + "causal-mask-top-left": "top-left causal mask",
            F_ + "causal-skip-top-left":
                "key loop ended at the query block's own last position (top-left skip)",
            F_ + "causal-mask-hides-diagonal": "causal mask with >=",
            F_ + "tile-mask-without-offset":
                "each tile masked as tril(Lk - Lq), without the tile's offset",
            F_ + "off-diagonal-tiles-unmasked": "causal mask on the diagonal tiles only",
            F_ + "causal-skip-bound-off-by-one-in-forward":
                "forward key loop ends at the last visible key (BLOCK rows)",
            F_ + "causal-skip-bound-off-by-one-in-backward":
                "backward's first query block one query late"}),
    Clause("float16 and bfloat16 inputs: results in the input dtype, as accurate as a kernel "
           "whose sums are float32.",
           {F_ + "scores-in-half": "score tile computed in the input dtype",
            F_ + "scale-in-half": "the scale applied to the query block in the input dtype",
            F_ + "backward-scores-in-half": "backward's score tile computed in the input dtype",
            F_ + "running-output-in-half": "running output kept in float16",
            F_ + "row-sum-from-rounded-probabilities": "row sum of P rounded to the input dtype",
            F_ + "backward-accumulates-in-half": "dQ accumulated in float16",
            F_ + "row-sum-d-in-half": "D = rowsum(dO * O) in float16",
            F_ + "dp-in-half": "dP = dO V^T left in float16",
            F_ + "dk-dv-accumulated-in-half": "dK, dV accumulated in float16 across query blocks",
            F_ + "wrong-gradient-dtype": "grad_Q returned in its float32 accumulator"}),
)

FLASH_ATTENTION_RULES = {
    "values": {F_ + "mask-filled-before-scaling": "causal mask filled before scaling",
               F_ + "row-sum-from-one-tile": "D from dP instead of dO * O",
               F_ + "running-output-not-rescaled": "no rescaling of the running output",
               F_ + "rescales-with-wrong-maximum": "rescaling with the wrong max",
               F_ + "forward-overflows": "no running maximum",
               F_ + "forward-underflows": "running maximum started at 0",
               F_ + "tensor-on-default-device": "dK, dV buffers made by torch.zeros(K.shape)"},
    "gradients": {F_ + "computes-frozen-gradient": "ignores needs_input_grad",
                  "case:computes dV = P^T dO": "dV computed when V needs none",
                  "case:computes dK = dS^T Q": "dQ and dK computed always, returned only when needed"},
    "by-hand": {F_ + "missing-once-differentiable": "backward without @once_differentiable"},
    "ctx": {F_ + "state-outside-ctx": "L kept in a dict on the class, keyed by id(ctx)"},
}


ATTENTION_BIAS_CLAUSES = (
    Clause("`bias` is a float tensor of the inputs' dtype that broadcasts to `(..., Lq, Lk)`, "
           "such as `(Lq, Lk)`, `(H, 1, Lk)` or `(Lk,)`, with `-inf` entries for padding keys "
           "(every query keeps one finite key).",
           {B_ + "wrong-gradient-shape": "bias summed over the key dimension too",
            B_ + "finite-padding-bias": "bias.clamp(min=-1e4) to avoid nan",
            "case:is the mean of dS over the dimensions": "the mean over the broadcast dimensions",
            "case:takes the first entry along": "one entry taken along a dimension of size 1"}),
    Clause("`backward` returns the bias's gradient with exactly `bias.shape`, whichever of "
           "these shapes it has.",
           {B_ + "bias-gradient-not-bias-shape": "bias gradient left at the scores' shape"}),
    Clause("Each gradient, the bias's included, is computed only when `ctx.needs_input_grad` "
           "asks for it: no product is made for an input that needs none.",
           {B_ + "computes-frozen-gradient": "every gradient computed",
            "case:computes dK = dS^T Q": "dQ and dK computed always, returned only when needed",
            "case:computes dP = dO V^T": "dP and dS built even when V alone needs a gradient",
            "case:sums dS down to the bias's shape":
                "grad_bias computed always, returned only when needed"}),
)

ATTENTION_BIAS_RULES = {
    "values": {B_ + "scale-ignored": "d ** -0.5 in place of the scale given",
               "case:grad_bias is scale times the right one":
                   "bias gradient scaled like the scores",
               "case:sum_to_size returns dS itself":
                   "grad_bias aliasing dS, then dS scaled in place"},
    "gradients": {B_ + "bias-gradient-gated-on-q-or-k":
                      "grad_bias computed only when Q or K needs a gradient"},
    "by-hand": {B_ + "asks-autograd": "softmax backward by autograd"},
}


# each exercise's tables, by its name
CLAUSES = {
    "ScaledDotProductAttention": SCALED_DOT_PRODUCT_CLAUSES,
    "MemoryEfficientAttention": MEMORY_EFFICIENT_CLAUSES,
    "FlashAttention": FLASH_ATTENTION_CLAUSES,
    "AttentionWithBias": ATTENTION_BIAS_CLAUSES,
}
RULES = {
    "ScaledDotProductAttention": SCALED_DOT_PRODUCT_RULES,
    "MemoryEfficientAttention": MEMORY_EFFICIENT_RULES,
    "FlashAttention": FLASH_ATTENTION_RULES,
    "AttentionWithBias": ATTENTION_BIAS_RULES,
}

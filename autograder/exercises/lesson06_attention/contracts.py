"""Lesson 06's contracts as the learner reads them: each exercise's bullets, with
the checks that enforce each and a wrong answer each check fails (autograder.clauses)."""

from ...clauses import Clause

# the prefixes of the exercises' mistake ids, and the memory clause's case
F_ = "FlashAttention/"
FULL = "case:materialises the full Lq x Lk matrix"
B_ = "AttentionWithBias/"


FLASH_ATTENTION_CLAUSES = (
    Clause("**Forward** loops over query blocks and key blocks of at most `FlashAttention.BLOCK` "
           "rows with your online softmax, never creating a tensor with more than `BLOCK x "
           "BLOCK` elements per batch-head beyond the inputs, outputs and per-row statistics (a "
           "whole row block of scores, `BLOCK x Lk`, is too big). It saves $Q, K, V, O$ and $L$ "
           "(float32, or float64 for float64 inputs).",
           {F_ + "running-output-not-rescaled": "no rescaling of the running output",
            F_ + "rescales-with-wrong-maximum": "rescaling with the wrong max",
            FULL: "full Lq x Lk matrix in forward",
            "case:under torch.no_grad()":
                "composed ops when no input requires grad (the full scores under no_grad)",
            "case:builds a full Lq x Lk mask": "full causal mask, sliced per tile",
            "case:tensors besides Q, K, V and O": "every score tile saved for backward",
            F_ + "saves-a-copy": "saves a float64 copy of the output for accuracy",
            F_ + "log-sum-exp-narrower-than-inputs":
                "log-sum-exp kept in float32 for float64 inputs",
            F_ + "log-sum-exp-wider-than-asked": "saves L in float64 for float32 inputs"}),
    Clause("**Backward** recomputes each tile from $L$, with $D$ from your `my_row_sum`, by hand, "
           "marked `@once_differentiable`; return `None` for `scale` and `causal`.",
           {F_ + "recomputes-softmax-without-lse":
                "backward recomputes L by its own pass over the tiles, ignoring the saved one",
            F_ + "row-sum-from-one-tile": "D from dP instead of dO * O",
            FULL: "full Lq x Lk matrix in backward",
            F_ + "missing-once-differentiable": "backward without @once_differentiable"}),
    Clause("Under `causal`, skip the tiles entirely above the diagonal, in both passes (a "
           "backward in two passes, one with key blocks outside for $dK$ and $dV$ and one with "
           "query blocks outside for $dQ$, may compute a needed tile twice: that is fine).",
           {"case:computes score tiles entirely above the causal diagonal":
                "every tile computed under causal",
            F_ + "causal-mask-top-left": "top-left causal mask",
            F_ + "causal-mask-hides-diagonal": "causal mask with >=",
            F_ + "causal-skip-bound-off-by-one-in-forward":
                "forward key loop ends at the last visible key (BLOCK rows)",
            F_ + "causal-skip-bound-off-by-one-in-backward":
                "backward's first query block one query late"}),
    Clause("Scores must work at any magnitude softmax handles: the checks use float32 rows that "
           "reach 100 to 150, float32 rows whose scores all lie near $-160$, and float64 rows "
           "near $-20000$.",
           {F_ + "forward-overflows": "no running maximum",
            F_ + "forward-underflows": "running maximum started at 0"}),
    Clause("float16/bfloat16 inputs: the tile of scores and its exponentials, and every "
           "accumulator, in float32 ($P$ may be rounded to the input dtype for $P V$); return "
           "the input dtype (the checks' scores reach about 85, where bfloat16 numbers are 0.5 "
           "apart).",
           {F_ + "scores-in-half": "score tile computed in the input dtype",
            F_ + "running-output-in-half": "running output kept in float16",
            F_ + "backward-accumulates-in-half": "dQ accumulated in float16",
            F_ + "dk-dv-accumulated-in-half": "dK, dV accumulated in float16 across query blocks",
            F_ + "gradient-in-accumulator-dtype": "grad_Q returned in its float32 accumulator"}),
    Clause("Read the block size as `FlashAttention.BLOCK`: the grader sets it to small sizes (2 "
           "to 16) so that small inputs span several tiles, and measures the largest tensor you "
           "create and the peak of live tensors, forward and backward, with `TensorAccounting`.",
           {F_ + "block-hard-coded-in-forward": "block size hard-coded",
            F_ + "block-hard-coded-in-backward": "block size hard-coded in backward only",
            F_ + "block-default-not-64": "BLOCK = 128 by default"}),
)


ATTENTION_BIAS_CLAUSES = (
    Clause("Gradients for `Q`, `K`, `V` and `bias`, **each only when it is needed**: how does "
           "backward know which ones were asked for? And `None` for `scale`. Ask the same of "
           "what you build on the way: when only `V` needs a gradient, does backward need $dP$ "
           "at all? The checks accept the extra product, but it is an $N_q \\times N_k$ tensor "
           "built for nothing.",
           {B_ + "computes-frozen-gradient": "every gradient computed",
            "case:computes dK = dS^T Q": "dQ and dK computed always, returned only when needed",
            "case:sums dS down to the bias's shape":
                "grad_bias computed always, returned only when needed"}),
    Clause("`backward` itself returns the bias gradient with exactly `bias.shape`. (Autograd's "
           "engine would quietly accept one of the scores' shape; the checks look at what your "
           "backward returns.)",
           {B_ + "bias-gradient-not-reduced": "bias gradient left at the scores' shape",
            B_ + "wrong-gradient-shape": "bias summed over the key dimension too"}),
    Clause("No built-in softmax backward: no autograd inside `backward`, no "
           "`_softmax_backward_data`.",
           {B_ + "asks-autograd": "softmax backward by autograd"}),
)

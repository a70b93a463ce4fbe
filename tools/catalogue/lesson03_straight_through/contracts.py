"""Lesson 03's contracts as data (``tools.catalogue.clauses``), keyed by exercise: ``CLAUSES``,
each exercise's bullets as the lesson lists them, each with the checks that enforce it and a
wrong answer of this catalogue that each check fails; ``RULES``, the checks through which
each exercise enforces the Function contract's rules (``autograder.function_contract``),
which the page states once and no bullet repeats, each with its witness. Grading never
reads them (``tools.catalogue.contract_of`` does)."""

from ..clauses import Clause

# a clause the three STEs state, each with its own witnesses (x or the output saved cast to
# another dtype counts as a copy; a mask forward computed is none, whatever its dtype:
# saved_any_dtype)
NO_COPY = "forward saves no copy of `x` or of the output."


STRAIGHT_THROUGH_SOFTMAX_CLAUSES = (
    Clause("forward returns the **one-hot** of `argmax(logits, -1)`, the argmax of the logits "
           "themselves, in `logits`' dtype, ties as `torch.argmax` (the first maximum);",
           {"case:output is not one-hot": "softmax in forward",
            "case:output has dtype torch.int64": "int64 one-hot",
            "case:more than one 1 in a row": "every tied maximum marked",
            "case:draws noise itself": "Gumbel noise drawn inside forward",
            "case:over the logits rounded to a narrower dtype": "argmax of a float32 copy",
            "StraightThroughSoftmax/argmax-of-scaled-logits": "argmax of logits * (1 / tau)",
            "StraightThroughSoftmax/argmax-of-softmax":
                "one-hot of the softmax's argmax, as the Gumbel cell writes",
            "StraightThroughSoftmax/topk-or-sort-on-ties": "one-hot of topk(1)"}),
    Clause(r"backward returns the gradient of $\operatorname{softmax}(\text{logits}/\tau)$ over "
           "the last dim, with no built-in softmax backward inside it;",
           {"case:it returns grad_output unchanged": "identity backward",
            "StraightThroughSoftmax/missing-one-over-tau": "no 1 / tau",
            "case:it keeps only the diagonal": "diagonal of the Jacobian only",
            "case:row sum <g, s> is taken over the whole tensor":
                "<g, s> summed over the whole tensor",
            "case:row sum <g, s> is taken over dim 0": "<g, s> summed over dim 0",
            "case:uses the saved one-hot in place of the softmax":
                "the saved one-hot used as the softmax",
            "StraightThroughSoftmax/true-zero-gradient":
                "zero gradient (the one-hot's true derivative)"}),
    Clause(r"backward is finite wherever the softmax and its gradient are, for $\tau$ down to "
           "0.001;",
           {"case:exp of more than": "softmax rebuilt as exp(z) / sum exp(z)",
            "case:shifted by the whole tensor's maximum":
                "softmax shifted by the whole tensor's maximum",
            "case:wrong at tau=0.001 alone": "tau floored at 0.01 \"for stability\""}),
    Clause("forward saves no copy of an input or of the output, and nothing cast to a wider "
           "dtype.",
           {"StraightThroughSoftmax/saves-copy": "saves logits.clone(), recomputes the softmax",
            "StraightThroughSoftmax/saves-widened": "softmax saved widened to float64",
            "StraightThroughSoftmax/saves-wider-dtype":
                "softmax computed and saved in float64 for float32 logits"}),
)

STRAIGHT_THROUGH_SOFTMAX_RULES = {
    "values": {
        "case:has float32's precision": "softmax computed in float32 for float64 logits",
        "StraightThroughSoftmax/saves-narrower-dtype": "softmax saved as bfloat16",
        "case:without keepdim=True": "row sum without keepdim",
        "raised:RuntimeError": ".view(-1, n) on a non-contiguous grad_output",
        "case:logits of shape (0, 4)": "rows looped with torch.stack: raises on an empty batch"},
    "by-hand": {"StraightThroughSoftmax/asks-autograd": "autograd inside backward"},
    "ctx": {
        "StraightThroughSoftmax/tensor-on-ctx": "the softmax kept as a ctx attribute",
        "StraightThroughSoftmax/state-shared-between-calls": "tau kept in a module global",
        "StraightThroughSoftmax/state-outside-ctx":
            "softmax kept in a module-global dict keyed by id(ctx)"},
    "unwritten": {
        "StraightThroughSoftmax/writes-grad-output": "grad_output changed in place",
        "StraightThroughSoftmax/backward-modifies-saved-tensor":
            "softmax's vector-Jacobian product built on the saved softmax in place",
        "case:modified its input logits in place": "backward divides the saved logits in place"},
}


STE_CLAUSES = {
    "SignSTE": (
        Clause("`SignSTE`'s forward returns exactly `torch.sign(x)`, so `sign(0) = 0` "
               "(binarised networks often send 0 to $+1$; this exercise follows `torch.sign`);",
               {"SignSTE/sign-of-zero-not-zero": "where(x >= 0, 1, -1) sends 0 to 1",
                "SignSTE/signed-zero": "where(x == 0, x, sign(x)) keeps -0.0",
                "SignSTE/smooth-forward": "tanh(100 x) in forward",
                "SignSTE/detach-trick-in-forward": "detach trick inside forward"}),
        Clause("backward returns what autograd would give had forward computed whichever of "
               "your stand-ins never stops the gradient;",
               {"SignSTE/true-zero-gradient": "zero gradient (the true derivative)",
                "SignSTE/ignores-grad-output": "ones instead of grad_output",
                "SignSTE/clipped-estimator": "clips: the other exercise's estimator"}),
        Clause(NO_COPY, {"SignSTE/saves-copy": "saves a copy of x it never reads"}),
    ),
    "SignClippedSTE": (
        Clause("forward returns exactly `torch.sign(x)`, as `SignSTE`'s does;",
               {"SignClippedSTE/sign-of-infinity": "where(x == 0, x, x / x.abs()): nan at ±inf",
                "SignClippedSTE/sign-of-nan": "copysign(1, x) with 0 kept: ±1 at NaN"}),
        Clause("backward returns what autograd would give had forward computed stand-in B, with "
               r"the gradient passing at the corners $x = \pm 1$, as through B's middle piece;",
               {"SignClippedSTE/not-clipped": "forgets the clip",
                "SignClippedSTE/drops-boundary": "clip with |x| < 1",
                "SignClippedSTE/inverted-mask": "inverted clip",
                "SignClippedSTE/clips-grad-output": "clamps grad_output",
                "SignClippedSTE/mask-from-output": "mask from the saved output",
                "SignClippedSTE/mask-in-float32": "mask on a float32 copy of x",
                "SignClippedSTE/window-tolerance": "a tolerance on the window, |x| <= 1 + 1e-6"}),
        Clause(NO_COPY, {"SignClippedSTE/saves-copy": "saves x.clone()",
                         "SignClippedSTE/saves-narrowed-x":
                             "saves x as bfloat16, the mask read from it",
                         "case:x transposed": "saves x.contiguous(): a copy of a transposed x"}),
    ),
    "RoundSTE": (
        Clause("`RoundSTE`'s forward returns exactly `torch.round(x)`, halves included;",
               {"RoundSTE/floors": "floor", "RoundSTE/truncates": "x.long() truncates",
                "RoundSTE/halves-not-to-even": "floor(x + 0.5) rounds halves up",
                "RoundSTE/forward-returns-x": "no rounding",
                "RoundSTE/smooth-forward": "smooth look-alike",
                "RoundSTE/floor-of-x-plus-half": "floor(x + 0.5) with halves sent to even",
                "RoundSTE/signed-zero": "round(x) + 0.0: -0 turned into 0",
                "RoundSTE/large-x-left-unrounded":
                    "round by 1.5 * 2^52 (2^23), |x| >= 2^51 (2^22) left as it is",
                "RoundSTE/magic-number-round": "magic-number rounding, x kept from 2^52 on",
                "unnamed:check": "magic-number rounding (x + 1.5 * 2^52) - 1.5 * 2^52"}),
        Clause("backward returns what autograd would give had forward computed your stand-in for "
               "round;",
               {"RoundSTE/true-zero-gradient": "zero gradient",
                "RoundSTE/output-marked-non-differentiable":
                    "output passed to ctx.mark_non_differentiable",
                "RoundSTE/wrong-gradient-sign": "wrong sign"}),
        Clause(NO_COPY, {"RoundSTE/saves-copy": "saves a copy of x it never reads"}),
    ),
}

STE_RULES = {
    "SignSTE": {
        "values": {
            "SignSTE/sign-of-nan": "copysign(1, x) with 0 kept: ±1 at NaN",
            "SignSTE/sign-of-infinity": "nan_to_num(x / x.abs()): 0 at ±inf",
            "SignSTE/sign-of-subnormal": "x / x.abs().clamp(min=tiny): not 1 at a subnormal x",
            "SignSTE/forward-in-float32": "sign of a float32 copy of x",
            "SignSTE/wrong-output-dtype": "integer output",
            "SignSTE/gradient-stops-at-non-finite": "gradient zeroed where x is NaN",
            "SignSTE/changes-non-finite-grad-output": "nan_to_num on grad_output"},
        "ctx": {"SignSTE/tensor-on-ctx": "x kept on ctx",
                "SignSTE/state-outside-ctx":
                    "x kept in a module-global dict by id(ctx), popped by backward"},
        "unwritten": {"SignSTE/writes-input": "sign computed in place on x"},
    },
    "SignClippedSTE": {
        "values": {
            "SignClippedSTE/gradient-in-float32": "gradient returned in float32",
            "SignClippedSTE/changes-non-finite-grad-output": "nan_to_num on grad_output"},
        "ctx": {"SignClippedSTE/tensor-on-ctx": "x kept on ctx",
                "SignClippedSTE/state-outside-ctx":
                    "x kept in a module-global dict keyed by id(ctx)"},
        "unwritten": {"SignClippedSTE/writes-grad-output": "writes into grad_output",
                      "SignClippedSTE/backward-modifies-saved-tensor":
                          "saved mask multiplied by grad_output in place"},
    },
    "RoundSTE": {
        "values": {
            "RoundSTE/round-of-non-finite": "round of x.nan_to_num(): finite at NaN and ±inf",
            "RoundSTE/forward-in-float32": "rounded in float32, no detach trick",
            "RoundSTE/gradient-stops-at-non-finite": "gradient zeroed where x is not finite",
            "RoundSTE/gradient-in-float32": "gradient built in the default dtype",
            "RoundSTE/changes-non-finite-grad-output":
                "grad_output zeroed where it is not finite"},
        "ctx": {"RoundSTE/state-outside-ctx": "x bound to a module global by forward"},
        "unwritten": {"case:modified its input x in place":
                          "round_ on x.detach(), which shares x's memory"},
    },
}


FAKE_QUANTIZE_CLAUSES = (
    Clause("backward treats `round` with the straight-through estimator (its derivative taken "
           "as 1) and `clamp` with its true derivative, $v = q_\\text{min}$ and "
           "$v = q_\\text{max}$ counted inside;",
           {"FakeQuantize/grad-x-not-clipped": "grad_x not clipped",
            "case:gradient for x carries a factor 1 / scale": "grad_x divided by scale",
            "case:gradient for scale is wrong": "mean for sum",
            "case:inside the clip it rounds halves up":
                "scale's gradient with floor(v + 0.5) for round(v) in backward",
            "FakeQuantize/half-offset-bounds": "inside as qmin - 0.5 <= v < qmax + 0.5",
            "FakeQuantize/scale-open-interval":
                "scale's gradient with LSQ's open interval, x's closed",
            "FakeQuantize/clipped-scale-times-scale": "a clipped element's dy/ds as qmax * scale",
            "FakeQuantize/edge-in-x-units":
                "clip edge judged in x's units, qmin * scale <= x <= qmax * scale"}),
    Clause("in the half-step band just outside each edge, where $v$ is outside but "
           "$\\operatorname{round}(v)$ is not ($v = 3.2$ with $q_\\text{max} = 3$), \"inside\" "
           "may be judged on $v$ or on $\\operatorname{round}(v)$, one convention per edge, the "
           "same for both gradients;",
           {"case:judges 'inside' on v for x's gradient": "x judged on v, scale on round(v)",
            "FakeQuantize/band-judged-two-ways": "inside with a tolerance of 1e-3 on each edge",
            "FakeQuantize/band-takes-other-side":
                "inside on v, the clipped side picked by round(v) < qmin"}),
    Clause("$v$ is `x / scale` computed in `x`'s dtype, or `x * (1 / scale)` as PyTorch's "
           "kernels compute it, the same $v$ in forward and backward;",
           {"FakeQuantize/v-spelled-two-ways":
                "v = x * (1 / scale) in forward, x / scale in backward",
            "FakeQuantize/v-in-float64": "v = x / scale computed in float64 for float32 x",
            "FakeQuantize/v-in-float32": "v recomputed in float32 in backward, for float64 x",
            "FakeQuantize/scale-in-float32": "scale saved as float32 for float64 x",
            "FakeQuantize/reciprocal-in-float32": "1 / scale.float() in backward, for float64 x"}),
    Clause("forward saves no copy of an input or of the output.",
           {"FakeQuantize/saves-copy": "saves x.clone()"}),
)

FAKE_QUANTIZE_RULES = {
    "values": {
        "case:returns the integer codes": "returns the integer codes",
        "case:codes are floor(x / scale)": "floor for round",
        "case:rounds halves up": "floor(v + 0.5): halves rounded up",
        "case:clips x to [qmin, qmax]": "clips x instead of the codes",
        "FakeQuantize/codes-in-float32": "forward computed on x.float()",
        "FakeQuantize/output-in-float32": "forward by torch.fake_quantize_per_tensor_affine",
        "FakeQuantize/scale-gradient-of-empty-x": "scale's gradient as a mean times numel",
        "FakeQuantize/large-x-left-unrounded":
            "codes by the 1.5 * 2^52 trick with an early exit at 2^51",
        "FakeQuantize/grad-x-in-float32": "grad_x made in torch.zeros without dtype=",
        "FakeQuantize/grad-scale-in-float32": "scale's gradient summed in float32"},
    "gradients": {
        "case:returned None for scale": "None for scale",
        "FakeQuantize/gradient-for-non-tensor": "gradient for qmin",
        "FakeQuantize/gate-on-wrong-entry": "needs_input_grad index slip"},
    "by-hand": {"FakeQuantize/asks-autograd":
                    "nan at x / scale = +-inf: backward built on the detach trick (LSQ's composed "
                    "form, differentiated by autograd inside backward)"},
    "ctx": {
        "FakeQuantize/tensor-on-ctx": "x and scale kept as ctx attributes",
        "FakeQuantize/state-on-class": "qmin and qmax kept on the class",
        "FakeQuantize/state-outside-ctx":
            "x and scale kept in a module-global dict keyed by id(ctx)"},
    "unwritten": {"FakeQuantize/writes-grad-output": "grad_output multiplied by the mask in place"},
}


# each exercise's tables, by its name
CLAUSES = {**STE_CLAUSES, "FakeQuantize": FAKE_QUANTIZE_CLAUSES,
           "StraightThroughSoftmax": STRAIGHT_THROUGH_SOFTMAX_CLAUSES}
RULES = {**STE_RULES, "FakeQuantize": FAKE_QUANTIZE_RULES,
         "StraightThroughSoftmax": STRAIGHT_THROUGH_SOFTMAX_RULES}

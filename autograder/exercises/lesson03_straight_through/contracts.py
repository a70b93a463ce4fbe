"""Lesson 03's contracts as the learner reads them: each exercise's bullets, with
the checks that enforce each and a wrong answer each check fails (autograder.clauses)."""

from ...clauses import Clause

# the layouts each contract names, as a failed layout case cites them (autograder.domain)
X_LAYOUT_CLAUSE = "x of any shape and strides (a transposed, sliced or expanded view too)"
LOGITS_LAYOUT_CLAUSE = "logits of any leading shape and of any strides"

# a clause SignSTE and RoundSTE state, each with its own witness (a saved tensor cast wider
# than x counts as a copy: the box "What the grader also probes" says so)
ON_CTX = ("what forward keeps for backward, if anything, goes through `ctx.save_for_backward`: "
          "no tensor on a `ctx` attribute, no copy of `x` or of the output.")


STRAIGHT_THROUGH_SOFTMAX_CLAUSES = (
    Clause("`StraightThroughSoftmax.apply(logits, tau)` returns the **one-hot** of "
           "`argmax(logits, -1)`, the argmax of the logits themselves, in `logits`' dtype, ties "
           "as `torch.argmax` (the first maximum); `tau` is a Python float, at least 0.001. (The "
           "caller adds Gumbel noise to `logits` when it wants a sample; this Function does not "
           "draw it.)",
           {"case:output is not one-hot": "softmax in forward",
            "case:output has dtype torch.int64": "int64 one-hot",
            "case:more than one 1 in a row": "every tied maximum marked",
            "case:draws noise itself": "Gumbel noise drawn inside forward",
            "case:over the logits rounded to a narrower dtype": "argmax of a float32 copy",
            "StraightThroughSoftmax/argmax-of-scaled-logits": "argmax of logits * (1 / tau)",
            "StraightThroughSoftmax/argmax-of-softmax":
                "one-hot of the softmax's argmax, as the Gumbel cell writes",
            "StraightThroughSoftmax/topk-or-sort-on-ties": "one-hot of topk(1)",
            "case:wrong at tau=0.001 alone": "tau floored at 0.01 \"for stability\""}),
    Clause(r"backward returns the gradient that $\operatorname{softmax}(\text{logits}/\tau)$ "
           "over the last dim would have: its Jacobian applied to `grad_output`, **computed by "
           "hand** in tensor ops (no `torch.autograd.grad` and no built-in softmax backward "
           "inside backward), and `None` for `tau`.",
           {"case:it returns grad_output unchanged": "identity backward",
            "StraightThroughSoftmax/missing-one-over-tau": "no 1 / tau",
            "case:it keeps only the diagonal": "diagonal of the Jacobian only",
            "case:row sum <g, s> is taken over the whole tensor":
                "<g, s> summed over the whole tensor",
            "case:row sum <g, s> is taken over dim 0": "<g, s> summed over dim 0",
            "case:uses the saved one-hot in place of the softmax":
                "the saved one-hot used as the softmax",
            "StraightThroughSoftmax/true-zero-gradient":
                "zero gradient (the one-hot's true derivative)",
            "StraightThroughSoftmax/asks-autograd": "autograd inside backward",
            "StraightThroughSoftmax/backward-modifies-saved-tensor":
                "softmax's vector-Jacobian product built on the saved softmax in place",
            "case:modified its input logits in place": "backward divides the saved logits in place"}),
    Clause(r"`logits`, float64 or float32, has at least one dim, of any leading shape (an "
           r"empty batch such as $(0, n)$ included) and any strides, and so has `grad_output`; "
           r"backward is finite wherever the softmax and its gradient are, at a low $\tau$ too.",
           {"case:has float32's precision": "softmax computed in float32 for float64 logits",
            "StraightThroughSoftmax/saves-narrower-dtype": "softmax saved as bfloat16",
            "case:without keepdim=True": "row sum without keepdim",
            "case:exp of more than": "softmax rebuilt as exp(z) / sum exp(z)",
            "case:shifted by the whole tensor's maximum":
                "softmax shifted by the whole tensor's maximum",
            "raised:RuntimeError": ".view(-1, n) on a non-contiguous grad_output",
            "case:logits of shape (0, 5)":
                "rows looped with torch.stack: raises on an empty batch"}),
    Clause("what backward needs is kept on `ctx`, one per call: tensors through "
           "`ctx.save_for_backward`, never as a `ctx` attribute; not on the class, not in a "
           "global; no copy of an input or of the output, and nothing saved after a cast to a "
           "wider dtype; backward leaves `grad_output` as it was.",
           {"StraightThroughSoftmax/tensor-on-ctx": "the softmax kept as a ctx attribute",
            "StraightThroughSoftmax/state-shared-between-calls": "tau kept in a module global",
            "StraightThroughSoftmax/state-outside-ctx":
                "softmax kept in a module-global dict keyed by id(ctx)",
            "StraightThroughSoftmax/saves-copy": "saves logits.clone(), recomputes the softmax",
            "StraightThroughSoftmax/saves-widened": "softmax saved widened to float64",
            "StraightThroughSoftmax/writes-grad-output": "grad_output changed in place"}),
)


STE_CLAUSES = {
    "SignSTE": (
        Clause(r"`SignSTE.apply(x)` returns exactly `torch.sign(x)`, in `x`'s dtype, for `x` of "
               "any shape, strides and value, and leaves `x` untouched;",
               {"SignSTE/writes-input": "sign computed in place on x",
                "SignSTE/sign-of-nan": "copysign(1, x) with 0 kept: ±1 at NaN",
                "SignSTE/sign-of-zero-not-zero": "where(x >= 0, 1, -1) sends 0 to 1",
                "SignSTE/sign-of-infinity": "nan_to_num(x / x.abs()): 0 at ±inf",
                "SignSTE/sign-of-subnormal": "x / x.abs().clamp(min=tiny): not 1 at a subnormal x",
                "SignSTE/signed-zero": "where(x == 0, x, sign(x)) keeps -0.0",
                "SignSTE/smooth-forward": "tanh(100 x) in forward",
                "SignSTE/detach-trick-in-forward": "detach trick inside forward",
                "SignSTE/forward-in-float32": "sign of a float32 copy of x",
                "SignSTE/wrong-output-dtype": "integer output"}),
        Clause("backward returns what autograd would give had forward computed whichever of "
               "your stand-ins never stops the gradient, for every `grad_output` and every `x`, "
               r"$\pm\infty$ and NaN included;",
               {"SignSTE/true-zero-gradient": "zero gradient (the true derivative)",
                "SignSTE/gradient-stops-at-non-finite": "gradient zeroed where x is NaN",
                "SignSTE/ignores-grad-output": "ones instead of grad_output",
                "SignSTE/changes-non-finite-grad-output": "nan_to_num on grad_output",
                "SignSTE/clipped-estimator": "clips: the other exercise's estimator"}),
        Clause(ON_CTX, {"SignSTE/tensor-on-ctx": "x kept on ctx",
                        "SignSTE/state-outside-ctx":
                            "x kept in a module-global dict by id(ctx), popped by backward",
                        "SignSTE/saves-copy": "saves a copy of x it never reads"}),
    ),
    "SignClippedSTE": (
        Clause("the output is exactly `torch.sign(x)`, as `SignSTE`'s is, for `x` of any shape, "
               "strides and value;",
               {"SignClippedSTE/sign-of-infinity": "where(x == 0, x, x / x.abs()): nan at ±inf",
                "SignClippedSTE/sign-of-nan": "copysign(1, x) with 0 kept: ±1 at NaN"}),
        Clause("backward returns what autograd would give had forward computed "
               "`torch.clamp(x, -1, 1)`, corners included, for every `x` and `grad_output`, in "
               "`grad_output`'s dtype (NaN aside: the appendix);",
               {"SignClippedSTE/not-clipped": "forgets the clip",
                "SignClippedSTE/drops-boundary": "clip with |x| < 1",
                "SignClippedSTE/inverted-mask": "inverted clip",
                "SignClippedSTE/clips-grad-output": "clamps grad_output",
                "SignClippedSTE/mask-from-output": "mask from the saved output",
                "SignClippedSTE/mask-in-float32": "mask on a float32 copy of x",
                "SignClippedSTE/gradient-in-float32": "gradient returned in float32",
                "SignClippedSTE/changes-non-finite-grad-output": "nan_to_num on grad_output",
                "SignClippedSTE/window-tolerance": "a tolerance on the window, |x| <= 1 + 1e-6"}),
        Clause("what forward keeps goes through `ctx.save_for_backward`: no tensor on a `ctx` "
               "attribute, no copy of `x` or of the output; backward leaves it and "
               "`grad_output` as they were.",
               {"SignClippedSTE/writes-grad-output": "writes into grad_output",
                "SignClippedSTE/backward-modifies-saved-tensor":
                    "saved mask multiplied by grad_output in place",
                "SignClippedSTE/tensor-on-ctx": "x kept on ctx",
                "SignClippedSTE/state-outside-ctx": "x kept in a module-global dict keyed by id(ctx)",
                "SignClippedSTE/saves-copy": "saves x.clone()",
                "SignClippedSTE/saves-widened": "saves the mask as float64, whatever x's dtype",
                "case:x transposed": "saves x.contiguous(): a copy of a transposed x"}),
    ),
    "RoundSTE": (
        Clause("`RoundSTE.apply(x)` returns exactly `torch.round(x)`, halves included, in `x`'s "
               "dtype, for `x` of any shape, strides and value, and leaves `x` untouched;",
               {"RoundSTE/round-of-non-finite": "round of x.nan_to_num(): finite at NaN and ±inf",
                "RoundSTE/floors": "floor", "RoundSTE/truncates": "x.long() truncates",
                "RoundSTE/halves-not-to-even": "floor(x + 0.5) rounds halves up",
                "RoundSTE/forward-returns-x": "no rounding",
                "RoundSTE/smooth-forward": "smooth look-alike",
                "RoundSTE/floor-of-x-plus-half": "floor(x + 0.5) with halves sent to even",
                "RoundSTE/forward-in-float32": "rounded in float32, no detach trick",
                "RoundSTE/signed-zero": "round(x) + 0.0: -0 turned into 0",
                "RoundSTE/large-x-left-unrounded":
                    "round by 1.5 * 2^52 (2^23), |x| >= 2^51 (2^22) left as it is",
                "case:modified its input x in place": "round_ on x.detach(), which shares x's memory",
                "unnamed:check": "magic-number rounding (x + 1.5 * 2^52) - 1.5 * 2^52"}),
        Clause("backward returns what autograd would give had forward computed your stand-in for "
               r"round, for every `grad_output` and every `x`, $\pm\infty$ and NaN included, in "
               "`grad_output`'s dtype;",
               {"RoundSTE/true-zero-gradient": "zero gradient",
                "RoundSTE/gradient-stops-at-non-finite": "gradient zeroed where x is not finite",
                "RoundSTE/gradient-in-float32": "gradient built in the default dtype",
                "RoundSTE/changes-non-finite-grad-output":
                    "grad_output zeroed where it is not finite",
                "RoundSTE/wrong-gradient-sign": "wrong sign"}),
        Clause(ON_CTX, {"RoundSTE/saves-copy": "saves a copy of x it never reads",
                        "RoundSTE/state-outside-ctx": "x bound to a module global by forward"}),
    ),
}


FAKE_QUANTIZE_CLAUSES = (
    Clause("`FakeQuantize.apply(x, scale, qmin, qmax)` returns $y$ above, for `x` of any shape "
           r"(an empty one included), strides and value, $\pm\infty$ included (NaN aside); "
           "`scale` is a positive 0-d tensor that may require grad, `qmin < 0 < qmax` are "
           "Python ints;",
           {"case:returns the integer codes": "returns the integer codes",
            "case:codes are floor(x / scale)": "floor for round",
            "case:rounds halves up": "floor(v + 0.5): halves rounded up",
            "case:clips x to [qmin, qmax]": "clips x instead of the codes",
            "FakeQuantize/codes-in-float32": "forward computed on x.float()",
            "FakeQuantize/output-in-float32": "forward by torch.fake_quantize_per_tensor_affine",
            "FakeQuantize/scale-gradient-of-empty-x": "scale's gradient as a mean times numel",
            "FakeQuantize/nan-where-v-infinite":
                "scale's gradient with the masks multiplied in: nan where x / scale is inf",
            "FakeQuantize/large-x-left-unrounded":
                "codes by the 1.5 * 2^52 trick with an early exit at 2^51"}),
    Clause(r"backward treats `round` with the straight-through estimator "
           r"($\mathrm{d}\operatorname{round}(v) /\mathrm{d}v$ taken as 1) and `clamp` with its "
           "true derivative, edges included ($v = q_\\text{min}$ or $v = q_\\text{max}$ exactly "
           "is inside), with $v$ = `x / scale` in `x`'s dtype (`x * (1 / scale)` is accepted "
           "too); both gradients are finite for every `x` whose output is; it returns `None` for "
           "`qmin` and `qmax`;",
           {"FakeQuantize/grad-x-not-clipped": "grad_x not clipped",
            "case:gradient for x carries a factor 1 / scale": "grad_x divided by scale",
            "case:gradient for scale is wrong": "mean for sum",
            "case:returned None for scale": "None for scale",
            "FakeQuantize/gradient-for-non-tensor": "gradient for qmin",
            "case:inside the clip it rounds halves up":
                "scale's gradient with floor(v + 0.5) for round(v) in backward",
            "FakeQuantize/gate-on-wrong-entry": "needs_input_grad index slip",
            "FakeQuantize/half-offset-bounds": "inside as qmin - 0.5 <= v < qmax + 0.5",
            "FakeQuantize/scale-open-interval":
                "scale's gradient with LSQ's open interval, x's closed",
            "FakeQuantize/clipped-scale-times-scale": "a clipped element's dy/ds as qmax * scale",
            "FakeQuantize/v-in-float64": "v = x / scale computed in float64 for float32 x",
            "FakeQuantize/v-in-float32": "v recomputed in float32 in backward, for float64 x",
            "FakeQuantize/edge-in-x-units":
                "clip edge judged in x's units, qmin * scale <= x <= qmax * scale",
            "FakeQuantize/grad-x-in-float32": "grad_x made in torch.zeros without dtype=",
            "FakeQuantize/grad-scale-in-float32": "scale's gradient summed in float32",
            "FakeQuantize/scale-in-float32": "scale saved as float32 for float64 x"}),
    Clause("one freedom: just outside each edge, in the half-step band where $v$ is outside but "
           "$\\operatorname{round}(v)$ is not ($v = 3.2$ with $q_\\text{max} = 3$), judge \"inside\" "
           "on $v$ or on $\\operatorname{round}(v)$, one convention per edge, the same for both "
           "gradients;",
           {"case:judges 'inside' on v for x's gradient": "x judged on v, scale on round(v)",
            "FakeQuantize/band-judged-two-ways": "inside with a tolerance of 1e-3 on each edge"}),
    Clause("what backward needs is kept on `ctx`, one per call: tensors through "
           "`ctx.save_for_backward`, never as a `ctx` attribute; not on the class, not in a "
           "global; forward keeps no copy of an input or of the output; backward leaves "
           "`grad_output` as it was.",
           {"FakeQuantize/tensor-on-ctx": "x and scale kept as ctx attributes",
            "FakeQuantize/state-on-class": "qmin and qmax kept on the class",
            "FakeQuantize/state-outside-ctx": "x and scale kept in a module-global dict keyed "
                                              "by id(ctx)",
            "FakeQuantize/writes-grad-output": "grad_output multiplied by the mask in place",
            "FakeQuantize/saves-copy": "saves x.clone()",
            "FakeQuantize/saves-widened": "the local derivative saved widened to float64"}),
)

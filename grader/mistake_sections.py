"""Where the lesson teaches the point a proven mistake misses: mistake id -> the title of a
section (a heading) of the mistake's lesson. Insight shows it beside each named group; a mistake
not listed points to its exercise's own section. (A test checks every id is one the grading
library raises and every title a heading of its lesson.)"""

_SEVERAL_INPUTS = "Several inputs, and inputs that are not tensors"
_VECTOR_JACOBIAN = "The maths: backward is a vector-Jacobian product"
_SAVED_OUTPUT = "Could forward have saved its output?"
_REVERSAL = "Gradient reversal: training against a critic"
_CLIPPING = "Clipping inside backward, per row"
_SOFT_THRESHOLD = "A broken `SoftThreshold`, and a debugging workflow"

SECTIONS = {
    # lesson 00
    "Square/ignores-grad-output": _VECTOR_JACOBIAN,
    "WeightedSum/ignores-grad-output": _VECTOR_JACOBIAN,
    "Outer/ignores-grad-output": _VECTOR_JACOBIAN,
    "Square/builds-jacobian": _VECTOR_JACOBIAN,
    "WeightedSum/builds-jacobian": _VECTOR_JACOBIAN,
    "Outer/builds-jacobian": _VECTOR_JACOBIAN,
    "Square/saves-output-loses-sign": _SAVED_OUTPUT,
    "Square/uses-abs-x": _SAVED_OUTPUT,
    "Square/nan-at-zero": _SAVED_OUTPUT,
    "Square/state-shared-between-calls": _SEVERAL_INPUTS,
    "WeightedSum/state-shared-between-calls": _SEVERAL_INPUTS,
    "Outer/state-shared-between-calls": _SEVERAL_INPUTS,
    "Square/saves-untracked-alias": _SEVERAL_INPUTS,
    "Outer/saves-untracked-alias": _SEVERAL_INPUTS,
    "Square/reads-unguarded-input": _SEVERAL_INPUTS,
    "Outer/reads-unguarded-input": _SEVERAL_INPUTS,
    "WeightedSum/swaps-weights": _SEVERAL_INPUTS,
    "WeightedSum/none-for-zero-weight": _SEVERAL_INPUTS,
    # lesson 12
    "GradientReversal/no-reversal": _REVERSAL,
    "GradientReversal/forgets-alpha": _REVERSAL,
    "GradientReversal/forgets-sign": _REVERSAL,
    "GradientReversal/ignores-grad-output": _REVERSAL,
    "GradientReversal/mishandles-negative-alpha": _REVERSAL,
    "ClipGradientNorm/whole-norm": "Per row against `clip_grad_norm_`",
    "ClipGradientNorm/clamps-elements": _CLIPPING,
    "ClipGradientNorm/scales-small-rows-up": _CLIPPING,
    "ClipGradientNorm/clips-columns": _CLIPPING,
    "ClipGradientNorm/nan-on-zero-row": _CLIPPING,
    "SoftThreshold/nan-at-kink": _SOFT_THRESHOLD,
    "SoftThreshold/passes-kink": _SOFT_THRESHOLD,
    "SoftThreshold/lam-counts-kink": _SOFT_THRESHOLD,
    "SoftThreshold/lam-without-sign": _SOFT_THRESHOLD,
    "SoftThreshold/lam-without-mask": _SOFT_THRESHOLD,
    "SoftThreshold/lam-wrong-sign": _SOFT_THRESHOLD,
    "SoftThreshold/lam-averaged": _SOFT_THRESHOLD,
}

"""Lesson 01's contracts as data (``tools.catalogue.clauses``), keyed by exercise: ``CLAUSES``,
each exercise's bullets as the lesson lists them, each with the checks that enforce it and a
wrong answer of this catalogue that each check fails; ``RULES``, the checks through which
each exercise enforces the Function contract's rules (``autograder.function_contract``),
which the page states once and no bullet repeats, each with its witness. Grading never
reads them (``tools.catalogue.contract_of`` does)."""

from ..clauses import Clause

SOFTPLUS_CLAUSES = (
    Clause("forward saves one tensor, the one that costs the least new memory in a network of "
           "linear layers with `Softplus` between them (say which, and why, in a comment), and "
           "that tensor itself, not an alias such as `t.detach()`;",
           {"Softplus/saves-not-only-output": "saves the input x",
            "Softplus/saves-output-alias": "saves y.detach()",
            "Softplus/saves-in-float32": "saves y.float(): the derivative from 7 digits of y"}),
    Clause("in float64, values and gradients finite for $|x|$ up to 800, and accurate in **both "
           "tails**: relative error at most $10^{-12}$ wherever the true value is a normal "
           "float64 number ($\\mathrm{softplus}(-40) \\approx 4.2 \\times 10^{-18}$, not $0$).",
           {"case:an exponential past 709.78 overflows": "log(1 + exp(x)) as written",
            "Softplus/x-in-right-tail": "F.softplus forward (threshold=20)",
            "Softplus/exp-x-in-left-tail": "e^x itself below x = -25.5",
            "Softplus/log-without-log1p": "log(1 + exp(x)) on the left branch",
            "Softplus/series-cut-short": "two-term series e^x - e^2x / 2 below x = -10",
            "Softplus/gradient-one-in-right-tail": "gradient 1 above y = 25.5",
            "Softplus/gradient-y-in-left-tail": "gradient y itself below y = 1e-10",
            "Softplus/gradient-series-cut-short": "gradient y - y^2 / 2 below y = 1e-4",
            "Softplus/float32-step": "forward rounded through float32",
            "Softplus/gradient-x-minus-sigmoid":
                "gradient x - sigmoid(x), as a source text gives it"}),
)
SOFTPLUS_RULES = {
    "values": {"Softplus/ignores-grad-output": "ignores grad_output",
               "Softplus/gradient-exp-minus-y": "gradient exp(-y), which is sigmoid(-x)"},
    "ctx": {"Softplus/saves-nothing": "output kept in a module global",
            "Softplus/state-shared-between-calls":
                "saves y, backward reads the last call's y from a module global"},
    "unwritten": {"Softplus/writes-grad-output": "grad_output.mul_ in backward above 1024 entries",
                  "Softplus/returns-input": "x itself returned when every entry is above 37"},
}


MY_SIGMOID_CLAUSES = (
    Clause("forward and backward are formulas of your own: no PyTorch sigmoid in forward "
           "(`torch.sigmoid`, or an op that runs it) and no sigmoid backward op in backward;",
           {"MySigmoid/builtin-forward":
                "torch.sigmoid forward, ATen's sigmoid_backward formula by hand",
            "MySigmoid/builtin-backward-op": "built-in sigmoid_backward"}),
    Clause("forward saves one tensor, the one step 4 of the maths asks you to choose, and that "
           "tensor itself: `t.detach()` or a view of `t` is another tensor, cut from the graph;",
           {"MySigmoid/saves-input": "saves the input x",
            "MySigmoid/saves-output-alias": "saves y.detach()",
            "MySigmoid/saves-more-than-output": "saves y and the intermediate z"}),
    Clause("in float64, values and gradients finite for $|x|$ up to 800, for $x < 0$ accurate "
           "relative to their size wherever they are normal float64 numbers, the left tail "
           "included ($\\sigma(-40) \\approx 4.2 \\times 10^{-18}$, not $0$), and for $x \\ge 0$ "
           "accurate in absolute terms, to a few units in the last place of $1$.",
           {"MySigmoid/exp-overflows": "exp(x) / (1 + exp(x))",
            "MySigmoid/exp-x-in-left-tail": "exp(-F.softplus(-x)): e^x itself below x = -20",
            "MySigmoid/backward-not-finite": "backward through logit(y): inf / inf where y is 0",
            "MySigmoid/one-minus-cancels": "1 - sigmoid(-x)",
            "MySigmoid/tanh-cancels": "(1 + tanh(x / 2)) / 2",
            "MySigmoid/float32-sigmoid": "sigmoid computed in float32",
            "MySigmoid/swapped-branches": "branches swapped: sigma(-x)",
            "MySigmoid/x-clamped": "x clamped to [-30, 30], then 1 / (1 + exp(-x))",
            "MySigmoid/forward-saturates": "y = 1 exactly past x = 5, a saturation shortcut",
            "MySigmoid/gradient-cut-to-zero": "backward 0 below x = -30, where y is tiny",
            "MySigmoid/left-tail-cut-to-zero": "y = 0 exactly below x = -30",
            "case:a formula used on a stretch of the tail only":
                "a series about x = -150 on (-200, -101)"}),
)
MY_SIGMOID_RULES = {
    "values": {"MySigmoid/wrong-output-dtype": "x = x.float() first: a float32 output",
               "MySigmoid/ignores-grad-output": "ignores grad_output",
               "MySigmoid/assumes-contiguous-grad-output": "grad_output.view(-1) in backward"},
    "by-hand": {"MySigmoid/asks-autograd": "asks autograd inside backward"},
    "ctx": {"MySigmoid/saves-nothing": "output kept in a module global",
            "MySigmoid/tensor-on-ctx": "output kept as ctx.y",
            "MySigmoid/state-on-class": "the output kept on the class (MySigmoid.last_output = y)",
            "MySigmoid/state-shared-between-calls":
                "saves y, backward reads the last call's y from a module global"},
    "unwritten": {"MySigmoid/writes-grad-output":
                      "grad_output.mul_ in backward above 1024 entries",
                  "MySigmoid/writes-input": "works in x's memory when x needs no gradient"},
}


MY_RELU_CLAUSES = (
    Clause("the value and the gradient of `torch.relu` for every finite `x`, **$x = 0$ exactly** "
           "included (question 1: run `torch.relu` there to see which value it chose), in "
           "float64, float32 and float16;",
           {"MyReLU/mask-includes-zero": "mask x >= 0",
            "unproven:wrong-value": "leaky threshold x > -10",
            "MyReLU/mask-in-float32": "mask on x.float()",
            "MyReLU/mask-passes-negatives": "saves y, masks with y >= 0: every entry passes",
            "MyReLU/mask-threshold-above-zero": "mask with a threshold, x > 1e-6",
            "MyReLU/half-abs-overflows": "(x + |x|) / 2 forward, sign(y) backward"}),
    Clause("forward saves one tensor that adds at most one byte an element of new memory where "
           "a linear layer follows, and that tensor itself, not an alias such as `t.detach()`.",
           {"MyReLU/saves-not-mask-or-output": "the mask saved as float",
            "MyReLU/saves-output-alias":
                "saves y.detach(), masks with torch.where(y > 0)"}),
)
MY_RELU_RULES = {
    "values": {"MyReLU/wrong-output-dtype": "zeros of the default dtype: float32 for float16 x",
               "MyReLU/ignores-grad-output": "ignores grad_output",
               "MyReLU/assumes-contiguous-grad-output":
                   "flat mask, grad_output.view(-1) in backward"},
    "ctx": {"MyReLU/tensor-on-ctx": "mask kept as ctx.mask",
            "MyReLU/state-on-class": "mask kept on the class"},
    "unwritten": {"MyReLU/writes-grad-output": "masks grad_output in place",
                  "MyReLU/writes-input": "x.clamp_ in forward",
                  "MyReLU/returns-input": "x itself returned when every entry is above 0"},
}


SCALED_SIGMOID_CLAUSES = (
    Clause("`scale` any finite Python float, negative, **zero**, tiny or huge, and $|x|$ up to "
           "800: the value and the gradient for `x` of `scale * torch.sigmoid(x)` in float64, "
           "never `nan`;",
           {"ScaledSigmoid/divides-by-scale": "sigma recovered as y / scale",
            "ScaledSigmoid/epsilon-in-division":
                "sigma recovered as y / (scale + 1e-12), an epsilon",
            "ScaledSigmoid/zeroes-small-scales": "zeros wherever abs(scale) < 1e-300",
            "ScaledSigmoid/scale-squared-overflows":
                "keeps y, backward y * (scale - y) / scale: a product about scale^2",
            "ScaledSigmoid/step-1-formula-overflows":
                "saves x, backward step 1's e^-x / (1 + e^-x)^2 as written",
            "ScaledSigmoid/exp-times-sigma-squared": "saves x, backward e^-x * sigma(x)^2",
            "ScaledSigmoid/output-used-as-sigmoid":
                "y * (1 - y) of its output y = scale * sigmoid(x)",
            "ScaledSigmoid/wrong-gradient-sign": "|scale| in backward",
            "ScaledSigmoid/reciprocal-overflows":
                "keeps y, backward y * (1 - y * (1 / scale)): 1 / scale is inf at 1e-310"}),
    Clause("the value and the gradient to float64's precision: for $x < 0$ relative to their "
           "own size wherever `scale * torch.sigmoid(x)` is a normal float64 number, the left "
           "tail included, and for $x \\ge 0$ in absolute terms, in units of `abs(scale)`.",
           {"ScaledSigmoid/float32-scale":
                "scale as torch.tensor(scale), float32, in backward only",
            "ScaledSigmoid/gradient-cut-to-zero": "backward treats sigma as 1 past x = 6",
            "ScaledSigmoid/gradient-cancels":
                "backward 1/4 - (sigma - 1/2)^2: cancels in the tail",
            "ScaledSigmoid/forward-saturates": "output scale exactly past x = 10"}),
)
SCALED_SIGMOID_RULES = {
    "values": {"ScaledSigmoid/wrong-output-dtype":
                   "scale * torch.sigmoid(x.float()): a float32 output"},
    "gradients": {"ScaledSigmoid/wrong-gradient-count": "one gradient for two inputs",
                  "ScaledSigmoid/wrong-gradient-dtype":
                      "keeps y, torch.zeros(shape) at scale 0: the default dtype",
                  "ScaledSigmoid/gradient-for-non-tensor": "a float gradient for scale"},
    "ctx": {"ScaledSigmoid/state-on-class": "scale kept on the class",
            "ScaledSigmoid/state-shared-between-calls": "scale kept in a module global",
            "ScaledSigmoid/state-outside-ctx":
                "scale in a module dict keyed by id(ctx), never removed"},
    "unwritten": {"ScaledSigmoid/writes-grad-output":
                      "grad_output.mul_ in backward above 1024 entries",
                  "ScaledSigmoid/writes-input": "works in x's memory when x needs no gradient"},
}


# each exercise's tables, by its name
CLAUSES = {
    "MySigmoid": MY_SIGMOID_CLAUSES,
    "MyReLU": MY_RELU_CLAUSES,
    "ScaledSigmoid": SCALED_SIGMOID_CLAUSES,
    "Softplus": SOFTPLUS_CLAUSES,
}
RULES = {
    "MySigmoid": MY_SIGMOID_RULES,
    "MyReLU": MY_RELU_RULES,
    "ScaledSigmoid": SCALED_SIGMOID_RULES,
    "Softplus": SOFTPLUS_RULES,
}

"""Lesson 01's contracts as the learner reads them: each exercise's bullets, with
the checks that enforce each and a wrong answer each check fails (autograder.clauses)."""

from ...clauses import Clause


SOFTPLUS_CLAUSES = (
    Clause("forward saves **only its output** $y$, through `ctx.save_for_backward`, and backward "
           "recovers the derivative from $y$; $y$ itself, the tensor forward returns, not "
           "`y.detach()` or a view of it (a tensor of its own, cut from the graph);",
           {"Softplus/saves-not-only-output": "saves the input x",
            "Softplus/saves-output-alias": "saves y.detach()",
            "Softplus/saves-nothing": "output kept in a module global",
            "Softplus/saves-in-float32": "saves y.float(): the derivative from 7 digits of y",
            "Softplus/state-shared-between-calls":
                "saves y, backward reads the last call's y from a module global"}),
    Clause("in float64, values and gradients finite for $|x|$ up to 800, and accurate in **both "
           "tails**: relative error at most $10^{-12}$ wherever the true value is a normal float64 "
           "number. $\\mathrm{softplus}(-40) \\approx 4.2 \\times 10^{-18}$, not $0$; the "
           "gradient at $x = 40$ is $1 - 4.2 \\times 10^{-18}$, and at $x = -40$ it is about "
           "$4.2 \\times 10^{-18}$;",
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
    Clause("forward returns a new tensor, never `x` itself, whatever `x` holds: a caller who "
           "writes into the output must not change `x`.",
           {"Softplus/returns-input": "x itself returned when every entry is above 37"}),
)


MY_SIGMOID_CLAUSES = (
    Clause("forward is a formula of your own, not PyTorch's sigmoid "
           "(`torch.sigmoid`, `torch.special.expit`, `nn.Sigmoid`, `F.logsigmoid`, nor "
           "`F.glu` or `F.silu`, which run it inside theirs);",
           {"MySigmoid/builtin-forward":
                "torch.sigmoid forward, ATen's sigmoid_backward formula by hand"}),
    Clause("forward saves only what backward needs, through `ctx.save_for_backward`: your answer "
           "to step 4, saved as itself: `t.detach()` or a view of `t` is a tensor of its own, "
           "cut from the graph (the grader fails a forward that saves more, the wrong tensor, "
           "or an alias, on any call it makes: `x` of up to $2^{17}$ entries, `x` that is not "
           "a leaf);",
           {"MySigmoid/saves-input": "saves the input x",
            "MySigmoid/saves-output-alias": "saves y.detach()",
            "MySigmoid/saves-more-than-output": "saves y and the intermediate z",
            "MySigmoid/saves-nothing": "output kept in a module global",
            "MySigmoid/tensor-on-ctx": "output kept as ctx.y",
            "MySigmoid/state-on-class":
                "the output kept on the class (MySigmoid.last_output = y)",
            "MySigmoid/state-shared-between-calls":
                "saves y, backward reads the last call's y from a module global"}),
    Clause("backward is your derivation, written by hand: no `torch.sigmoid` backward op such as "
           "`torch.ops.aten.sigmoid_backward`, no autograd call inside backward;",
           {"MySigmoid/builtin-backward-op": "built-in sigmoid_backward",
            "MySigmoid/asks-autograd": "asks autograd inside backward",
            "MySigmoid/ignores-grad-output": "ignores grad_output"}),
    Clause("in float64, values and gradients finite for $|x|$ up to 800, within $10^{-15}$ "
           "for $x \\ge 0$, and **relative to their size** for $x$ from $0$ down to $-708$ "
           "(relative error at most $10^{-12}$: $\\sigma(-40) \\approx 4.2 \\times 10^{-18}$, "
           "not $0$). The self-check tries $x$ every $0.01$ on $[-40, 40]$ and every $0.1$ "
           "down to $-708$.",
           {"MySigmoid/exp-overflows": "exp(x) / (1 + exp(x))",
            "MySigmoid/exp-x-in-left-tail": "exp(-F.softplus(-x)): e^x itself below x = -20",
            "MySigmoid/backward-not-finite": "backward through logit(y): inf / inf where y is 0",
            "MySigmoid/one-minus-cancels": "1 - sigmoid(-x)",
            "MySigmoid/tanh-cancels": "(1 + tanh(x / 2)) / 2",
            "MySigmoid/float32-sigmoid": "sigmoid computed in float32",
            "MySigmoid/swapped-branches": "branches swapped: sigma(-x)",
            "MySigmoid/x-clamped": "x clamped to [-30, 30], then 1 / (1 + exp(-x))",
            "MySigmoid/wrong-output-dtype": "x = x.float() first: a float32 output",
            "MySigmoid/forward-saturates": "y = 1 exactly past x = 5, a saturation shortcut",
            "MySigmoid/gradient-cut-to-zero": "backward 0 below x = -30, where y is tiny",
            "case:a formula used on a stretch of the tail only":
                "a series about x = -150 on (-200, -101)"}),
)


MY_RELU_CLAUSES = (
    Clause("the value and the gradient of `torch.relu` in float64, float32 and float16, where "
           "`x` is finite, **$x = 0$ exactly included** (question 1: run `torch.relu` there to "
           "see which value it chose), and each dtype's smallest positive numbers: the gradient "
           "is `grad_output` where $x > 0$ and $0$ where $x \\le 0$, whatever `grad_output` "
           "holds ($\\pm\\infty$ and `nan` included);",
           {"MyReLU/mask-includes-zero": "mask x >= 0",
            "MyReLU/multiplies-by-mask": "bool mask, backward grad_output * mask",
            "unproven:wrong-value": "leaky threshold x > -10",
            "MyReLU/mask-in-float32": "mask on x.float()",
            "MyReLU/ignores-grad-output": "ignores grad_output",
            "MyReLU/wrong-output-dtype": "zeros of the default dtype: float32 for float16 x",
            "MyReLU/mask-passes-negatives": "saves y, masks with y >= 0: every entry passes",
            "MyReLU/mask-threshold-above-zero": "mask with a threshold, x > 1e-6",
            "MyReLU/half-abs-overflows": "(x + |x|) / 2 forward, sign(y) backward"}),
    Clause("forward saves one tensor with `ctx.save_for_backward`, on every call that records "
           "a graph (any dtype, `x` of up to $2^{17}$ entries, a leaf or not): your answer to "
           "question 3, the least new memory you can justify (a boolean tensor means "
           "`torch.bool`), saved as itself, not `.detach()` or a view of it. Two of question 3's "
           "three tensors pass; which two, the box after the self-check says;",
           {"MyReLU/saves-not-mask-or-output": "a uint8 mask from torch.heaviside",
            "MyReLU/saves-output-alias":
                "saves y.detach(), masks with torch.where(y > 0)",
            "MyReLU/tensor-on-ctx": "mask kept as ctx.mask",
            "MyReLU/state-on-class": "mask kept on the class"}),
    Clause("never modify `grad_output` or `x` in place: return a new tensor.",
           {"MyReLU/writes-grad-output": "masks grad_output in place",
            "MyReLU/writes-input": "x.clamp_ in forward",
            "MyReLU/returns-input": "x itself returned when every entry is above 0"}),
)


SCALED_SIGMOID_CLAUSES = (
    Clause("`scale` a Python float that may be negative **or zero**, and of any size (the "
           "self-check tries $\\pm 10^{-12}$, $\\pm 4.5 \\times 10^{-308}$ and $10^{300}$ "
           "too), and `x` of any shape (an empty one too) and any magnitude (it tries $|x|$ up to "
           "$800$, and $x$ every $0.01$ on $[-40, 40]$): the value and the gradient for `x` "
           "that autograd gives for `scale * torch.sigmoid(x)` in float64, never `nan`, to "
           "float64's precision wherever that reference's output is a normal float64 number "
           "(at least $2.2 \\times 10^{-308}$ in size; `torch.sigmoid(x)` is exactly $0$ below "
           "$x \\approx -709.78$, whatever the scale): within $10^{-15}$ of $|\\text{scale}|$ for "
           "$x \\ge 0$, where $\\sigma(x)$ is near $1$, and to $10^{-12}$ of their size for "
           "$x < 0$;",
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
            "ScaledSigmoid/float32-scale":
                "scale as torch.tensor(scale), float32, in backward only",
            "ScaledSigmoid/wrong-gradient-sign": "|scale| in backward",
            "ScaledSigmoid/gradient-cut-to-zero": "backward treats sigma as 1 past x = 6",
            "ScaledSigmoid/gradient-cancels":
                "backward 1/4 - (sigma - 1/2)^2: cancels in the tail",
            "ScaledSigmoid/forward-saturates": "output scale exactly past x = 10"}),
    Clause("backward returns one gradient per input, `scale` included;",
           {"ScaledSigmoid/wrong-gradient-count": "one gradient for two inputs",
            "ScaledSigmoid/gradient-for-non-tensor": "a float gradient for scale"}),
    Clause("each call keeps its own `scale`: two calls in one graph do not share it, and "
           "nothing is kept on the class, on `x` or in a module global.",
           {"ScaledSigmoid/state-on-class": "scale kept on the class",
            "ScaledSigmoid/state-shared-between-calls": "scale kept in a module global"}),
)

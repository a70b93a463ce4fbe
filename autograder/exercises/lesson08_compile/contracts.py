"""Lesson 08's contracts as the learner reads them: each exercise's bullets, with
the checks that enforce each and a wrong answer each check fails (autograder.clauses)."""

from ...clauses import Clause


SQUARED_NORM_CLAUSES = (
    Clause('have a fake implementation (what shape does the output have? Its strides must '
           "match the real output's too, which the self-check tries on a permuted `x`);",
           {'squared_norm/no-fake': 'no register_fake',
            'squared_norm/fake-mismatch': "a fake implementation of x's shape",
            'squared_norm/fake-strides':
                "a fake of torch.empty_like(x.select(dim, 0)): a permuted x's strides"}),
    Clause('have a backward written by hand, registered for autograd, with `None` for '
           '`dim`; its setup_context keeps tensors with `ctx.save_for_backward`, never as '
           '`ctx` attributes (an int may be one);',
           {'squared_norm/gradient-count': 'backward returns only grad_x',
            'squared_norm/tensor-on-ctx': 'setup_context keeps x as a ctx attribute',
            'squared_norm/grad-output-not-unsqueezed':
                'grad_output not unsqueezed at dim (a square x shows it)',
            'squared_norm/gradient-off-by-a-factor': 'backward without the factor 2'}),
    Clause('have a batching rule registered with `register_vmap` that works on the whole '
           "batch at once (not PyTorch's per-sample fallback, nor a loop of your own), so "
           'that `torch.vmap(squared_norm, in_dims=(b, None))(batch, dim)` matches a loop '
           'over the samples for **every** `dim` of a sample, negative ones included, '
           'wherever the batch dimension `b` is in `batch` (first, between a sample\'s '
           'dimensions, last), leaving `batch` as it was;',
           {'squared_norm/no-batching-rule':
                'no batching rule: vmap falls back to a per-sample loop',
            'squared_norm/dim-not-shifted':
                'the rule does not shift a non-negative dim past the batch dim',
            'squared_norm/rule-loops-over-samples':
                'a rule that loops over the samples with torch ops',
            'squared_norm/out-dims-is-in-dims':
                "an element-wise rule's out_dims: the input's batch dim returned as the output's",
            'squared_norm/batch-dim-assumed-first': 'a rule that assumes the batch dim is 0',
            'squared_norm/transposed-batch-dim':
                'the rule swaps the batch dim to the front with transpose(0, b)',
            'squared_norm/rule-splits-batch':
                'a rule that calls the operator on two halves of the batch',
            'squared_norm/out-dims-wrong-at-tie':
                'the batch dim left in place, out_dims counted with <= for <',
            'squared_norm/rule-writes-input':
                "the rule squares the caller's batch in place (x.mul_(x))"}),
    Clause('pass `torch.library.opcheck`.',
           {'squared_norm/not-a-custom-op': 'a plain Python function, not a custom operator'}),
)


SOFTPLUS_CLAUSES = (
    Clause('compute $\\log(1 + e^{\\beta x}) / \\beta$ **stably**: finite for $\\beta x$ in '
           'the thousands, and accurate where it is tiny (at $\\beta x = -40$, $\\log(1 + '
           'e^{\\beta x})$ is about $4.2 \\times 10^{-18}$, and the output is that divided '
           'by $\\beta$, not 0: the self-check compares the left tail, every $\\beta x$ from '
           '$-40$ to $-5$ in steps of $1/8$ and a few points further out, to a relative '
           "$10^{-5}$), in float64 and in float32 (both are graded; the output keeps `x`'s "
           "dtype). In the right tail, every $\\beta x$ from 5 to 40 in steps of $1/4$, "
           'float64 values are compared to a relative $10^{-9}$;',
           {'softplus/overflows': 'softplus that overflows for large beta * x',
            'softplus/float64-threshold':
                "where(z > 709, z, log1p(exp(z))): float64's threshold, inf in float32",
            'softplus/log-without-log1p':
                'the stable form written with log, not log1p: 0.0 at beta * x = -40',
            'softplus/output-off-by-beta': 'forward without its final division by beta',
            'softplus/computes-in-float32': 'computed in float32 inside the operator, with log1p',
            'softplus/threshold-switch': 'where(z > 15, z, log1p(exp(z))): a switch to z past 15',
            'softplus/beta-rounded-to-float32':
                "forward's beta made with torch.tensor(beta): float32",
            'softplus/left-tail-shortcut':
                "value and slope e^z below beta * x = -10 (the reviewer's answer)"}),
    Clause("have a fake implementation whose output has the real output's shape, dtype "
           'and strides (`opcheck` compares them; the self-check tries a transposed `x`, a '
           'permuted 3-D `x`, a column slice and an expanded `x` too);',
           {'softplus/no-fake': 'no register_fake',
            'softplus/fake-mismatch': 'a fake implementation with the wrong shape',
            'softplus/fake-strides':
                'a fake of x.new_empty(x.shape), contiguous for a transposed x',
            'softplus/fake-copies-strides':
                "a fake of x.new_empty_strided(x.shape, x.stride()): x's gaps for a slice",
            'softplus/forward-copies-contiguous':
                'forward computes on x.contiguous(): a contiguous output, a fake of x\'s strides'}),
    Clause('have a backward written by hand, registered for autograd, whose gradient is '
           'accurate in the left tail too (the slope is tiny there, and the self-check '
           'compares it to a relative $10^{-5}$ as well); its setup_context keeps tensors '
           'with `ctx.save_for_backward`, never as `ctx` attributes (a float may be one);',
           {'softplus/no-register-autograd': 'no register_autograd',
            'softplus/gradient-from-output-cancels':
                'backward from the saved output, 1 - exp(-beta s): 0 at beta * x = -40',
            'softplus/no-setup-context': 'a backward registered without setup_context',
            'softplus/gradient-count': 'backward returns only grad_x',
            'softplus/gradient-for-beta': 'a gradient returned for the float beta',
            'softplus/extra-beta-factor': 'backward times beta (the factors beta did not cancel)',
            'softplus/missing-inner-beta':
                "backward over beta (the chain rule's inner beta forgotten)",
            'softplus/forgets-beta-in-sigmoid':
                'backward sigmoid(x): beta forgotten inside the sigmoid',
            'softplus/backward-in-float32':
                'backward computes the slope in float32 (sigmoid of beta * x.float())',
            'softplus/backward-beta-in-float32':
                "backward's beta made with torch.tensor(beta): float32",
            'softplus/left-tail-slope-shortcut':
                'slope e^z below beta * x = -10, the value exact',
            'softplus/tensor-on-ctx': 'setup_context keeps x as a ctx attribute',
            'softplus/writes-grad-output': 'backward writes into grad_output',
            'softplus/backward-writes-input':
                'backward writes into the saved x (x.mul_(beta).sigmoid_())'}),
    Clause('pass `torch.library.opcheck`, and a `torch.compile(fullgraph=True, '
           'backend="aot_eager")` of a function calling it must match eager values and '
           'gradients.',
           {'softplus/not-a-custom-op': 'a plain Python function, not a custom operator',
            'softplus/mutates-input': 'forward writes into x (x.mul_(beta)) with mutates_args=()'}),
)


LSE_CLAUSES = (
    Clause('`forward(x, dim)`: stable for $|x|$ up to 1000 in float64 (your overflow-free '
           'form from Hint 4 above: how does a per-slice number meet the slice it came '
           'from?);',
           {'LogSumExp/overflows': 'unstable log(sum(exp(x)))',
            'LogSumExp/max-not-per-row':
                'the max of |x| subtracted (the row near -1000 underflows to -inf)',
            'LogSumExp/shift-not-own-max':
                "each slice shifted by its mean: exp(1333) at (1000, -1000, -1000)",
            'LogSumExp/forward-takes-ctx': 'forward takes ctx in the setup_context form',
            'LogSumExp/wrong-output-shape': 'm.squeeze() squeezes every size-1 dim, not only dim'}),
    Clause('`setup_context(ctx, inputs, output)`: keep what backward and jvp need, tensors '
           "through `ctx`'s save methods (never as `ctx` attributes), so that `LogSumExp` "
           'works under `torch.vmap`, `torch.func.jvp` and `torch.func.grad`, each call with '
           'its own state (two calls in one graph share none);',
           {'LogSumExp/jvp-without-save-for-forward':
                'jvp reads ctx.saved_tensors kept only with save_for_backward',
            'LogSumExp/tensor-on-ctx':
                'jvp without save_for_forward: tensors kept as ctx attributes',
            'LogSumExp/no-setup-context': 'old form: forward(ctx, ...) without setup_context',
            'LogSumExp/state-on-class':
                'dim kept on the class by setup_context (LogSumExp.dim = dim)',
            'LogSumExp/jvp-state-outside-ctx':
                'jvp reads x and the output from a global that setup_context fills',
            'LogSumExp/state-outside-ctx':
                'the softmax kept in a module global by setup_context for backward'}),
    Clause('`backward(ctx, grad_output)`: your reverse-mode product from the section '
           'above, and `None` for `dim` (mind which dimension `grad_output` lacks);',
           {'LogSumExp/gradient-for-non-tensor': 'a gradient returned for dim',
            'LogSumExp/backward-softmax-overflows':
                'backward through a naive softmax, exp(x) / sum(exp(x))',
            'LogSumExp/backward-assumes-last-dim': 'backward unsqueezes at -1 instead of ctx.dim',
            'LogSumExp/backward-max-not-per-row':
                "backward's softmax shifted by the whole tensor's max, not each slice's",
            'LogSumExp/grad-output-not-unsqueezed':
                'backward without unsqueeze: grad_output meets x along its last dim'}),
    Clause('`jvp(ctx, x_tangent, dim_tangent)`: your forward-mode product (`dim_tangent` '
           'is `None`: an int has no tangent), from what `setup_context` passed to '
           '`ctx.save_for_forward`; finite at $|x| = 1000$ too;',
           {'LogSumExp/no-jvp': 'no jvp staticmethod',
            'LogSumExp/jvp-softmax-overflows': 'jvp through a naive softmax, exp(x) / sum(exp(x))',
            'LogSumExp/jvp-tangent-shape': 'jvp sums over -1 whatever dim is',
            'LogSumExp/jvp-max-not-per-row':
                "jvp's softmax shifted by the whole tensor's max, not each slice's",
            'unnamed:check': 'jvp without the softmax weights',
            'LogSumExp/jvp-in-float32': "jvp's weights computed in float32"}),
    Clause('keep `generate_vmap_rule = True`, already written for you.',
           {'LogSumExp/no-vmap-rule': 'generate_vmap_rule missing',
            'LogSumExp/python-if-on-values':
                'a Python if on tensor values in forward (if not torch.isfinite(m).all())'}),
)

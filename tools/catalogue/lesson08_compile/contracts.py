"""Lesson 08's contracts as data (``tools.catalogue.clauses``), keyed by exercise: ``CLAUSES``,
each exercise's bullets as the lesson lists them, each with the checks that enforce it and a
wrong answer of this catalogue that each check fails; ``RULES``, the checks through which
each exercise enforces the Function contract's rules (``autograder.function_contract``),
which the page states once and no bullet repeats, each with its witness. Grading never
reads them (``tools.catalogue.contract_of`` does)."""

from ..clauses import Clause

SQUARED_NORM_CLAUSES = (
    Clause("a fake implementation whose output has the real output's shape, dtype and strides;",
           {'squared_norm/no-fake': 'no register_fake',
            'squared_norm/fake-mismatch': "a fake implementation of x's shape",
            'squared_norm/fake-strides':
                "a fake of torch.empty_like(x.select(dim, 0)): a permuted x's strides"}),
    Clause('a backward written by hand, registered for autograd;',
           {'squared_norm/grad-output-not-unsqueezed':
                'grad_output not unsqueezed at dim (a square x shows it)',
            'squared_norm/backward-assumes-last-dim':
                'backward puts dim back at the end (grad_output[..., None])',
            'squared_norm/gradient-off-by-a-factor': 'backward without the factor 2'}),
    Clause('a batching rule registered with `register_vmap` that works on the whole batch at '
           'once (not the per-sample fallback, nor a loop), for every `dim` of a sample and '
           'every place of the batch dimension;',
           {'squared_norm/no-batching-rule':
                'no batching rule: vmap falls back to a per-sample loop',
            'squared_norm/dim-not-shifted':
                'the rule does not shift a non-negative dim past the batch dim',
            'squared_norm/rule-loops-over-samples':
                'a rule that loops over the samples with torch ops',
            'squared_norm/out-dims-is-in-dims':
                "an element-wise rule's out_dims: the input's batch dim returned as the output's",
            'squared_norm/batch-dim-assumed-first': 'a rule that assumes the batch dim is 0',
            'squared_norm/negative-dim-not-shifted':
                'batch dim left in place, a negative dim passed on unchanged',
            'squared_norm/transposed-batch-dim':
                'the rule swaps the batch dim to the front with transpose(0, b)',
            'squared_norm/rule-splits-batch':
                'a rule that calls the operator on two halves of the batch',
            'squared_norm/out-dims-wrong-at-tie':
                'the batch dim left in place, out_dims counted with <= for <'}),
    Clause('passes `torch.library.opcheck`.',
           {'squared_norm/not-a-custom-op': 'a plain Python function, not a custom operator'}),
)
SQUARED_NORM_RULES = {
    "values": {'squared_norm/tensor-on-default-device':
                   "the operator's body adds its sum to torch.zeros(s.shape) made without "
                   "device=",
               'squared_norm/registered-for-some-devices':
                   'custom_op(..., device_types="cpu"): no kernel for a CUDA tensor'},
    "gradients": {'squared_norm/gradient-count': 'backward returns only grad_x'},
    "ctx": {'squared_norm/tensor-on-ctx': 'setup_context keeps x as a ctx attribute'},
    "unwritten": {'squared_norm/rule-writes-input':
                      "the rule squares the caller's batch in place (x.mul_(x))",
                  'squared_norm/writes-grad-output':
                      'grad_output.unsqueeze_(dim) in backward (its shape changed in place)'},
}


SOFTPLUS_CLAUSES = (
    Clause('finite for $\\beta x$ in the thousands, and accurate in both tails, in float64 and '
           'float32: to the dtype\'s precision on the right, and to about five significant digits '
           'far on the left, where $s \\approx e^{\\beta x} / \\beta$ is tiny but not 0;',
           {'softplus/overflows': 'softplus that overflows for large beta * x',
            'softplus/float64-threshold':
                "where(z > 709, z, log1p(exp(z))): float64's threshold, inf in float32",
            'softplus/log-without-log1p':
                'the stable form written with log, not log1p: 0.0 at beta * x = -40',
            'softplus/computes-in-float32': 'computed in float32 inside the operator, with log1p',
            'softplus/output-dtype-not-input':
                'forward computed and returned in float64 for every x',
            'softplus/threshold-switch': 'where(z > 15, z, log1p(exp(z))): a switch to z past 15',
            'softplus/beta-rounded-to-float32':
                "forward's beta made with torch.tensor(beta): float32",
            'softplus/left-tail-shortcut':
                "value and slope e^z below beta * x = -10 (the reviewer's answer)",
            'softplus/right-slope-switch': 'slope exactly 1 past beta * x = 12'}),
    Clause("a fake implementation whose output has the real output's shape, dtype and strides;",
           {'softplus/no-fake': 'no register_fake',
            'softplus/fake-mismatch': 'a fake implementation with the wrong shape',
            'softplus/fake-strides':
                'a fake of x.new_empty(x.shape), contiguous for a transposed x',
            'softplus/fake-copies-strides':
                "a fake of x.new_empty_strided(x.shape, x.stride()): x's gaps for a slice",
            'softplus/forward-copies-contiguous':
                'forward computes on x.contiguous(): a contiguous output, a fake of x\'s strides'}),
    Clause('a backward written by hand and registered for autograd, its gradient as accurate in '
           'the left tail as the value;',
           {'softplus/no-register-autograd': 'no register_autograd',
            'softplus/gradient-from-output-cancels':
                'backward from the saved output, 1 - exp(-beta s): 0 at beta * x = -40',
            'softplus/no-setup-context': 'a backward registered without setup_context',
            'softplus/backward-in-float32':
                'backward computes the slope in float32 (sigmoid of beta * x.float())',
            'softplus/backward-beta-in-float32':
                "backward's beta made with torch.tensor(beta): float32",
            'softplus/left-tail-slope-shortcut':
                'slope e^z below beta * x = -10, the value exact',
            'softplus/slope-at-kink':
                'the stable form differentiated by hand, (z >= 0) and sign(0) = 0'}),
    Clause('passes `torch.library.opcheck`, and a `torch.compile(fullgraph=True)` of a function '
           'calling it matches eager values and gradients.',
           {'softplus/not-a-custom-op': 'a plain Python function, not a custom operator',
            'softplus/mutates-input': 'forward writes into x (x.mul_(beta)) with mutates_args=()'}),
)
SOFTPLUS_RULES = {
    "values": {'softplus/output-off-by-beta': 'forward without its final division by beta',
               'softplus/extra-beta-factor':
                   'backward times beta (the factors beta did not cancel)',
               'softplus/missing-inner-beta':
                   "backward over beta (the chain rule's inner beta forgotten)",
               'softplus/forgets-beta-in-sigmoid':
                   'backward sigmoid(x): beta forgotten inside the sigmoid',
               'softplus/tensor-on-default-device':
                   "the operator's body takes max(z, 0) against torch.zeros(z.shape) made "
                   "without device=",
               'softplus/registered-for-some-devices':
                   'custom_op(..., device_types="cpu") copied from the NumPy example: no '
                   "kernel for a CUDA tensor"},
    "gradients": {'softplus/gradient-count': 'backward returns only grad_x',
                  'softplus/gradient-for-beta': 'a gradient returned for the float beta'},
    "ctx": {'softplus/tensor-on-ctx': 'setup_context keeps x as a ctx attribute'},
    "unwritten": {'softplus/writes-grad-output': 'backward writes into grad_output',
                  'softplus/backward-writes-input':
                      'backward writes into the saved x (x.mul_(beta).sigmoid_())'},
}


LSE_CLAUSES = (
    Clause('forward, backward and jvp finite and accurate for $|x|$ up to 1000 in float64;',
           {'LogSumExp/overflows': 'unstable log(sum(exp(x)))',
            'LogSumExp/max-not-per-row':
                'the max of |x| subtracted (the row near -1000 underflows to -inf)',
            'LogSumExp/shift-not-own-max':
                "each slice shifted by its mean: exp(1333) at (1000, -1000, -1000)",
            'LogSumExp/backward-softmax-overflows':
                'backward through a naive softmax, exp(x) / sum(exp(x))',
            'LogSumExp/backward-max-not-per-row':
                "backward's softmax shifted by the whole tensor's max, not each slice's",
            'LogSumExp/jvp-softmax-overflows': 'jvp through a naive softmax, exp(x) / sum(exp(x))',
            'LogSumExp/jvp-max-not-per-row':
                "jvp's softmax shifted by the whole tensor's max, not each slice's"}),
    Clause('the setup_context form with `generate_vmap_rule = True`, so that `torch.vmap`, '
           '`torch.func.grad` and `torch.func.jvp` accept it;',
           {'LogSumExp/no-setup-context': 'old form: forward(ctx, ...) without setup_context',
            'LogSumExp/forward-takes-ctx': 'forward takes ctx in the setup_context form',
            'LogSumExp/no-vmap-rule': 'generate_vmap_rule missing',
            'LogSumExp/python-if-on-values':
                'a Python if on tensor values in forward (if not torch.isfinite(m).all())'}),
    Clause('a `jvp` staticmethod, so that forward-mode AD (`torch.func.jvp`, `forward_ad`) '
           'accepts it;',
           {'LogSumExp/no-jvp': 'no jvp staticmethod',
            'LogSumExp/jvp-without-save-for-forward':
                'jvp reads ctx.saved_tensors kept only with save_for_backward',
            'LogSumExp/jvp-tangent-shape': 'jvp sums over -1 whatever dim is',
            'unnamed:check': 'jvp without the softmax weights',
            'LogSumExp/jvp-in-float32': "jvp's weights computed in float32",
            'LogSumExp/wrong-tangent-dtype':
                'jvp computes and returns a float64 tangent for a float32 x'}),
    Clause('a backward that autograd can differentiate once more: a second derivative through '
           'it (lesson 04) is right.',
           {'LogSumExp/second-derivative-lost':
                'the softmax computed in setup_context and saved; dim made non-negative',
            'LogSumExp/second-derivative-wrong':
                'backward reads the weights from the saved output detached',
            'LogSumExp/backward-detaches':
                "backward's weights from torch.softmax(x.detach(), dim)",
            'LogSumExp/backward-cuts-grad-output':
                'backward copies grad_output under torch.no_grad()'}),
)
LSE_RULES = {
    "values": {'LogSumExp/wrong-output-shape':
                   'm.squeeze() squeezes every size-1 dim, not only dim',
               'LogSumExp/backward-assumes-last-dim': 'backward unsqueezes at -1 instead of ctx.dim',
               'LogSumExp/grad-output-not-unsqueezed':
                   'backward without unsqueeze: grad_output meets x along its last dim',
               'LogSumExp/output-shares-input-memory':
                   'x.squeeze(dim) returned where dim has one entry: a view of x'},
    "gradients": {'LogSumExp/gradient-for-non-tensor': 'a gradient returned for dim'},
    "by-hand": {'LogSumExp/asks-autograd':
                    'backward recomputes torch.logsumexp under enable_grad and calls '
                    'torch.autograd.grad'},
    "ctx": {'LogSumExp/tensor-on-ctx':
                'jvp without save_for_forward: tensors kept as ctx attributes',
            'LogSumExp/state-on-class':
                'dim kept on the class by setup_context (LogSumExp.dim = dim)',
            'LogSumExp/state-outside-ctx':
                'the softmax kept in a module global by setup_context for backward'},
    "unwritten": {'LogSumExp/writes-grad-output':
                      'grad_output.unsqueeze_(dim) in backward (its shape changed in place)',
                  'LogSumExp/jvp-writes-saved-input':
                      "jvp computes the weights in x's own memory (x.sub_(...).exp_())"},
}


# each exercise's tables, by its name
CLAUSES = {
    "LogSumExp": LSE_CLAUSES,
    "softplus": SOFTPLUS_CLAUSES,
    "squared_norm": SQUARED_NORM_CLAUSES,
}
RULES = {"LogSumExp": LSE_RULES, "softplus": SOFTPLUS_RULES, "squared_norm": SQUARED_NORM_RULES}

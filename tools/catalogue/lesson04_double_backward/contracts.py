"""Lesson 04's contracts as data (``tools.catalogue.clauses``), keyed by exercise: ``CLAUSES``,
each exercise's bullets as the lesson lists them, each with the checks that enforce it and a
wrong answer of this catalogue that each check fails; ``RULES``, the checks through which
each exercise enforces the Function contract's rules (``autograder.function_contract``),
which the page states once and no bullet repeats, each with its witness. Grading never
reads them (``tools.catalogue.contract_of`` does)."""

from ..clauses import Clause

NUMPY_TANH_CLAUSES = (
    Clause("all its arithmetic, in forward and in whatever computes its derivatives, is NumPy's: "
           "torch only converts (`.numpy()`, `torch.from_numpy`, `.to`), with no torch "
           "arithmetic;",
           {"NumpyTanh/torch-in-forward": "torch.tanh in forward",
            "NumpyTanh/torch-in-backward": "torch arithmetic in backward",
            "NumpyTanh/torch-in-inner-backward": "inner backward in torch"}),
    Clause("yet `NumpyTanh` is **twice differentiable**: its second derivatives are right, and "
           "its backward is not marked `once_differentiable`;",
           {"NumpyTanh/backward-detached": "a NumPy backward and nothing more",
            "NumpyTanh/detaches-saved-tensor": "a detached y passed to the inner Function",
            "NumpyTanh/detaches-grad-output": "a detached grad_output passed to the inner Function",
            "NumpyTanh/inner-gradients-swapped": "inner backward returns its two gradients swapped",
            "NumpyTanh/inner-gradient-count": "inner backward returns one gradient",
            "NumpyTanh/inner-gradient-sign": "inner backward: +2 g y",
            "NumpyTanh/second-derivative-0d": "inner backward without np.asarray",
            "NumpyTanh/inner-gradient-drops-grad-output":
                "inner backward's gradient for y without grad_output",
            "case:the Function your backward calls computes": "inner backward gives y nothing",
            "NumpyTanh/hessian-vector-product-wrong":
                "inner backward tests the other input's needs_input_grad entry",
            "NumpyTanh/once-differentiable": "once_differentiable",
            "NumpyTanh/records-only-for-grad-output":
                "the inner Function only when grad_output requires grad"}),
    Clause(r"values and both derivatives are right and finite where $\tanh$ rounds to $\pm 1$;",
           {"NumpyTanh/overflow-at-large-x": "forward computes (e^2x - 1) / (e^2x + 1)",
            "NumpyTanh/nan-at-saturation":
                "the inner Function saves its output b and divides it by 1 - y^2"}),
    Clause("nothing it saves is a copy of a tensor the graph already keeps.",
           {"NumpyTanh/saves-copy-of-output":
                "forward saves a second torch.from_numpy of the same array",
            "NumpyTanh/saves-detached-input": "forward saves x.detach()",
            "NumpyTanh/inner-saves-copy": "inner Function saves y.clone()",
            "NumpyTanh/saves-wider-output":
                "forward saves a float64 y and returns it cast to x's dtype",
            "NumpyTanh/inner-saves-narrower": "inner Function saves grad_output as float32",
            "NumpyTanh/inner-saves-unguarded-alias":
                "the inner Function saves torch.from_numpy(grad_output.numpy())",
            "NumpyTanh/saves-copy": "forward saves y.clone() and returns y"}),
)
NUMPY_TANH_RULES = {
    "gradients": {"NumpyTanh/inner-computes-frozen-gradient":
                      "inner backward ignores ctx.needs_input_grad: both gradients every call",
                  "NumpyTanh/inner-wrong-gradient-dtype":
                      "inner backward's gradient for y in float64 for a float32 y "
                      "(np.float64(-2.0) * ...)"},
    "by-hand": {"NumpyTanh/builds-jacobian": "the inner Function builds n x n NumPy Jacobians"},
    "values": {"NumpyTanh/wrong-output-dtype":
                   "forward computes in float64 and returns float64 for a float32 x",
               "NumpyTanh/uses-x-as-y": "x saved and used as y"},
    "ctx": {"NumpyTanh/inner-tensor-on-ctx": "the inner Function keeps g and y as ctx attributes",
            "NumpyTanh/bypasses-saved-tensors": "forward keeps y in a module dict keyed by id(ctx)",
            "NumpyTanh/inner-bypasses-saved-tensors":
                "the inner Function keeps its tensors in a module dict keyed by id(ctx)",
            "NumpyTanh/array-on-ctx": "forward keeps a NumPy tanh array on ctx",
            "NumpyTanh/sets-ctx-in-backward":
                "the inner Function keeps NumPy arrays set in its backward on ctx",
            "NumpyTanh/inner-state-on-class": "the inner Function keeps g and y on its class",
            "NumpyTanh/inner-array-on-ctx":
                "the inner Function keeps 1 - y^2 as a NumPy array on ctx",
            "NumpyTanh/stack-popped-empty": "y on a module-level stack, popped in backward",
            "NumpyTanh/cache-keyed-by-input":
                "forward memoises NumPy's tanh in a global cache keyed by the tensor x"},
    "unwritten": {"NumpyTanh/writes-through-numpy":
                      "forward writes tanh into x through .numpy() (np.tanh(a, out=a))",
                  "case:wrote into the gradient its backward's Function receives":
                      "inner backward multiplies, then divides grad_b in place",
                  "case:wrote into grad_output":
                      "the inner forward multiplies grad_output's memory (g *= ...)"},
}


SWISH_CLAUSES = (
    Clause(r"`beta` is any real number, 0 and negative included, `x` any value a model meets "
           r"($|x|$ up to $10^{15}$), and $|\beta x|$ goes up to 800: "
           r"the value and both gradients stay finite; where $\beta x$ is far below 0 they stay "
           r"accurate relative to their size for as long as $\sigma(\beta x)$ is a normal float;",
           {"SwishFunction/clamped-tail":
                "beta * x clamped to +-80 in backward (1 / (1 + exp(-z)))",
            "SwishFunction/value-lost-in-tail": "forward as x - x * sigmoid(-beta x)",
            "SwishFunction/float32-overflow": "sigma' as e / (1 + e)^2 with z clamped to +-700: "
                                              "NaN in float32 past |beta x| = 88.7",
            "SwishFunction/tiny-beta-branch":
                "sigma linearised where |beta| < 1e-6 (once named as x * x overflowing)"}),
    Clause("backward is differentiable: its derivatives with respect to `x`, `beta` and "
           "`grad_output` are those of the composed ops, so `gradgradcheck` passes;",
           {"SwishFunction/saves-intermediate": "saves the intermediate sigmoid",
            "SwishFunction/saves-input-view": "saves beta.expand_as(x), a view made in forward",
            "SwishFunction/nan-second-derivative": "lesson 01's where-built sigmoid in "
                                                   "backward: NaN second derivatives past "
                                                   "|beta x| = 709",
            "SwishFunction/input-cut-off": "detaches in backward",
            "SwishFunction/backward-detached": "backward under torch.no_grad()",
            "SwishFunction/backward-detached-alone":
                "beta's gradient under torch.no_grad() when x needs none",
            "SwishFunction/once-differentiable": "@once_differentiable on a differentiable backward",
            "SwishFunction/beta-as-number": "beta.item()",
            "SwishFunction/number-in-backward": "beta.item() inside backward",
            "SwishFunction/in-place-in-backward": "in-place op in backward",
            "SwishFunction/records-only-for-grad-output":
                "backward under torch.no_grad() unless grad_output requires grad",
            "SwishFunction/float32-cancellation":
                "sigma' expanded as z*s - z*s*s: large terms cancel in float32",
            "SwishFunction/kink-at-zero": "sigmoid recomputed from exp(-|z|) with torch.where: "
                                          "wrong second derivative at x = 0"}),
    Clause("`beta` may be a wider float than `x` (a float64 `beta` with a float32 `x`), and "
           "forward saves no copy of an input: a `beta` it saves is the caller's own.",
           {"SwishFunction/saves-copy": "saves x.contiguous(): a copy of a transposed x",
            "SwishFunction/saves-rounded-beta":
                "saves beta rounded to x's dtype (beta.to(x.dtype))"}),
)
SWISH_RULES = {
    "values": {"unproven:wrong-value": "grad_beta misses a factor x",
               "SwishFunction/divides-by-x": "s = y / x: NaN where x = 0",
               "SwishFunction/float32-step": "backward computes in float32 for float64 inputs",
               "SwishFunction/assumes-contiguous-grad-output":
                   "grad_output.view(-1): fails on a transposed grad_output"},
    "gradients": {"SwishFunction/returns-none-gradient": "None for beta",
                  "SwishFunction/gate-on-wrong-entry": "needs_input_grad indices swapped"},
    "by-hand": {"case:ran inside itself": "autograd.grad of the saved output inside backward (it "
                                          "would run this backward again, without end)",
                "SwishFunction/asks-autograd":
                    "torch.autograd.grad of a recomputed forward inside backward",
                "SwishFunction/builds-jacobian": "an n x n torch.diag Jacobian"},
    "ctx": {"SwishFunction/tensor-on-ctx": "tensors on ctx",
            "SwishFunction/sets-ctx-in-backward": "caches the sigmoid as ctx.s in backward",
            "SwishFunction/bypasses-saved-tensors": "(x, beta) in a module dict keyed by id(ctx)",
            "SwishFunction/second-backward-fails":
                "(x, beta) in a WeakKeyDictionary keyed by ctx, popped in backward",
            "SwishFunction/state-on-class": "beta kept on the class, not on ctx",
            "SwishFunction/state-outside-ctx":
                "sigmoid memoised in a global keyed by x.data_ptr() and beta",
            "SwishFunction/requires-grad-shared-between-calls":
                "beta's needs-grad flag kept in a global, set in forward"},
}


CUBE_ONCE_CLAUSES = (
    Clause("backward returns the first derivative at every `x`;",
           {"CubeOnce/divides-by-x": "3y / x in NumPy from the saved x and output: nan at x = 0",
            "case:exactly where x < 0": "y ** (1 / 3) of the saved output: nan at negative x",
            "CubeOnce/recovers-x-from-output": "saves the output, NumPy cube root in backward"}),
    Clause("the local derivative $3x^2$ is computed in NumPy, as the kernel it stands in for "
           "would, with no torch arithmetic in backward beyond at most one multiplication by "
           "`grad_output`, and the gradient is on `x`'s device, whichever that is;",
           {"CubeOnce/torch-in-backward": "no NumPy at all: g * 3 * x ** 2 under the mark "
                                          "(review 75)",
            "CubeOnce/torch-computes-local":
                "@once_differentiable above @staticmethod, saves 3x^2 made with torch in forward",
            "CubeOnce/result-left-on-cpu": "forgets .to(x.device): the gradient stays on the CPU",
            "CubeOnce/guesses-device": 'device="cuda" if x.is_cuda else "cpu"',
            "CubeOnce/numpy-off-cpu": ".numpy() without .cpu()"}),
    Clause("when the gradient backward received requires grad, a second `.backward()` through "
           "it raises PyTorch's own error for a backward that cannot be differentiated twice;",
           {"CubeOnce/not-once-differentiable": "forgets @once_differentiable",
            "CubeOnce/unmarked-second-backward-raises": "detaches instead"}),
    Clause("forward saves no copy of `x` or of its output.",
           {"CubeOnce/saves-copy": "saves x.clone()",
            "CubeOnce/saves-widened": "saves x squared widened to float64",
            "CubeOnce/saves-unguarded-alias": "saves torch.from_numpy(x.numpy()), an alias of x",
            "CubeOnce/saves-cpu-copy":
                "saves a CPU copy of x when x is on a GPU, for NumPy in backward",
            "case:a copy of the output": "returns a copy of the output it saves"}),
)
CUBE_ONCE_RULES = {
    "values": {"unproven:wrong-value": "3x instead of 3x^2",
               "CubeOnce/from-numpy-on-a-scalar": "torch.from_numpy of a NumPy scalar: fails a 0-d x",
               "CubeOnce/numpy-result-unconverted": "grad_output times the NumPy array, unconverted",
               "CubeOnce/grad-output-one-number": "multiplies by grad_output's first entry only",
               "CubeOnce/float32-step":
                   "3x^2 cast to float32 in backward (torch.as_tensor(..., dtype=float32))",
               "CubeOnce/narrowed-step": "3x^2 cast to float16 in backward (torch.as_tensor(..., "
                                         "dtype=torch.float16))"},
    "by-hand": {"CubeOnce/builds-jacobian": "an n x n NumPy Jacobian"},
    "unwritten": {"CubeOnce/writes-grad-output": "grad_output.mul_(local)",
                  "case:modified its input x in place":
                      "NumPy backward squares x in place through .numpy()"},
    "ctx": {"CubeOnce/tensor-on-ctx": "x kept on ctx",
            "CubeOnce/sets-ctx-in-backward": "memoises 3x^2 as ctx.local in backward",
            "CubeOnce/bypasses-saved-tensors": "x kept in a module dict keyed by id(ctx)",
            "CubeOnce/state-on-class": "3x^2 as a NumPy array on the class",
            "CubeOnce/array-on-ctx": "a NumPy view of x kept on ctx",
            "CubeOnce/cache-keyed-by-input": "3x^2 memoised in a global dict keyed by x.data_ptr()"},
}


# each exercise's tables, by its name
CLAUSES = {
    "SwishFunction": SWISH_CLAUSES,
    "CubeOnce": CUBE_ONCE_CLAUSES,
    "NumpyTanh": NUMPY_TANH_CLAUSES,
}
RULES = {"SwishFunction": SWISH_RULES, "CubeOnce": CUBE_ONCE_RULES, "NumpyTanh": NUMPY_TANH_RULES}

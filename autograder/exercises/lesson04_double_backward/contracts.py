"""Lesson 04's contracts as the learner reads them: each exercise's bullets, with
the checks that enforce each and a wrong answer each check fails (autograder.clauses)."""

from ...clauses import Clause


NUMPY_TANH_CLAUSES = (
    Clause("`NumpyTanh.apply(x)` returns $\\tanh(x)$, computed with NumPy, for a CPU tensor `x` of "
           "at least one dim, in `x`'s dtype;",
           {"NumpyTanh/torch-in-forward": "torch.tanh in forward",
            "NumpyTanh/wrong-output-dtype":
                "forward computes in float64 and returns float64 for a float32 x",
            "NumpyTanh/writes-through-numpy":
                "forward writes tanh into x through .numpy() (np.tanh(a, out=a))",
            "NumpyTanh/overflow-at-large-x": "forward computes (e^2x - 1) / (e^2x + 1)"}),
    Clause("its backward computes with NumPy too: torch only converts (`.numpy()`, "
           "`torch.from_numpy`, `.to`), no torch arithmetic, and every backward leaves the gradient it "
           "receives unchanged;",
           {"NumpyTanh/torch-in-backward": "torch arithmetic in backward",
            "case:wrote into the gradient its backward's Function receives":
                "inner backward multiplies, then divides grad_b in place",
            "case:wrote into grad_output":
                "the inner forward multiplies grad_output's memory (g *= ...)",
            "NumpyTanh/uses-x-as-y": "x saved and used as y"}),
    Clause("yet it is **twice differentiable**: its backward is itself a Function with its own "
           "NumPy backward, so `gradcheck` and `gradgradcheck` pass and its second derivatives are "
           "right; the kernel's derivatives exist only as kernel code, at both levels;",
           {"NumpyTanh/backward-detached": "a NumPy backward and nothing more",
            "NumpyTanh/detaches-saved-tensor": "a detached y passed to the inner Function",
            "NumpyTanh/detaches-grad-output": "a detached grad_output passed to the inner Function",
            "NumpyTanh/torch-in-inner-backward": "inner backward in torch",
            "NumpyTanh/inner-gradients-swapped": "inner backward returns its two gradients swapped",
            "NumpyTanh/inner-gradient-count": "inner backward returns one gradient",
            "NumpyTanh/nan-at-saturation":
                "the inner Function saves its output b and divides it by 1 - y^2",
            "NumpyTanh/inner-tensor-on-ctx": "the inner Function keeps g and y as ctx attributes",
            "NumpyTanh/saves-copy-of-output":
                "forward saves a second torch.from_numpy of the same array",
            "NumpyTanh/saves-detached-input": "forward saves x.detach()",
            "case:the Function your backward calls computes": "inner backward gives y nothing",
            "NumpyTanh/hessian-vector-product-wrong":
                "inner backward tests the other input's needs_input_grad entry"}),
    Clause("`NumpyTanh`'s backward is not marked `once_differentiable`;",
           {"NumpyTanh/once-differentiable": "once_differentiable"}),
    Clause("each Function you write keeps tensors only with `ctx.save_for_backward` and reads "
           "them from `ctx.saved_tensors` (none on a `ctx` attribute, set in forward or backward), "
           "and saves no copy of a tensor the graph already keeps.",
           {"NumpyTanh/bypasses-saved-tensors": "forward keeps y in a module dict keyed by id(ctx)",
            "NumpyTanh/inner-bypasses-saved-tensors":
                "the inner Function keeps its tensors in a module dict keyed by id(ctx)",
            "NumpyTanh/inner-saves-copy": "inner Function saves y.clone()",
            "NumpyTanh/saves-wider-output":
                "forward saves a float64 y and returns it cast to x's dtype",
            "NumpyTanh/array-on-ctx": "forward keeps a NumPy tanh array on ctx",
            "NumpyTanh/sets-ctx-in-backward":
                "the inner Function keeps NumPy arrays set in its backward on ctx",
            "NumpyTanh/inner-saves-narrower": "inner Function saves grad_output as float32",
            "NumpyTanh/inner-saves-unguarded-alias":
                "the inner Function saves torch.from_numpy(grad_output.numpy())",
            "NumpyTanh/saves-copy": "forward saves y.clone() and returns y",
            "NumpyTanh/inner-state-on-class": "the inner Function keeps g and y on its class",
            "NumpyTanh/inner-array-on-ctx":
                "the inner Function keeps 1 - y^2 as a NumPy array on ctx",
            "NumpyTanh/stack-popped-empty": "y on a module-level stack, popped in backward",
            "NumpyTanh/cache-keyed-by-input":
                "forward memoises NumPy's tanh in a global cache keyed by the tensor x"}),
)


SWISH_CLAUSES = (
    Clause(r"`x` of any shape and `beta` of any real value, 0 included, with $|\beta x| \le 800$, "
           r"either or both requiring grad: the value and the gradients of $x\,\sigma(\beta x)$, "
           "each gradient backward returns of its input's shape (`beta`'s 0-d);",
           {"unproven:wrong-value": "grad_beta misses a factor x",
            "SwishFunction/returns-gradient-of-another-shape":
                "grad_beta of x's shape, left for the engine to sum",
            "SwishFunction/returns-none-gradient": "None for beta",
            "SwishFunction/divides-by-x": "s = y / x: NaN where x = 0",
            "SwishFunction/clamped-tail":
                "beta * x clamped to +-80 in backward (1 / (1 + exp(-z)))",
            "SwishFunction/float32-overflow": "sigma' as e / (1 + e)^2 with z clamped to +-700: "
                                              "NaN in float32 past |beta x| = 88.7",
            "SwishFunction/x-squared-overflow":
                "grad_beta as (g * x * x * ds).sum(): x * x overflows at huge x",
            "case:tests the other input's flag": "needs_input_grad indices swapped",
            "SwishFunction/requires-grad-shared-between-calls":
                "beta's needs-grad flag kept in a global, set in forward"}),
    Clause("backward is differentiable: the second derivatives through it, with respect to `x`, "
           "`beta` and `grad_output`, are those of the composed ops, so `gradgradcheck` passes;",
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
            "SwishFunction/float32-step": "backward computes in float32 for float64 inputs",
            "SwishFunction/kink-at-zero": "sigmoid recomputed from exp(-|z|) with torch.where: "
                                          "wrong second derivative at x = 0",
            "case:ran inside itself": "autograd.grad of the saved output inside backward (it "
                                      "would run this backward again, without end)"}),
    Clause("`grad_output` may come as a non-contiguous view;",
           {"raised:RuntimeError": "grad_output.view(-1): fails on a transposed grad_output"}),
    Clause("forward keeps tensors only with `ctx.save_for_backward`, and backward reads them "
           "from `ctx.saved_tensors`: never on a `ctx` attribute (set in forward or backward), on "
           "the class or in a global, and no copy of an input.",
           {"SwishFunction/tensor-on-ctx": "tensors on ctx",
            "SwishFunction/sets-ctx-in-backward": "caches the sigmoid as ctx.s in backward",
            "SwishFunction/bypasses-saved-tensors": "(x, beta) in a module dict keyed by id(ctx)",
            "SwishFunction/second-backward-fails":
                "(x, beta) in a WeakKeyDictionary keyed by ctx, popped in backward",
            "SwishFunction/state-on-class": "beta kept on the class, not on ctx",
            "SwishFunction/saves-copy": "saves x.contiguous(): a copy of a transposed x",
            "SwishFunction/state-outside-ctx":
                "sigmoid memoised in a global keyed by x.data_ptr() and beta"}),
)


CUBE_ONCE_CLAUSES = (
    Clause("`CubeOnce.apply(x)` returns `x ** 3` for `x` of any shape, 0-d included; backward "
           "returns the first derivative at every `x`, on `x`'s device, and leaves `x` and "
           "`grad_output` unchanged;",
           {"unproven:wrong-value": "3x instead of 3x^2",
            "CubeOnce/writes-grad-output": "grad_output.mul_(local)",
            "case:modified its input x in place":
                "NumPy backward squares x in place through .numpy()",
            "CubeOnce/divides-by-x": "3y / x in NumPy from the saved x and output: nan at x = 0",
            "case:exactly where x < 0": "y ** (1 / 3) of the saved output: nan at negative x",
            "CubeOnce/from-numpy-on-a-scalar": "torch.from_numpy of a NumPy scalar: fails a 0-d x",
            "CubeOnce/result-left-on-cpu": "forgets .to(x.device): the gradient stays on the CPU",
            "CubeOnce/numpy-off-cpu": ".numpy() without .cpu()",
            "CubeOnce/numpy-result-unconverted": "grad_output times the NumPy array, unconverted",
            "CubeOnce/grad-output-one-number": "multiplies by grad_output's first entry only",
            "CubeOnce/recovers-x-from-output":
                "saves the output, NumPy cube root in backward",
            "CubeOnce/float32-step":
                "3x^2 cast to float32 in backward (torch.as_tensor(..., dtype=float32))",
            "CubeOnce/narrowed-step": "3x^2 cast to float16 in backward (torch.as_tensor(..., "
                                      "dtype=torch.float16))"}),
    Clause("its backward is marked `@once_differentiable`: a second `.backward()` through it "
           "raises when the gradient its backward received requires grad;",
           {"CubeOnce/not-once-differentiable": "forgets @once_differentiable",
            "CubeOnce/unmarked-second-backward-raises": "detaches instead"}),
    Clause("backward reads what it needs from `ctx.saved_tensors`, kept with "
           "`ctx.save_for_backward`: no tensor or array on a `ctx` attribute, on the class or in a "
           "global, "
           "and no copy saved.",
           {"CubeOnce/tensor-on-ctx": "x kept on ctx", "CubeOnce/saves-copy": "saves x.clone()",
            "CubeOnce/sets-ctx-in-backward": "memoises 3x^2 as ctx.local in backward",
            "CubeOnce/bypasses-saved-tensors": "x kept in a module dict keyed by id(ctx)",
            "CubeOnce/state-on-class": "3x^2 as a NumPy array on the class",
            "CubeOnce/array-on-ctx": "a NumPy view of x kept on ctx",
            "CubeOnce/saves-widened": "saves x squared widened to float64",
            "CubeOnce/saves-unguarded-alias": "saves torch.from_numpy(x.numpy()), an alias of x",
            "CubeOnce/saves-cpu-copy":
                "saves a CPU copy of x when x is on a GPU, for NumPy in backward",
            "CubeOnce/cache-keyed-by-input": "3x^2 memoised in a global dict keyed by x.data_ptr()",
            "case:a copy of the output": "returns a copy of the output it saves"}),
)

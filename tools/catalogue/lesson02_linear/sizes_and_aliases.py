"""Lesson 02: the answers of review 57. Three holes let wrong answers pass both checks: the
per-call check's two calls differed only in x's leading shape, so out (or in) kept in a global
for a reshape was the same in both (now every size differs between the two calls, in all three
exercises); the float32 probes had one input feature, so a bias summed with the products (the
x0 = 1 trick, the bias first) rounded as F.linear does (now two features: +inf and an exact 0
where the bias joins the sum last); and the check that nothing output-sized outlives forward saw
only tensors the probed forward allocated, so a workspace kept per shape in a global passed on a
second run (now each run probes a batch size the process has not used). Bilinear saved as .data
passed too: Bilinear's contract now states Exercise 1's per-ctx clause, and its battery changes
x1, x2 and weight in place between forward and backward."""

from .. import Mistake, Unusual, edit
from .answers import FLAT, FUSED_FORWARD, FUSED_READ, FUSED_RETURN, GUARDED, _RETURN, _fused, _linear
from .bilinear import GW, GX1, GX2, _bilinear_with

_LINEAR = _linear(FLAT + GUARDED + "        grad_bias = g2.sum(0) if ctx.has_bias and "
                  "ctx.needs_input_grad[2] else None\n" + _RETURN)
_FUSED = _fused(FUSED_READ + FUSED_RETURN)
_BILINEAR = _bilinear_with(GX1, GX2, GW)
_SHARED = "is right for each call alone but not for two calls in one graph"
_BIAS_FIRST = "adds the bias inside the sum over the input features"
# the bias as column 0 of weight, x0 = 1 prepended to each row of x
_TRICK = ("torch.cat([x.new_ones(*x.shape[:-1], 1), x], -1) @ "
          "torch.cat([bias[:, None], weight], 1).T")

MISTAKES = [
    Mistake("MyLinearFunction", "out kept in a module global, for grad_bias's reshape", _SHARED,
            "_OUT = {}\n" + edit(_LINEAR, ("        ctx.has_bias = bias is not None\n",
                                           "        ctx.has_bias = bias is not None\n"
                                           "        _OUT['out'] = weight.shape[0]\n"),
                                 ("g2.sum(0)", "grad_output.reshape(-1, _OUT['out']).sum(0)"))),
    Mistake("FusedLinearReLU", "out kept in a module global, for backward's reshapes", _SHARED,
            "_OUT = {}\n" + edit(_FUSED, ("        ctx.has_bias = bias is not None\n",
                                          "        ctx.has_bias = bias is not None\n"
                                          "        _OUT['out'] = weight.shape[0]\n"),
                                 ("g.reshape(-1, weight.shape[0])", "g.reshape(-1, _OUT['out'])"))),
    Mistake("Bilinear", "out kept in a module global, for grad_bias's reshape", _SHARED,
            "_OUT = {}\n" + edit(_BILINEAR, ("        ctx.has_bias = bias is not None\n",
                                             "        ctx.has_bias = bias is not None\n"
                                             "        _OUT['out'] = weight.shape[0]\n"),
                                 ("grad_output.reshape(-1, weight.shape[0])",
                                  "grad_output.reshape(-1, _OUT['out'])"))),
    Mistake("Bilinear", "x1, x2 and weight saved as .data",
            "Bilinear saved a tensor autograd cannot check for in-place changes",
            edit(_BILINEAR, ("ctx.save_for_backward(x1, x2, weight)",
                             "ctx.save_for_backward(x1.data, x2.data, weight.data)"))),
    Mistake("FusedLinearReLU", "the pre-activation written into a global workspace per shape",
            "FusedLinearReLU keeps a float64 tensor of the output's size",
            "_WORK = {}\n" + edit(_FUSED, ("z = x @ weight.T", "z = torch.matmul(x, weight.T, "
                                           "out=_WORK.setdefault((x.shape[:-1], weight.shape[0], "
                                           "x.dtype), torch.empty(*x.shape[:-1], weight.shape[0], "
                                           "dtype=x.dtype)))"),
                                  ("z = z + bias", "z.add_(bias)"))),
]

# the bias inside the sum, as its last term: where it lands in the matmul's order of summation
# is the BLAS's choice. The CPU here adds it last (the value x @ weight.T + bias gives), the H200
# of the GPU check (torch 2.11) did not, on its CPU or on CUDA: graded wrong there (1.92e38
# where the products, then the bias, give +inf)

UNUSUAL = []

# correct since issue 69: exact-tie and overflow probes of the order of summation left the domain
UNUSUAL.append(Unusual("MyLinearFunction", "the bias trick: x0 = 1, the bias as column 0 of weight",
        edit(_LINEAR, ("return y + bias if bias is not None else y",
                           f"return {_TRICK} if bias is not None else y"))))

# correct since issue 69: exact-tie and overflow probes of the order of summation left the domain
UNUSUAL.append(Unusual("FusedLinearReLU", "the bias trick: x0 = 1, the bias as column 0 of weight",
        edit(_FUSED, ("        if bias is not None:\n            z = z + bias\n",
                          f"        if bias is not None:\n            z = {_TRICK}\n"))))

# correct since issue 69: exact-tie and overflow probes of the order of summation left the domain
UNUSUAL.append(Unusual("FusedLinearReLU", "the bias trick in float64 only (the float64 exact 0)",
        edit(_FUSED, ("        if bias is not None:\n            z = z + bias\n",
                          "        if bias is not None:\n            z = z + bias if x.dtype != "
                          f"torch.float64 else {_TRICK}\n"))))

# correct since issue 69: infinite pre-activations and grad_output left the domain
UNUSUAL.append(Unusual("FusedLinearReLU", "relu as (z + |z|) / 2: nan where z is -inf",
        edit(_FUSED, ("return z.clamp(min=0)", "return (z + z.abs()) / 2"))))

# correct since issue 69: exact-tie and overflow probes of the order of summation left the domain
UNUSUAL.append(Unusual("MyLinearFunction", "the bias trick with the bias last: x_in = 1 appended",
        edit(_LINEAR, ("return y + bias if bias is not None else y",
                           "return torch.cat([x, x.new_ones(*x.shape[:-1], 1)], -1) @ "
                           "torch.cat([weight, bias[:, None]], 1).T if bias is not None else y"))))

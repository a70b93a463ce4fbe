"""Lesson 12: SoftThreshold's checks: values and both gradients, at the kinks |x| = lam
and beside them, and lam's gradient a sum, not a mean."""

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from ...checks import (case, check_backward_by_hand, check_no_ctx_tensors, check_untouched, check_values_and_gradients,
                      run_backward, run_forward)
from ...diagnose import diagnose_gradient, diagnose_values
from ...errors import GradingError
from .surgery_checks import SOFT, kink_values, matches


WRONG_SIGN = ("SoftThreshold's gradient for lam has the wrong sign: raising lam moves every "
              "entry outside the threshold towards 0. Which way does y move for x > lam, and "
              "for x < -lam? my_soft_threshold_slopes, the derivation's live checker, "
              "checks yours")


def check_kinks(function, device, dtype=torch.float64) -> None:
    """At |x| == lam (and x == 0) both gradients are 0, as F.softshrink's."""
    values = kink_values(device, dtype=dtype)
    x, lam = values["x"], values["lam"]
    forward, backward = check_soft_case(function, values, seed=7, check_gradients=False)
    grad_x, grad_lam = backward.grads
    grad_output = torch.ones_like(x)
    outside = x.abs() > lam
    if isinstance(grad_x, torch.Tensor) and grad_x.isnan().any():
        raise GradingError("SoftThreshold's gradient for x is nan at |x| == lam: a division "
                           "such as relu(z) / z is 0/0 on the kink; build the mask with a "
                           "comparison instead of a division",
                           mistake="SoftThreshold/nan-at-kink")
    if isinstance(grad_x, torch.Tensor) and grad_x.shape == x.shape:
        if torch.equal(grad_x != 0, x.abs() >= lam) and not torch.equal(grad_x != 0, outside):
            raise GradingError("SoftThreshold's gradient for x is not 0 at |x| == lam: forward "
                               "is flat from there inwards, and the contract (as for "
                               "F.softshrink) takes 0 at the kink, but your backward lets "
                               "those entries through: which comparison leaves them out?",
                               mistake="SoftThreshold/passes-kink")
    _name_wrong_side(grad_x, x, lam, grad_output * outside)
    diagnose_gradient("x", grad_x, grad_output * outside)
    expected_lam = -(grad_output * torch.sign(x) * outside).sum()
    right, counted = f"{expected_lam.item():g}", None
    slips = [  # on these values each slip gives its own number (kink_values)
        (-(grad_output * torch.sign(x) * (x.abs() >= lam)).sum(),
         "counts the entries at |x| == lam: there both gradients are 0, but your backward lets "
         "those entries through: which comparison leaves them out?"),
        (-(grad_output * outside).sum(),
         f"is {{got}}, -1 for each entry outside the threshold, where the right value is "
         f"{right}: does an entry below -lam move the same way as lam grows? "
         "my_soft_threshold_slopes, the derivation's live checker, checks your slopes"),
        (-(grad_output * torch.sign(x)).sum(),
         f"is {{got}}, -sum(sign(x)) over every entry, where the right value is {right}: an "
         "entry inside the threshold has y = 0 whatever lam is, so only the entries outside it "
         "count"),
    ]
    for candidate, hint in slips:
        if matches(grad_lam, candidate, expected_lam):
            counted = hint.format(got=f"{candidate.item():g}")
            break
    if counted:
        raise GradingError(f"SoftThreshold's gradient for lam {counted}", mistake={
            "counts the entries at |x| == lam": "SoftThreshold/lam-counts-kink",
            "-1 for each entry outside the threshold": "SoftThreshold/lam-without-sign",
            "over every entry": "SoftThreshold/lam-without-mask"})
    if matches(grad_lam, -expected_lam, expected_lam):
        raise GradingError(WRONG_SIGN, mistake="SoftThreshold/lam-wrong-sign")
    check_lam_not_averaged(function, values, grad_lam=grad_lam)
    diagnose_gradient("lam", grad_lam, expected_lam)


def _name_wrong_side(grad_x, x, lam, expected) -> None:
    """A gradient for x wrong on one piece of the forward alone is named by that piece."""
    if not isinstance(grad_x, torch.Tensor) or grad_x.shape != x.shape:
        return
    wrong = ~((grad_x - expected).abs() <= 1e-9)
    sides = {"x < -lam": x < -lam, "x > lam": x > lam, "|x| <= lam": x.abs() <= lam}
    for side, where in sides.items():
        if wrong.any() and not (wrong & ~where).any():
            at = tuple(wrong.nonzero()[0].tolist())
            raise GradingError(
                f"SoftThreshold's gradient for x is wrong only where {side}: at x = "
                f"{x[at].item():g} (lam = {lam.item():g}) it is {grad_x[at].item():g}, not "
                f"{expected[at].item():g}. What is forward there, as a function of x, and what "
                "is its slope?", mistake="SoftThreshold/wrong-on-one-side")


def check_zero_at_lam_zero(function, device, dtype=torch.float64) -> None:
    """x exactly 0 at lam = 0, relu_model's start: |x| == lam there, so both gradients are 0
    (the contract's convention, F.softshrink's), though y = x when lam = 0."""
    x = torch.tensor([[0.0, 0.7, -0.3], [-0.0, 1.2, 0.0]], dtype=dtype, device=device)
    values = {"x": x, "lam": torch.zeros((), dtype=dtype, device=device)}
    _, backward = check_soft_case(function, values, check_gradients=False)
    grad_x, grad_lam = backward.grads
    if isinstance(grad_x, torch.Tensor) and grad_x.shape == x.shape and \
            (grad_x[x == 0] != 0).any():
        raise GradingError("SoftThreshold's gradient for x is not 0 at x = 0 with lam = 0 "
                           "(relu_model's start): |x| == lam there, and the contract takes 0 "
                           "at |x| == lam for every lam, F.softshrink's convention, although "
                           "y = x when lam = 0. Does your backward treat lam = 0 apart?",
                           mistake="SoftThreshold/passes-kink-at-lam-0")
    diagnose_gradient("x", grad_x, (x != 0).to(dtype))
    diagnose_gradient("lam", grad_lam, -torch.sign(x).sum())


def check_saves_no_x(function, values: dict) -> None:
    """Forward saves what question 4 found and no more, within a budget per entry of x: the
    bytes x's own entry takes (2 at least), in all, and lam if it likes,
    never x or a copy of it in any dtype: x is told apart from y by the entries inside the threshold
    (lam = 0.5)."""
    inputs = {name: value.detach().clone().requires_grad_() for name, value in values.items()}
    forward = run_forward(function, SOFT, inputs)
    x = values["x"]
    for saved in forward.saved:
        tensor = saved.tensor
        if tuple(tensor.shape) != tuple(x.shape) or not tensor.is_floating_point():
            continue
        narrower = tensor.dtype != x.dtype and torch.equal(tensor.detach(), x.to(tensor.dtype))
        if torch.equal(tensor.detach().to(x.dtype), x) or narrower:
            copy = f"x in {str(tensor.dtype).removeprefix('torch.')}, " if narrower else ""
            raise GradingError(
                f"SoftThreshold's forward saves x ({copy}{saved.role}): the contract asks "
                "for what tells backward which entries pass and their signs (question 4), "
                "within a budget per entry of x of the bytes x's own entry takes, and lam if you "
                "like; never x itself, in any dtype",
                mistake="SoftThreshold/saves-x")
    shaped = [saved for saved in forward.saved if saved.tensor.numel() == x.numel()]
    y = forward.output
    size = y.element_size() if isinstance(y, torch.Tensor) else x.element_size()
    per_entry = sum(saved.tensor.element_size() for saved in shaped)
    if per_entry <= max(size, 2):
        return  # y, or codes no larger per entry than x's own entry, in all
    what = ", ".join(f"{saved.role} {str(saved.dtype).removeprefix('torch.')}" for saved in shaped)
    count = {1: f"an x-shaped {str(shaped[0].dtype).removeprefix('torch.')} tensor",
             2: "two x-shaped tensors"}.get(len(shaped), f"{len(shaped)} x-shaped tensors")
    raise GradingError(
        f"SoftThreshold's forward saves {count} ({per_entry} bytes per element): the contract's "
        f"budget per entry of x is what x's own entry takes ({size} bytes), in all",
        f"saved: {what}. Question 4: which one tensor already tells backward both which "
        "entries pass and their signs?", mistake="SoftThreshold/saves-too-much")


def check_small_y(function, device, dtype=torch.float64) -> None:
    """Entries just outside the threshold (y of 1e-9 at lam = 0.5, y of 1e-300 and of the
    subnormal 1e-310 at lam = 0) keep gradient 1 for x: a saved code that rounds such a y to 0
    (y in a narrower float), or a mask y.abs() > finfo.tiny, drops them."""
    for lam, gap in ((0.5, 1e-9), (0.0, 1e-300), (0.0, 1e-310)):  # 1e-310: a subnormal y
        x = torch.tensor([lam + gap, -(lam + gap), lam + 1.0, 0.1 * lam], dtype=dtype,
                         device=device)
        values = {"x": x, "lam": torch.tensor(lam, dtype=dtype, device=device)}
        with case(f"x just outside the threshold (|x| - lam = {gap:g}), lam={lam:g}"):
            forward, backward = check_soft_case(function, values, check_gradients=False)
            grad_x = backward.grads[0]
            if isinstance(grad_x, torch.Tensor) and grad_x.shape == x.shape and \
                    (grad_x[:2] == 0).all() and grad_x[2] != 0:
                narrow = [f"{str(s.dtype).removeprefix('torch.')} {s.role}" for s in forward.saved
                          if s.tensor.is_floating_point() and s.tensor.dtype != dtype
                          and s.tensor.numel() == x.numel()]
                held = f" (the {narrow[0]} tensor forward saves holds y there as 0)" \
                    if narrow else ""
                if not narrow and gap < torch.finfo(dtype).tiny:
                    held = (" (y there is a subnormal number, below finfo.tiny but not 0: which "
                            "comparison tells an entry that passes from one that does not?)")
                raise GradingError(
                    f"SoftThreshold's gradient for x is 0 at entries just outside the threshold "
                    f"(|x| - lam = {gap:g}, lam = {lam:g}, y = +-{gap:g} there): those entries "
                    f"lose their gradient{held}, though they lie outside it",
                    mistake="SoftThreshold/code-loses-small-y")
            diagnose_gradient("x", grad_x, (x.abs() > lam).to(dtype))


class _NonFiniteToInteger(TorchDispatchMode):
    """Notes the first float tensor holding inf or nan that an op converts to an integer dtype
    (``.to(torch.int8)``, ``.long()``, a ``copy_`` into an integer tensor)."""

    def __init__(self):
        super().__init__()
        self.found = ""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        pairs = {torch.ops.aten._to_copy: (args[0], out), torch.ops.aten.copy_: args[1::-1]}
        source, target = pairs.get(func.overloadpacket, (None, None))
        if not self.found and isinstance(source, torch.Tensor) and source.is_floating_point() \
                and isinstance(target, torch.Tensor) and not target.is_floating_point() \
                and not target.is_complex() and target.dtype != torch.bool \
                and not bool(torch.isfinite(source).all()):
            self.found = str(target.dtype).removeprefix("torch.")
        return out


def check_finite_casts(function, device) -> None:
    """Forward converts no inf or nan to an integer dtype: that cast is undefined (C++'s rule,
    which PyTorch keeps: int8 gets 0 on x86 CPUs, other numbers on ARM CPUs and CUDA), so a code
    built as sign(x) / mask is right on one machine by chance."""
    values = kink_values(device)
    x, lam = (values[k].detach().clone().requires_grad_() for k in ("x", "lam"))
    probe = _NonFiniteToInteger()
    try:
        with probe:
            function.apply(x, lam)
    except Exception:  # noqa: BLE001 - a probe: the value checks name a forward that raises
        return
    if probe.found:
        raise GradingError(
            f"SoftThreshold's forward casts inf or nan to {probe.found}: a float that is not "
            "finite has no integer value, and PyTorch leaves that cast undefined: x86 CPUs, ARM "
            "CPUs and CUDA each give their own number, so a code right on one machine is wrong "
            "on another. Build it from finite values: which comparisons give -1, 0 and 1 "
            "without a division?", mistake="SoftThreshold/casts-non-finite-to-integer")


def check_soft_case(function, values: dict, *, seed=0, check_gradients=True, **tolerance):
    """Values and both gradients against autograd through the composed reference."""
    if check_gradients:
        forward, backward = check_values_and_gradients(function, SOFT, values, seed=seed,
                                                       **tolerance)
    else:
        leaf = values["x"].detach().clone().requires_grad_()
        lam = values["lam"].detach().clone().requires_grad_()
        forward = run_forward(function, SOFT, {"x": leaf, "lam": lam})
        diagnose_values("SoftThreshold's output", forward.output, SOFT.reference(**values))
        grad_output = torch.ones_like(values["x"])
        backward = run_backward(SOFT, forward.output, {"x": leaf, "lam": lam}, grad_output)
        check_untouched(SOFT, grad_output, torch.ones_like(grad_output))
    check_no_ctx_tensors(SOFT, forward)
    return forward, backward


def check_lam_not_averaged(function, values: dict, details=None, grad_lam=None) -> None:
    """Names a lam gradient (grad_output = 1; ``grad_lam`` or run here) that is a mean."""
    x, lam = (values[k].detach().clone().requires_grad_() for k in ("x", "lam"))
    try:
        if grad_lam is None:
            grad_lam, = torch.autograd.grad(function.apply(x, lam), lam, torch.ones_like(x))
    except Exception:  # noqa: BLE001 - a probe: the check that called it reports the failure
        return
    right, n = -(torch.sign(x) * (x.abs() > lam)).sum().detach(), x.numel()
    if n > 1 and matches(grad_lam, right / n, right):
        raise GradingError(f"SoftThreshold's gradient for lam is 1/{n} of the right one, and x "
                           f"has {n} entries: it averages over them, but each entry lam moves "
                           "adds its own share to the loss", details,
                           mistake="SoftThreshold/lam-averaged")


def check_soft(function, values: dict, *, seed=0, **tolerance) -> None:
    with case(f"x of shape {tuple(values['x'].shape)}, lam={values['lam'].item():g}"):
        try:
            _, backward = check_soft_case(function, values, seed=seed, **tolerance)
        except GradingError as error:
            if "for lam" in error.hint and "times -1" in error.hint:
                raise GradingError(WRONG_SIGN, error.details,
                                   mistake="SoftThreshold/lam-wrong-sign") from error
            if "for lam" in error.hint:
                check_lam_not_averaged(function, values, error.details)
            raise
        check_backward_by_hand(SOFT, backward)

"""Lesson 05: a frozen parameter (``requires_grad=False``, as in fine-tuning) inside run_fn, or
inside f, gets no gradient, and backward still runs. An answer that lists the parameters for
``torch.autograd.grad`` passes every other check and raises here ("One of the differentiated
Tensors does not require grad")."""

import torch
from torch import nn

from ...checks import case
from ...diagnose import diagnose_gradient
from ...errors import GradingError
from ...function_contract import rule_reference
from ...exercise import sample
from .argument_probes import check_ignored_gets_none
from .checkpoint_blocks import WIDTH, _linear, learner_raised, parameters_of


def _check_untouched(who: str, frozen: nn.Module, mistake: str) -> None:
    exercise_name = who
    for name, parameter in parameters_of(frozen).items():
        if parameter.grad is not None and parameter.requires_grad:  # it was frozen: unfrozen
            raise GradingError(
                f"{who} unfroze the frozen parameter {name} (requires_grad False before the "
                "call, True after it) and gave it a .grad: something it ran set requires_grad "
                "to True on the caller's frozen parameters (a module's requires_grad_(True) sets "
                f"every one of them), where a plain run leaves them frozen "
                f"{rule_reference('caller')}", mistake=f"{exercise_name}/changes-caller-state")
        if parameter.grad is not None:
            raise GradingError(
                f"{who} gave the frozen parameter {name} (requires_grad=False) a .grad: a plain "
                "run gives it none; which parameters should receive one?", mistake=mistake)


def _check_frozen_run(who: str, holder: str, frozen: nn.Module, run) -> None:
    """``run()`` backpropagates through ``who`` with the frozen module inside ``holder``: it
    runs, and leaves every frozen parameter without .grad."""
    mistake = f"{who}/frozen-parameter"
    with learner_raised(lambda error: GradingError(
            f"{who} raised {type(error).__name__} in backward when {holder} holds a frozen "
            "parameter (requires_grad=False, as in fine-tuning): it gets no gradient, and asking "
            "autograd for one raises; which tensors does your backward ask gradients for, and "
            "does every one of them require grad?", str(error), mistake=mistake)):
        run()
    _check_untouched(who, frozen, mistake)


def frozen_block(device, seed: int = 30) -> tuple[nn.Module, nn.Module]:
    """Linear (frozen), Tanh, Linear (trained): the block, and its frozen Linear."""
    frozen = _linear(WIDTH, WIDTH, device, seed).requires_grad_(False)
    return nn.Sequential(frozen, nn.Tanh(), _linear(WIDTH, WIDTH, device, seed + 1)), frozen


def check_checkpoint_frozen(function, device, check_block) -> None:
    """CheckpointFunction with a frozen Linear in run_fn: runs, leaves it without .grad, and
    gives the rest the gradients a plain run gives."""
    block, frozen = frozen_block(device)
    x = sample((3, WIDTH), device, seed=32)
    _check_frozen_run("CheckpointFunction", "run_fn", frozen, lambda: function.apply(
        block, x.clone().requires_grad_()).sum().backward())
    trained = {name: p for name, p in parameters_of(block).items() if p.requires_grad}
    check_block(function, block, {"run_fn": block, "x": x}, {"x"}, trained)


def check_coupling_frozen(function, values: dict, check_coupling) -> None:
    """ReversibleCoupling with f = Linear (frozen), Tanh: the same three things."""
    frozen = values["f"][0].requires_grad_(False)
    x1, x2 = (values[n].clone().requires_grad_() for n in ("x1", "x2"))
    _check_frozen_run("ReversibleCoupling", "f", frozen, lambda: sum(
        y.sum() for y in function.apply(x1, x2, values["f"], values["g"])).backward())
    check_coupling(function, values)


def check_frozen_with_dummy(function, device) -> None:
    """Every parameter of run_fn frozen, and the only tensor argument that requires grad one that
    run_fn ignores (the lesson's dummy input), or uses only through .detach(): the rebuilt output
    requires no grad. Backward still runs (the output of apply requires grad, so the caller's
    loss.backward() reaches it), gives the data None, the dummy no gradient, and no parameter a
    .grad; a trained head after the block gets the gradient a plain run gives it."""
    block = frozen_block(device, seed=40)[0].requires_grad_(False)
    head = _linear(WIDTH, 1, device, 42)
    data = sample((4, WIDTH), device, seed=43)
    expected = torch.autograd.grad(head(block(data)).square().sum(), head.weight)[0]
    mistake = "CheckpointFunction/backward-without-graph"
    for label, run_fn in (("ignores", lambda h, _: block(h)),
                          ("uses only through .detach()", lambda h, d: block(h) + 0 * d.detach())):
        dummy = torch.ones((), device=device, dtype=data.dtype, requires_grad=True)
        head.weight.grad = None
        with learner_raised(lambda error, label=label: GradingError(
                f"CheckpointFunction raised {type(error).__name__} in backward when every "
                "parameter of run_fn is frozen (requires_grad=False) and the only tensor argument "
                f"that requires grad is a dummy that run_fn {label}: the rebuilt output then "
                "requires no grad, yet a plain run of the step trains the head after the block; "
                "what must your backward do when the output it rebuilt has no graph?",
                str(error), mistake=mistake)):
            head(function.apply(run_fn, data, dummy)).square().sum().backward()
        _check_untouched("CheckpointFunction", block, mistake)
        check_ignored_gets_none("CheckpointFunction", f"a dummy input run_fn {label} (every "
                                "parameter frozen)", dummy, mistake)
        if head.weight.grad is None or not torch.allclose(head.weight.grad, expected):
            raise GradingError(
                "with every parameter of run_fn frozen and a dummy input, the trained head after "
                "CheckpointFunction did not get the gradient a plain run gives it",
                mistake=mistake)


def check_checkpoint_eval_mode(function, device) -> None:
    """CheckpointFunction on a block the caller put in eval mode (Linear, Dropout, Tanh): the
    recomputation runs it as the caller left it (dropout off), and every module is still in
    eval mode afterwards, as a plain run leaves it (rule 6)."""
    block = nn.Sequential(_linear(WIDTH, WIDTH, device, 33), nn.Dropout(0.5), nn.Tanh()).eval()
    x = sample((3, WIDTH), device, seed=34)
    plain = x.clone().requires_grad_()
    block(plain).sum().backward()
    mine = x.clone().requires_grad_()
    function.apply(block, mine).sum().backward()
    flipped = [name or "run_fn" for name, module in block.named_modules() if module.training]
    if flipped:
        raise GradingError(
            f"CheckpointFunction left {flipped[0]} in training mode, where the caller had put "
            "run_fn in eval mode (dropout off): backward recomputes run_fn as the caller left "
            "it, and leaves the caller's modules as they were (Function contract, rule 6: The "
            "caller's state is left as it was)", mistake="CheckpointFunction/changes-caller-state")
    if mine.grad is None or not torch.allclose(mine.grad, plain.grad):
        raise GradingError(
            "CheckpointFunction's gradient for x differs from a plain run of an eval-mode run_fn "
            "(Linear, Dropout, Tanh): does backward recompute run_fn in another mode than the "
            "caller's (dropout on)?", mistake="CheckpointFunction/changes-caller-state")


def check_identity_run_fn(function, device) -> None:
    """A run_fn that returns its argument itself (nn.Identity, a Dropout in eval mode): the
    rebuilt output is then the fresh leaf, which requires grad but has no grad_fn, and a plain
    run gives x grad_output as it is. An answer that tests ``output.grad_fn`` (or is_leaf)
    before it backpropagates gives x nothing."""
    for label, block in (("nn.Identity()", nn.Identity()),
                         ("nn.Dropout(0.5) in eval mode", nn.Dropout(0.5).eval())):
        x = sample((3, WIDTH), device, seed=35).requires_grad_()
        grad_output = sample((3, WIDTH), device, seed=36)
        with case(f"run_fn = {label}, which returns its argument itself, x of shape (3, 5)"):
            torch.autograd.backward(function.apply(block, x), grad_output)
            if x.grad is None:
                raise GradingError(
                    f"CheckpointFunction gave x no gradient when run_fn ({label}) returns its "
                    "argument itself, where a plain run gives x grad_output as it is: the "
                    "rebuilt output is then your fresh leaf, which requires grad but has no "
                    "grad_fn; what does your backward test before it backpropagates, and is it "
                    "true of a leaf?", mistake="CheckpointFunction/identity-run-fn")
            diagnose_gradient("x", x.grad, grad_output)

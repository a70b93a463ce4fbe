"""Lesson 13: silu_mul registered in other forms than the lesson's, each correct: a backward
operator writing into declared out arguments, and the function form of custom_op registered by
name."""

from .. import Unusual
from .common import _edit
from .silu_mul import SILU_MUL

OUT_ARGUMENTS = _edit(
    SILU_MUL,
    ('''@torch.library.custom_op("autograd_course::silu_mul_backward", mutates_args=())
def silu_mul_backward(grad: torch.Tensor, a: torch.Tensor,
                      b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    grad, a, b = grad.contiguous(), a.contiguous(), b.contiguous()
    grad_a, grad_b = torch.empty_like(a), torch.empty_like(b)
    silu_mul_backward_kernel[(triton.cdiv(a.numel(), BLOCK),)](grad, a, b, grad_a, grad_b,
                                                               a.numel(), BLOCK=BLOCK)
    return grad_a, grad_b


@silu_mul_backward.register_fake
def _(grad, a, b):
    return (torch.empty_like(a, memory_format=torch.contiguous_format),
            torch.empty_like(b, memory_format=torch.contiguous_format))
''', '''@torch.library.custom_op("autograd_course::silu_mul_backward",
                         mutates_args=("grad_a", "grad_b"))
def silu_mul_backward(grad: torch.Tensor, a: torch.Tensor, b: torch.Tensor,
                      grad_a: torch.Tensor, grad_b: torch.Tensor) -> None:
    grad, a, b = grad.contiguous(), a.contiguous(), b.contiguous()
    silu_mul_backward_kernel[(triton.cdiv(a.numel(), BLOCK),)](grad, a, b, grad_a, grad_b,
                                                               a.numel(), BLOCK=BLOCK)


@silu_mul_backward.register_fake
def _(grad, a, b, grad_a, grad_b):
    return None
'''),
    ("    return silu_mul_backward(grad_output, a, b)",
     "    grad_a = torch.empty(a.shape, dtype=a.dtype, device=a.device)\n"
     "    grad_b = torch.empty(b.shape, dtype=b.dtype, device=b.device)\n"
     "    silu_mul_backward(grad_output, a, b, grad_a, grad_b)\n"
     "    return grad_a, grad_b"),
)

FUNCTION_FORM = _edit(
    SILU_MUL,
    ('''@torch.library.custom_op("autograd_course::silu_mul", mutates_args=())
def silu_mul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    a, b = a.contiguous(), b.contiguous()
    y = torch.empty_like(a)
    silu_mul_kernel[(triton.cdiv(a.numel(), BLOCK),)](a, b, y, a.numel(), BLOCK=BLOCK)
    return y
''', '''def silu_mul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """silu(a) * b."""
    a, b = a.contiguous(), b.contiguous()
    y = torch.empty_like(a)
    block = min(1024, triton.next_power_of_2(max(a.numel(), 1)))
    silu_mul_kernel[(triton.cdiv(a.numel(), block),)](a, b, y, a.numel(), BLOCK=block)
    return y


silu_mul = torch.library.custom_op("autograd_course::silu_mul", silu_mul, mutates_args=())
'''),
)

# two unusual choices in each entry: an entry costs a whole battery of interpreted kernels
UNUSUAL = [
    Unusual("silu_mul", "a backward operator writing into declared out arguments "
            "(mutates_args), returning None; setup_context saves a and b by name",
            _edit(OUT_ARGUMENTS, ("    ctx.save_for_backward(*inputs)",
                                  "    ctx.save_for_backward(inputs[0], inputs[1])"))),
    Unusual("silu_mul", "the function form of custom_op, the block chosen per call, registered "
            "by name: torch.library.register_fake and register_autograd",
            _edit(FUNCTION_FORM,
                  ("@silu_mul.register_fake\ndef _(a, b):",
                   '@torch.library.register_fake("autograd_course::silu_mul")\ndef _(a, b):'),
                  ("silu_mul.register_autograd(backward, setup_context=setup_context)",
                   'torch.library.register_autograd("autograd_course::silu_mul", backward,\n'
                   '                                setup_context=setup_context)'))),
]

"""Lesson 13: silu_mul registered in other forms than the lesson's, each correct: a backward
operator writing into declared out arguments, and the function form of custom_op registered by
name; and registered under a name other than the exercise's, which is wrong."""

from .. import Mistake, Unusual
from .common import _edit
from .silu_mul import SILU_MUL
from .variants import _ALLOCATE, _CALL, _FAKES

OUT_ARGUMENTS = _edit(
    SILU_MUL,
    ('@torch.library.custom_op("autograd_course::silu_mul_backward", mutates_args=())\n'
     "def silu_mul_backward(grad: torch.Tensor, a: torch.Tensor, b: torch.Tensor, need_a: bool,\n"
     "                      need_b: bool) -> tuple[torch.Tensor, torch.Tensor]:\n"
     "    grad, a, b = grad.contiguous(), a.contiguous(), b.contiguous()\n" + _ALLOCATE,
     '@torch.library.custom_op("autograd_course::silu_mul_backward",\n'
     '                         mutates_args=("grad_a", "grad_b"))\n'
     "def silu_mul_backward(grad: torch.Tensor, a: torch.Tensor, b: torch.Tensor,\n"
     "                      grad_a: torch.Tensor, grad_b: torch.Tensor, need_a: bool,\n"
     "                      need_b: bool) -> None:\n"
     "    grad, a, b = grad.contiguous(), a.contiguous(), b.contiguous()\n"),
    ("    return grad_a, grad_b\n\n\n@silu_mul_backward.register_fake\n"
     "def _(grad, a, b, need_a, need_b):\n" + _FAKES + "\n",
     "\n\n@silu_mul_backward.register_fake\n"
     "def _(grad, a, b, grad_a, grad_b, need_a, need_b):\n    return None\n"),
    (_CALL,
     "    need_a, need_b = ctx.needs_input_grad\n"
     "    grad_a = torch.empty(a.shape, dtype=a.dtype, device=a.device) if need_a else None\n"
     "    grad_b = torch.empty(b.shape, dtype=b.dtype, device=b.device) if need_b else None\n"
     "    silu_mul_backward(grad_output, a, b, a.new_empty(0) if grad_a is None else grad_a,\n"
     "                      b.new_empty(0) if grad_b is None else grad_b, need_a, need_b)\n"
     "    return grad_a, grad_b\n"),
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

# a fresh review's first try (review 81): the right operator registered under another name, which
# the checks that look the operator up by name (opcheck) met only after half a minute, as a raw
# AttributeError from inside the grader
MISTAKES = [
    Mistake("silu_mul", "the operator registered under another name (silu_mul_v2)",
            "but not autograd_course::silu_mul, the operator the exercise names",
            SILU_MUL.replace('"autograd_course::silu_mul"', '"autograd_course::silu_mul_v2"')),
]

"""Lesson 12's answer builders for GradientReversal and ClipGradientNorm, two Functions whose
forward is the identity: a forward that keeps its constant on ctx and returns a view of x, the
backward body each entry writes, and the row norms ClipGradientNorm clips by."""


_IDENTITY = '''
    @staticmethod
    def forward(ctx, x, {constant}):
        ctx.{constant} = {constant}
        return x.view_as(x)
'''


def _surgery(name: str, constant: str, backward_body: str, forward: str | None = None) -> str:
    forward = forward or _IDENTITY.format(constant=constant)
    return (f"class {name}(torch.autograd.Function):\n{forward}\n    @staticmethod\n"
            f"    def backward(ctx, grad_output):\n{backward_body}")


def _reversal(backward_body: str, forward: str | None = None) -> str:
    return _surgery("GradientReversal", "alpha", backward_body, forward)


def _clip(backward_body: str, forward: str | None = None) -> str:
    return _surgery("ClipGradientNorm", "max_norm", backward_body, forward)


_NORMS = "        norms = torch.linalg.vector_norm(grad_output, dim=-1, keepdim=True)\n"

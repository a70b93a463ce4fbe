"""Lesson 01: state kept outside ctx (Function contract, rule 4): the last call's output in a
module global, scales in dicts keyed by id(ctx) or by ctx (popped, or never removed), on a
deque, on the class, or hung on x itself."""

from .. import Mistake

MISTAKES = [
    Mistake("MySigmoid", "saves y, backward reads the last call's y from a module global",
            "backward used another call's inputs",
            """_LAST = {}

class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        z = torch.exp(-x.abs())
        y = torch.where(x >= 0, 1 / (1 + z), z / (1 + z))
        ctx.save_for_backward(y)
        _LAST['y'] = y.detach()
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y = _LAST['y']
        return grad_output * y * (1 - y)
"""),
    Mistake("Softplus", "saves y, backward reads the last call's y from a module global",
            "backward used another call's inputs",
            """_LAST = {}

class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))
        ctx.save_for_backward(y)
        _LAST['y'] = y.detach()
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y = _LAST['y']
        return grad_output * -torch.expm1(-y)
"""),
    Mistake("Softplus", "y saved and also kept in a module dict keyed by id(ctx), popped in "
                        "backward",
            "Softplus.backward raised KeyError when run a second time on one graph",
            """_outputs = {}

class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))
        ctx.save_for_backward(y)
        _outputs[id(ctx)] = y
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y = _outputs.pop(id(ctx))
        return grad_output * -torch.expm1(-y)
"""),
    Mistake("ScaledSigmoid", "scale in a dict on the class keyed by id(ctx), popped in backward",
            "adding an entry to a dict on the class",
            """
class ScaledSigmoid(torch.autograd.Function):
    scales = {}

    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ScaledSigmoid.scales[id(ctx)] = scale
        return scale * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_output * ScaledSigmoid.scales.pop(id(ctx)) * s * (1 - s), None
"""),
    Mistake("ScaledSigmoid", "scale in a module dict keyed by id(ctx), popped in backward",
            "ScaledSigmoid.backward raised KeyError when run a second time on one graph",
            """
_scales = {}

class ScaledSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        _scales[id(ctx)] = scale
        return scale * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_output * _scales.pop(id(ctx)) * s * (1 - s), None
"""),
    Mistake("ScaledSigmoid", "scale in a module WeakKeyDictionary keyed by ctx",
            "ScaledSigmoid.forward kept state outside ctx: _scale_of in a module global",
            """import weakref
_scale_of = weakref.WeakKeyDictionary()

class ScaledSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        _scale_of[ctx] = scale
        return scale * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_output * _scale_of[ctx] * s * (1 - s), None
"""),
    Mistake("ScaledSigmoid", "scale in a module dict keyed by id(ctx), never removed",
            "ScaledSigmoid.forward kept state outside ctx: _SCALES in a module global",
            """_SCALES = {}

class ScaledSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        _SCALES[id(ctx)] = scale
        return scale * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_output * _SCALES[id(ctx)] * s * (1 - s), None
"""),
    Mistake("ScaledSigmoid", "scale pushed on a module deque, popped in backward",
            "used another call's scale",
            """import collections
_pending = collections.deque()

class ScaledSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        _pending.append(scale)
        return scale * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_output * _pending.pop() * s * (1 - s), None
"""),
    Mistake("ScaledSigmoid", "scale kept as an attribute of x",
            "ScaledSigmoid.forward set x.scale on its input x: keep state on ctx, not on a "
            "tensor",
            """
class ScaledSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        x.scale = scale
        ctx.save_for_backward(x)
        return scale * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_output * x.scale * s * (1 - s), None
"""),
]

# a fresh review (score 8): caught by gradcheck, which perturbs x in place, with no cause named
MISTAKES += [
    Mistake("Softplus", "forward memoised in a module dict keyed by x's memory, shape and dtype",
            "Softplus.forward kept state outside ctx: _cache in a module global",
            """_cache = {}

class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        # the sum too: a freed tensor's memory reused by another input would otherwise hand it
        # the old output, and which check sees that first would depend on the allocator
        key = (x.data_ptr(), x.shape, x.dtype, x.sum().item())
        if key not in _cache:
            _cache[key] = x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))
        y = _cache[key].clone()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * -torch.expm1(-y)
"""),
]

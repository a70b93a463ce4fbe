"""Lesson 00: state kept outside ctx (Function contract, rule 4): copies and flags in module
dicts keyed by id(ctx), a FIFO shared by every call, a closure on ctx, caches keyed by the
input tensor (stale after an in-place step between calls), caches and counters on the class,
a mutable default argument, an attribute hung on an input tensor (read back or not), a tensor
backward caches on ctx for the next one. Each fails where calls overlap or a tensor changes
between them, or, on an input tensor, as soon as forward sets it. Rule 4 leaves no exception:
even a module-level call counter that backward never reads is state outside ctx."""

from .. import Mistake

UNUSUAL = []

MISTAKES = [
    Mistake("Square", "a module-level call counter that backward never reads",
            "Square.forward kept state outside ctx: CALLS in a module global",
            """CALLS = 0

class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        global CALLS
        CALLS += 1
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * 2 * x
"""),
    Mistake("Square", "a copy of x in a module dict keyed by id(ctx)",
            "Square's backward reads x from somewhere other than ctx.saved_tensors",
            """_kept = {}

class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        _kept[id(ctx)] = x.detach().clone()
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 2 * _kept[id(ctx)]
"""),
    Mistake("Square", "a copy of x popped from a module dict keyed by id(ctx)",
            "Square's backward reads x from somewhere other than ctx.saved_tensors",
            """_kept = {}

class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        _kept[id(ctx)] = x.detach().clone()
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 2 * _kept.pop(id(ctx))
"""),
    Mistake("Square", "a flag in a module dict keyed by id(ctx), popped by backward",
            "Square.backward raised KeyError when run a second time on one graph",
            """_pending = {}

class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        _pending[id(ctx)] = True
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        _pending.pop(id(ctx))
        x, = ctx.saved_tensors
        return grad_output * 2 * x
"""),
    Mistake("Square", "x kept in a closure on ctx",
            "Square stores a tensor as ctx.get's closure variable x",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.get = lambda: x
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x = ctx.get()
        return grad_output * 2 * x
"""),
    # 2x made in backward and kept on ctx for the next backward: it outlives backward with the
    # graph, and no version counter guards it (a stale gradient after an in-place step where
    # autograd raises)
    Mistake("Square", "2x cached on ctx by backward, for the next backward",
            "Square's backward stores a tensor as ctx.twice",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        if not hasattr(ctx, "twice"):
            x, = ctx.saved_tensors
            ctx.twice = 2 * x
        return grad_output * ctx.twice
"""),
    Mistake("Square", "a FIFO of derivatives in a module global, shared by every call",
            "a tensor from an earlier call of another shape",
            """import collections
_q = collections.deque()

class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        if torch.is_grad_enabled() or x.requires_grad:
            _q.append(2 * x.detach())
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        d = _q[0] if len(_q) == 1 else _q.popleft()
        return grad_output * d
"""),
    Mistake("Square", "2x cached by the tensor x in forward, saved for backward",
            "returned grad_x of the old values",
            """import weakref
_cache = {}


def _cached(tensors, extra, make):
    key = tuple(id(t) for t in tensors) + extra
    hit = _cache.get(key)
    if hit is None or any(ref() is not t for ref, t in zip(hit[0], tensors)):
        hit = _cache[key] = ([weakref.ref(t) for t in tensors], make())
    return hit[1]

class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(_cached((x,), (), lambda: 2 * x))
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        two_x, = ctx.saved_tensors
        return grad_output * two_x
"""),
    Mistake("Square", "the output cached by the tensor x",
            "returned the output of the old values",
            """import weakref
_cache = {}


def _cached(tensors, extra, make):
    key = tuple(id(t) for t in tensors) + extra
    hit = _cache.get(key)
    if hit is None or any(ref() is not t for ref, t in zip(hit[0], tensors)):
        hit = _cache[key] = ([weakref.ref(t) for t in tensors], make())
    return hit[1]

class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _cached((x,), (), lambda: x ** 2).clone()

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * 2 * x
"""),
    Mistake("Square", "a constant 2 cached on the class, by dtype, in backward",
            "Square.backward sets Square._two",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        cache = Square.__dict__.get('_two')
        if cache is None:
            Square._two = cache = {}
        two = cache.setdefault(x.dtype, torch.tensor(2.0, dtype=x.dtype))
        return two * x * grad_output
"""),
    Mistake("Square", "a constant 2 cached on the class, by dtype, in forward",
            "Square.forward sets Square._two",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        cache = Square.__dict__.get('_two')
        if cache is None:
            Square._two = cache = {}
        cache.setdefault(x.dtype, 2.0)
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return Square._two[x.dtype] * x * grad_output
"""),
    Mistake("WeightedSum", "the last call's weights in a module dict",
            "WeightedSum's backward used another call's weights",
            """_last = {}

class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        _last['w'] = (w1, w2)
        return w1 * x1 + w2 * x2

    @staticmethod
    def backward(ctx, grad_output):
        w1, w2 = _last['w']
        return grad_output * w1, grad_output * w2, None, None
"""),
    Mistake("WeightedSum", "the weights in a module dict keyed by id(ctx), never removed",
            "WeightedSum.forward kept state outside ctx: _W in a module global",
            """_W = {}

class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        _W[id(ctx)] = (w1, w2)
        return w1 * x1 + w2 * x2

    @staticmethod
    def backward(ctx, grad_output):
        w1, w2 = _W[id(ctx)]
        return grad_output * w1, grad_output * w2, None, None
"""),
    Mistake("WeightedSum", "weights kept in a mutable default argument of forward",
            "WeightedSum.forward changed its own mutable default argument",
            """
class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2, _last=[]):
        _last[:] = [w1, w2]
        return w1 * x1 + w2 * x2

    @staticmethod
    def backward(ctx, grad_output):
        w1, w2 = WeightedSum.forward.__defaults__[0]
        return grad_output * w1, grad_output * w2, None, None
"""),
    Mistake("WeightedSum", "a flag set once on the class in forward",
            "WeightedSum.forward sets WeightedSum._ready",
            """
class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        if not WeightedSum.__dict__.get('_ready'):
            WeightedSum._ready = True
        ctx.w1, ctx.w2 = w1, w2
        return w1 * x1 + w2 * x2

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.w1, grad_output * ctx.w2, None, None
"""),
    Mistake("WeightedSum", "the output cached by the tensors x1, x2 and the weights",
            "returned the output of the old values",
            """import weakref
_cache = {}


def _cached(tensors, extra, make):
    key = tuple(id(t) for t in tensors) + extra
    hit = _cache.get(key)
    if hit is None or any(ref() is not t for ref, t in zip(hit[0], tensors)):
        hit = _cache[key] = ([weakref.ref(t) for t in tensors], make())
    return hit[1]

class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        ctx.w1, ctx.w2 = w1, w2
        return _cached((x1, x2), (w1, w2), lambda: w1 * x1 + w2 * x2).clone()

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.w1, grad_output * ctx.w2, None, None
"""),
    Mistake("Outer", "copies of u and v in a module dict keyed by id(ctx)",
            "Outer's backward reads u and v from somewhere other than ctx.saved_tensors",
            """_inputs = {}

class Outer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u, v):
        _inputs[id(ctx)] = (u.detach().clone(), v.detach().clone())
        return torch.outer(u, v)

    @staticmethod
    def backward(ctx, grad_output):
        u, v = _inputs[id(ctx)]
        return (grad_output @ v if ctx.needs_input_grad[0] else None,
                u @ grad_output if ctx.needs_input_grad[1] else None)
"""),
    Mistake("Outer", "a call counter on the class",
            "Outer.forward sets Outer.calls: a class attribute is shared by every call",
            """
class Outer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u, v):
        Outer.calls = getattr(Outer, 'calls', 0) + 1
        ctx.save_for_backward(u, v)
        return torch.outer(u, v)

    @staticmethod
    def backward(ctx, grad_output):
        u, v = ctx.saved_tensors
        return (grad_output @ v if ctx.needs_input_grad[0] else None,
                u @ grad_output if ctx.needs_input_grad[1] else None)
"""),
    Mistake("Outer", "a call counter in a list on the class",
            "Outer.forward changes what is in Outer.calls",
            """
class Outer(torch.autograd.Function):
    calls = [0]

    @staticmethod
    def forward(ctx, u, v):
        Outer.calls[0] += 1
        ctx.save_for_backward(u, v)
        return torch.outer(u, v)

    @staticmethod
    def backward(ctx, grad_output):
        u, v = ctx.saved_tensors
        return (grad_output @ v if ctx.needs_input_grad[0] else None,
                u @ grad_output if ctx.needs_input_grad[1] else None)
"""),
    Mistake("Outer", "the output cached by the tensors u and v",
            "returned the output of the old values",
            """import weakref
_cache = {}


def _cached(tensors, extra, make):
    key = tuple(id(t) for t in tensors) + extra
    hit = _cache.get(key)
    if hit is None or any(ref() is not t for ref, t in zip(hit[0], tensors)):
        hit = _cache[key] = ([weakref.ref(t) for t in tensors], make())
    return hit[1]

class Outer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u, v):
        ctx.save_for_backward(u, v)
        return _cached((u, v), (), lambda: torch.outer(u, v)).clone()

    @staticmethod
    def backward(ctx, grad_output):
        u, v = ctx.saved_tensors
        return (grad_output @ v if ctx.needs_input_grad[0] else None,
                u @ grad_output if ctx.needs_input_grad[1] else None)
"""),
    # state on an input tensor (rule 4): save_for_backward does not keep a tensor's attributes
    # (saved-tensor hooks hand backward a tensor without them), and every call on that tensor
    # shares them; named when forward sets one, read back or not
    Mistake("Square", "2x hung on the input x, read back through the saved x",
            "Square.forward set x._double, an attribute on its input x",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x._double = 2 * x
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * x._double
"""),
    # a review's answer (lesson 00, score 7): v travels with u; backward's AttributeError under
    # saved-tensor hooks did not say why
    Mistake("Outer", "v hung on u as u.partner, read back in backward",
            "Outer.forward set u.partner, an attribute on its input u",
            """
class Outer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u, v):
        u.partner = v
        ctx.save_for_backward(u)
        return u[:, None] * v[None, :]

    @staticmethod
    def backward(ctx, grad_output):
        u, = ctx.saved_tensors
        v = u.partner
        gu = grad_output @ v if ctx.needs_input_grad[0] else None
        gv = u @ grad_output if ctx.needs_input_grad[1] else None
        return gu, gv
"""),
    # a review's answer (lesson 00, score 7): an attribute set on u that backward never reads;
    # still state kept on an input tensor, which rule 4 forbids (a second call overwrites it)
    Mistake("Outer", "an attribute set on the input u in forward, unused",
            "Outer.forward set u._outer_n, an attribute on its input u",
            """
class Outer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u, v):
        ctx.save_for_backward(u, v)
        u._outer_n = v.shape[0]
        return u[:, None] * v[None, :]

    @staticmethod
    def backward(ctx, grad_output):
        u, v = ctx.saved_tensors
        gu = grad_output @ v if ctx.needs_input_grad[0] else None
        gv = u @ grad_output if ctx.needs_input_grad[1] else None
        return gu, gv
"""),
]

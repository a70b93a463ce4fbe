"""Lesson 09: what backward needs kept somewhere other than its call's ctx (Function contract,
rule 4): tensors as ctx attributes, out of autograd's sight (BroadcastMul's and ProdOverDim's
inputs; Cumsum's x, which backward does not need at all), and the last call's tensors in a
module global (CumMax's indices, IndexSelect's index)."""

from .. import Mistake, edit
from .answers import (_CUMMAX_FORWARD, _INDEX_ADD, _MUL_FORWARD, _PROD_EXACT, _PROD_FORWARD,
                      _REVERSED, _SCATTER_ADD, _SELECT_FORWARD, _cummax, _cumsum, _function, _mul,
                      _prod, _select)

_MUL_NEEDED = '''        grad_a = (grad_output * b).sum_to_size(a.shape) if ctx.needs_input_grad[0] else None
        grad_b = (grad_output * a).sum_to_size(b.shape) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b
'''
_GLOBAL = "_KEPT = {}\n"

MISTAKES = [
    Mistake("BroadcastMul", "a and b kept as ctx attributes",
            "a tensor is never a ctx attribute (a rule for every exercise",
            edit(_mul(_MUL_NEEDED, edit(_MUL_FORWARD, ("ctx.save_for_backward(a, b)",
                                                       "ctx.a, ctx.b = a, b"))),
                 ("a, b = ctx.saved_tensors", "a, b = ctx.a, ctx.b"))),
    Mistake("ProdOverDim", "x kept as a ctx attribute",
            "a tensor is never a ctx attribute (a rule for every exercise",
            edit(_prod(_PROD_EXACT, edit(_PROD_FORWARD, ("ctx.save_for_backward(x)",
                                                         "ctx.x = x"))),
                 ("x, = ctx.saved_tensors", "x = ctx.x"))),
    Mistake("Cumsum", "x kept on ctx for its shape", "does backward need that tensor at all",
            _cumsum(_REVERSED.replace(".flip(dim), None", ".flip(dim).reshape(ctx.x.shape), None"),
                    forward='''    def forward(ctx, x, dim):
        ctx.x, ctx.dim = x, dim
        return torch.cumsum(x, dim)
'''), named=True),
    Mistake("IndexSelect", "the index kept in a module global",
            "IndexSelect.forward kept state outside ctx: _KEPT in a module global",
            _GLOBAL + edit(_select(_INDEX_ADD, forward=edit(
                _SELECT_FORWARD, ("ctx.save_for_backward(index)", "_KEPT['index'] = index"))),
                ("        index, = ctx.saved_tensors\n", "        index = _KEPT['index']\n"))),
    Mistake("CumMax", "the indices of the last call kept in a module global",
            "CumMax.forward kept state outside ctx: _KEPT in a module global",
            _GLOBAL + edit(_cummax(_SCATTER_ADD, forward=edit(
                _CUMMAX_FORWARD, ("ctx.save_for_backward(indices)", "_KEPT['indices'] = indices"))),
                ("        indices, = ctx.saved_tensors\n", "        indices = _KEPT['indices']\n"))),
    # review 71: state kept on the caller's tensor, out of every namespace's sight; the watch
    # on every call compares the tensors' attributes
    Mistake("BroadcastMul", "a flag set on the input tensor a in forward",
            "BroadcastMul.forward set a._bm_seen on its input a: keep state on ctx",
            _mul(_MUL_NEEDED, edit(_MUL_FORWARD, ("ctx.save_for_backward(a, b)",
                                                  "ctx.save_for_backward(a, b)\n"
                                                  "        a._bm_seen = True")))),
    Mistake("Cumsum", "a call counter kept on the input tensor x",
            "Cumsum.forward set x.n_cumsum_calls on its input x: keep state on ctx",
            _cumsum(_REVERSED, forward='''    def forward(ctx, x, dim):
        x.n_cumsum_calls = getattr(x, "n_cumsum_calls", 0) + 1
        ctx.dim = dim
        return torch.cumsum(x, dim)
''')),
    # review 71: a module-level cache of ones, filled per shape, dtype and device; a second
    # self-check in the same kernel once found it full and passed
    Mistake("ProdOverDim", "exclusive products with a module-level cache of ones",
            "ProdOverDim kept state outside ctx: _ONES in a module global",
            '''_ONES = {}


def excl(t, dim):
    shape = list(t.shape)
    shape[dim] = 1
    key = (tuple(shape), t.dtype, t.device)
    if key not in _ONES:
        _ONES[key] = t.new_ones(shape)
    return torch.cat([_ONES[key], t], dim).cumprod(dim).narrow(dim, 0, t.shape[dim])


''' + _prod('''
        if x.dim() == 0:
            return grad_output.clone(), None
        return (grad_output.unsqueeze(dim) * excl(x, dim)
                * excl(x.flip(dim), dim).flip(dim)), None
''')),
    # review 73 (C6): reversed positions cached per length in a mutable default argument of
    # backward; graded after a self-check in the same process it once found the cache full
    Mistake("Cumsum", "reversed positions cached in a mutable default argument",
            "mutable default argument",
            _function("Cumsum", '''
    def forward(ctx, x, dim):
        ctx.dim = dim
        return torch.cumsum(x, dim)
''', '''
    def backward(ctx, grad_output, _cache={}):
        dim = ctx.dim
        if grad_output.dim() == 0:
            return grad_output.clone(), None
        n = grad_output.shape[dim]
        rev = _cache.setdefault(n, torch.arange(n - 1, -1, -1, device=grad_output.device))
        return grad_output.index_select(dim, rev).cumsum(dim).index_select(dim, rev), None
''')),
]

UNUSUAL = []

# review 77 (batch4/batch5): state kept in a HELPER that forward or backward calls, out of the
# sight of a watch on the class, the module globals and the methods' own defaults; the state
# watch follows the helpers the methods name (autograder.helper_state) and names the helper
_PROD_BY_HELPER = '''
        if x.dim() == 0:
            return grad_output.clone(), None
        n = x.shape[dim]
        shape = list(x.shape)
        shape[dim] = 1
        ones = {ones}
        before = torch.cat([ones, x], dim).cumprod(dim).narrow(dim, 0, n)
        after = torch.cat([ones, x.flip(dim)], dim).cumprod(dim).narrow(dim, 0, n).flip(dim)
        return grad_output.unsqueeze(dim) * before * after, None
'''

MISTAKES += [
    Mistake("ProdOverDim", "the padding ones cached in a helper's mutable default argument",
            "prod_ones (called by ProdOverDim.backward) keeps state in its default argument "
            "_cache", '''def prod_ones(shape, dtype, device, _cache={}):
    key = (tuple(shape), dtype, device)
    if key not in _cache:
        _cache[key] = torch.ones(shape, dtype=dtype, device=device)
    return _cache[key]


''' + _prod(_PROD_BY_HELPER.format(ones="prod_ones(shape, x.dtype, x.device)"))),
    Mistake("ProdOverDim", "the padding ones from a functools.lru_cache helper",
            "cached_ones (called by ProdOverDim.backward) keeps a cache outside ctx",
            '''import functools


@functools.lru_cache(maxsize=None)
def cached_ones(shape, dtype, device):
    return torch.ones(shape, dtype=dtype, device=device)


''' + _prod(_PROD_BY_HELPER.format(ones="cached_ones(tuple(shape), x.dtype, x.device)"))),
    Mistake("IndexSelect", "a zeros template from a functools.cache helper, cloned per call",
            "zeros_template (called by IndexSelect.backward) keeps a cache outside ctx",
            '''import functools


@functools.cache
def zeros_template(shape, dtype, device):
    return torch.zeros(shape, dtype=dtype, device=device)


''' + _select('''
        grad_x = zeros_template(tuple(ctx.shape), grad_output.dtype, grad_output.device).clone()
        return grad_x.index_add_(0, index, grad_output), None
''')),
    Mistake("Cumsum", "calls counted in a helper's mutable default argument",
            "count_call (called by Cumsum.forward) keeps state in its default argument counter",
            '''def count_call(counter={"n": 0}):
    counter["n"] += 1
    return counter["n"]


''' + _cumsum(_REVERSED, forward='''    def forward(ctx, x, dim):
        ctx.call = count_call()
        ctx.dim = dim
        return torch.cumsum(x, dim)
''')),
]

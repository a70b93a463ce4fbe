"""Lesson 09 answers that only the generated domain checks separate (issue 37): a constant or a
shape kept on the class or in a module global, a flattening view a transposed x refuses, and a
CumMax whose running maximum is found on a float32 copy."""

from .. import Mistake, edit
from .answers import (_INDEX_ADD, _PROD_EXACT, _PROJECTION, _REVERSED, _SCATTER_ADD, _cummax,
                      _cumsum, _normalize, _prod, _select)

CUMMAX_IN_FLOAT32 = """
class CumMax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, dim):
        _, indices = torch.cummax(x.float(), dim)
        ctx.save_for_backward(indices)
        ctx.dim, ctx.shape = dim, x.shape
        return x.gather(dim, indices)

    @staticmethod
    def backward(ctx, grad_output):
        indices, = ctx.saved_tensors
        grad = grad_output.new_zeros(ctx.shape)
        return grad.scatter_add(ctx.dim, indices, grad_output), None
"""

PROD_DIM_ON_CLASS = edit(_prod(_PROD_EXACT), ("        ctx.dim = dim\n",
                                               "        ProdOverDim.dim = dim\n"),
                         ("        dim = ctx.dim\n", "        dim = ProdOverDim.dim\n"))

# dim in a module global: each call alone is right; with two calls in one graph, the first
# call's backward reads the second call's dim
DIM = "DIM = [0]\n"
PROD_DIM_GLOBAL = DIM + edit(_prod(_PROD_EXACT), ("        ctx.dim = dim\n",
                                                  "        DIM[0] = dim\n"),
                             ("        dim = ctx.dim\n", "        dim = DIM[0]\n"))
CUMSUM_DIM_GLOBAL = DIM + edit(_cumsum(_REVERSED), ("        ctx.dim = dim\n",
                                                     "        DIM[0] = dim\n"),
                               ("        dim = ctx.dim\n", "        dim = DIM[0]\n"))
CUMMAX_DIM_GLOBAL = DIM + edit(_cummax(_SCATTER_ADD), ("        ctx.dim = dim\n",
                                                       "        DIM[0] = dim\n"),
                               ("ctx.dim", "DIM[0]"))

# x's shape in a module global: the domain's two calls give x 4 rows and 6
SELECT_SHAPE_GLOBAL = "SHAPE = [None]\n" + edit(
    _select(_INDEX_ADD), ("        ctx.shape = x.shape\n", "        SHAPE[0] = x.shape\n"),
    ("ctx.shape", "SHAPE[0]"))

NORMALIZE_EPS_GLOBAL = "EPS = [1e-12]\n" + edit(
    _normalize(_PROJECTION), ("        ctx.eps = eps\n", "        EPS[0] = eps\n"),
    ("ctx.eps", "EPS[0]"))

# flattens x through view: right for every contiguous x, refused for a transposed one
SELECT_THROUGH_VIEW = _select(_INDEX_ADD, """    def forward(ctx, x, index):
        ctx.save_for_backward(index)
        ctx.shape = x.shape
        rows = x.view(-1).view(len(x), -1)
        return rows[index].view(len(index), *x.shape[1:])
""")

# rows flattened through view: right for every 2-D x, refused for a 3-D x whose leading dims
# are transposed
NORMALIZE_THROUGH_VIEW = edit(_normalize(_PROJECTION), (
    "        norm = x.norm(dim=-1, keepdim=True)\n",
    "        rows = x.view(-1, x.shape[-1])\n"
    "        norm = rows.norm(dim=-1, keepdim=True).view(*x.shape[:-1], 1)\n"))

MISTAKES = [
    Mistake("CumMax", "running maximum found on a float32 copy",
            "CumMax's gradient goes where the running maxima of a rounded copy of x lie",
            CUMMAX_IN_FLOAT32),
    Mistake("ProdOverDim", "dim kept on the class (ProdOverDim.dim = dim)",
            "ProdOverDim.forward sets ProdOverDim.dim: a class attribute is shared by every call",
            PROD_DIM_ON_CLASS),
    Mistake("IndexSelect", "x's shape kept in a module global",
            "IndexSelect.forward kept state outside ctx: SHAPE in a module global",
            SELECT_SHAPE_GLOBAL),
    Mistake("ProdOverDim", "dim kept in a module global",
            "ProdOverDim is right for each call alone", PROD_DIM_GLOBAL),
    Mistake("Cumsum", "dim kept in a module global", "Cumsum's backward used another call's dim",
            CUMSUM_DIM_GLOBAL),
    Mistake("CumMax", "dim kept in a module global",
            "CumMax.forward kept state outside ctx: DIM in a module global", CUMMAX_DIM_GLOBAL),
    Mistake("Normalize", "eps kept in a module global",
            "Normalize's backward used another call's eps", NORMALIZE_EPS_GLOBAL),
    Mistake("IndexSelect", "x flattened with view, which a transposed x refuses",
            "view size is not compatible with input tensor's size and stride", SELECT_THROUGH_VIEW),
    Mistake("Normalize", "rows flattened with x.view(-1, x.shape[-1])",
            "x a (3, 2, 4) tensor transposed in dims 0 and 1", NORMALIZE_THROUGH_VIEW),
]

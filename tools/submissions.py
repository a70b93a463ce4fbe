"""Make learner submissions from released notebooks: solved, untouched, or with a mistake."""

import copy

import nbformat

from grader.notebook_format import without_solution_markers


def _cell(notebook, grade_id: str):
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id:
            return cell
    raise KeyError(f"no cell with grade_id {grade_id!r}")


def solved(released: nbformat.NotebookNode, source: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The released notebook with every answer cell filled in from the source's solution."""
    notebook = copy.deepcopy(released)
    for cell in notebook.cells:
        metadata = cell.metadata.get("nbgrader", {})
        if metadata.get("solution"):
            answer = _cell(source, metadata["grade_id"]).source
            cell.source = without_solution_markers(answer)
    return notebook


def with_answer(notebook: nbformat.NotebookNode, grade_id: str, code: str) -> nbformat.NotebookNode:
    """A copy whose answer cell ``grade_id`` holds ``code``."""
    changed = copy.deepcopy(notebook)
    _cell(changed, grade_id).source = code
    return changed


def with_cell_before(notebook: nbformat.NotebookNode, grade_id: str,
                     code: str) -> nbformat.NotebookNode:
    """A copy with a new learner code cell placed just before cell ``grade_id``."""
    changed = copy.deepcopy(notebook)
    index = changed.cells.index(_cell(changed, grade_id))
    cell = nbformat.v4.new_code_cell(code)
    cell.id = f"learner-{index}"
    changed.cells.insert(index, cell)
    return changed


# Wrong answers the course names, as a learner would type them into an answer cell (shared by
# the grading tests and the class benchmark).
WEIGHTED_SUM_TWO_GRADIENTS = """
class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        ctx.w1, ctx.w2 = w1, w2
        return w1 * x1 + w2 * x2

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.w1, grad_output * ctx.w2
"""

SIGMOID_SAVES_INPUT = """
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        y = torch.sigmoid(x)
        return grad_output * y * (1 - y)
"""

RELU_MASKS_GRAD_OUTPUT_IN_PLACE = """
class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        grad_output[x < 0] = 0
        return grad_output
"""

_LINEAR = """
class MyLinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        output = x @ weight.T
        return output + bias if bias is not None else output

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        flat_grad = grad_output.reshape(-1, grad_output.shape[-1])
        flat_x = x.reshape(-1, x.shape[-1])
        {grad_x}
        grad_weight = flat_grad.T @ flat_x
        grad_bias = flat_grad.sum(0) if ctx.has_bias else None
        return grad_x, grad_weight, grad_bias
"""
LINEAR_IGNORES_NEEDS_INPUT_GRAD = _LINEAR.format(grad_x="grad_x = grad_output @ weight")
LINEAR_TRANSPOSED_GRAD_X = _LINEAR.format(grad_x="grad_x = (grad_output @ weight).mT")

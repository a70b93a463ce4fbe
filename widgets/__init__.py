"""Interactive views of the learner's own Functions: what forward saved, how gradients flow
back, where a backward disagrees with central differences, and one view per lesson topic.

Each view is a plain-function core (tested without a display) under a thin ipywidgets layer.
"""

from autograder.nesting import install as _install_nesting_guard

from .attention import attention_explorer
from .checkpointing import checkpointing_explorer
from .compile_graph import compile_explorer
from .flow import backward_flow
from .fused_loss import fused_loss_explorer
from .grad_outputs import outputs_explorer
from .gradcheck_explorer import explore_gradients
from .ids import deterministic_ids, seed_from_environment
from .insight import insight_view
from .jacobian import jacobian_view
from .kernel_grid import kernel_grid_view
from .inspector import inspect_saved
from .norm_terms import norm_terms_explorer
from .progress import progress_view
from .self_check import install as _install_self_check_hook
from .ste import ste_explorer
from .surgery import surgery_explorer

__all__ = [
    "attention_explorer",
    "backward_flow",
    "checkpointing_explorer",
    "compile_explorer",
    "deterministic_ids",
    "explore_gradients",
    "fused_loss_explorer",
    "insight_view",
    "inspect_saved",
    "jacobian_view",
    "kernel_grid_view",
    "norm_terms_explorer",
    "outputs_explorer",
    "progress_view",
    "ste_explorer",
    "surgery_explorer",
]

seed_from_environment()
_install_self_check_hook()  # a failing self_check offers the gradient-check explorer
_install_nesting_guard()  # a backward that starts itself without end raises, in views and cells

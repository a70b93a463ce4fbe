"""Matplotlib figures drawn off-screen (no pyplot, no backend) and turned into PNG bytes."""

import io

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

DPI = 100  # one figure inch is 100 CSS pixels in the notebook

# Colours, chosen to stay apart for colour-blind readers (Okabe-Ito).
CUSTOM = "#E69F00"    # the learner's Function
BUILTIN = "#56B4E9"   # PyTorch's own backward nodes
LEAF = "#009E73"      # AccumulateGrad, a leaf tensor's .grad
CURRENT = "#D55E00"   # what the view points at now
DONE = "#999999"      # already visited
ANALYTIC = "#0072B2"
NUMERICAL = "#E69F00"
INK = "#222222"


def new_figure(width: float, height: float) -> Figure:
    """A figure of ``width`` x ``height`` inches with its own Agg canvas."""
    figure = Figure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(figure)
    return figure


def figure_png(figure: Figure, scale: float = 1.5) -> bytes:
    """The figure as PNG bytes, rendered at ``scale`` x DPI so it stays sharp on HiDPI screens;
    no timestamp or software tag, so the same figure gives the same bytes."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI * scale, metadata={"Software": None})
    return buffer.getvalue()


def css_width(figure: Figure) -> str:
    """The figure's width in CSS pixels, for the Image widget that shows it."""
    return f"{int(figure.get_figwidth() * DPI)}px"

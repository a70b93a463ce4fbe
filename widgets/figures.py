"""Matplotlib figures drawn off-screen (no pyplot, no backend) and turned into PNG bytes,
redrawing only the artists that move between updates."""

import io

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image

DPI = 100    # one figure inch is 100 CSS pixels in the notebook
SCALE = 1.5  # pixels rendered per CSS pixel, so figures stay sharp on HiDPI screens

# Colours, chosen to stay apart for colour-blind readers (Okabe-Ito).
CUSTOM = "#E69F00"    # the learner's Function
BUILTIN = "#56B4E9"   # PyTorch's own backward nodes
LEAF = "#009E73"      # AccumulateGrad, a leaf tensor's .grad
CURRENT = "#D55E00"   # what the view points at now
DONE = "#999999"      # already visited
INK = "#222222"


def new_figure(width: float, height: float) -> Figure:
    """A figure of ``width`` x ``height`` inches with its own Agg canvas."""
    figure = Figure(figsize=(width, height), dpi=DPI * SCALE, facecolor="white")
    FigureCanvasAgg(figure)
    return figure


def encode_png(figure: Figure) -> bytes:
    """What the canvas holds now, as PNG bytes: fast zlib level, no metadata, so the same
    drawing always gives the same bytes."""
    rgba = Image.frombuffer("RGBA", figure.canvas.get_width_height(),
                            figure.canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    buffer = io.BytesIO()
    rgba.convert("RGB").save(buffer, format="png", compress_level=1)
    return buffer.getvalue()


class Frames:
    """Renders a figure's still artists once and, per frame, only the ``moving`` ones.

    Call ``restage()`` after changing a still artist (limits, colour scales, labels).
    """

    def __init__(self, figure: Figure, moving=()):
        self.figure = figure
        self.moving = list(moving)
        for artist in self.moving:
            artist.set_animated(True)
        self.background = None

    def restage(self) -> None:
        self.background = None

    def png(self) -> bytes:
        canvas = self.figure.canvas
        if self.background is None:
            canvas.draw()  # animated artists are left out of this
            self.background = canvas.copy_from_bbox(self.figure.bbox)
        else:
            canvas.restore_region(self.background)
        for artist in self.moving:
            if artist.get_visible():
                self.figure.draw_artist(artist)
        return encode_png(self.figure)


def css_width(figure: Figure) -> str:
    """The figure's width in CSS pixels, for the Image widget that shows it."""
    return f"{round(figure.get_figwidth() * DPI)}px"

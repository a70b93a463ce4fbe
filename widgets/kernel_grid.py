"""Programs and blocks over a tensor: which elements each Triton program loads, and which of
its lanes the mask switches off (the tail of a flat tensor, or the columns past a row's end)."""

from dataclasses import dataclass

import ipywidgets
import matplotlib.pyplot as plt
import numpy as np

from .figures import encode_png
from .view import View


@dataclass(frozen=True)
class Launch:
    """One launch: ``lanes[p, j]`` is the flat index program ``p``'s lane ``j`` reads, or -1
    where the mask is off."""

    lanes: np.ndarray  # (programs, block) of int
    numel: int

    @property
    def programs(self) -> int:
        return self.lanes.shape[0]

    @property
    def masked(self) -> int:
        return int((self.lanes < 0).sum())


def flat_launch(n: int, block: int) -> Launch:
    """``cdiv(n, block)`` programs, program ``p`` on offsets ``p * block + arange(block)``,
    masked where the offset reaches ``n``."""
    programs = -(-n // block)
    offsets = np.arange(programs)[:, None] * block + np.arange(block)[None, :]
    return Launch(np.where(offsets < n, offsets, -1), n)


def row_launch(rows: int, columns: int, block: int) -> Launch:
    """One program per row, lanes ``arange(block)`` over its columns, masked past the row's
    end; a block narrower than the row leaves columns no lane reads."""
    lanes = np.arange(block)[None, :]
    offsets = np.arange(rows)[:, None] * columns + lanes
    return Launch(np.where(lanes < columns, offsets, -1), rows * columns)


def unread(launch: Launch) -> list[int]:
    """The elements no program reads (a block narrower than a row leaves some)."""
    return sorted(set(range(launch.numel)) - set(launch.lanes[launch.lanes >= 0].tolist()))


def draw(launch: Launch, ax=None, title: str = ""):
    """A grid: one row per program, one cell per lane, coloured by program; masked lanes grey
    and crossed; each cell labelled with the element it reads."""
    programs, block = launch.lanes.shape
    # constrained: room for the "program p" labels; at least as wide as the title's line
    ax = ax or plt.subplots(figsize=(min(12, max(6, 0.5 * block + 2)), 0.5 * programs + 1.2),
                            layout="constrained")[1]
    colours = plt.get_cmap("tab10")
    for p in range(programs):
        for j in range(block):
            index = launch.lanes[p, j]
            face = "#dddddd" if index < 0 else colours(p % 10)
            ax.add_patch(plt.Rectangle((j, programs - 1 - p), 1, 1, facecolor=face,
                                       edgecolor="white"))
            ax.text(j + 0.5, programs - 0.5 - p, "×" if index < 0 else str(index),
                    ha="center", va="center", fontsize=7)
    ax.set_xlim(0, block)
    ax.set_ylim(0, programs)
    ax.set_yticks([programs - 0.5 - p for p in range(programs)],
                  [f"program {p}" for p in range(programs)])
    ax.set_xticks([])
    ax.set_xlabel("lanes of the block (grey ×: mask off)")
    missed = unread(launch)
    ax.set_title(title or f"{launch.numel} elements, {programs} programs, "
                 f"{launch.masked} masked lanes" + (f"\n{len(missed)} elements never read"
                                                    if missed else ""))
    return ax


def kernel_grid_view(n: int = 10, block: int = 4, columns: int = 0) -> View:
    """Sliders for the size, the block and (for one program per row) the row length."""
    picture = ipywidgets.Image(format="png")
    size = ipywidgets.IntSlider(value=n, min=1, max=40, description="elements")
    width = ipywidgets.Dropdown(options=[2, 4, 8, 16], value=block, description="BLOCK")
    row = ipywidgets.IntSlider(value=columns, min=0, max=12,
                               description="row length (0: flat)",
                               style={"description_width": "initial"})

    def show(_=None):
        if row.value:
            launch = row_launch(max(1, size.value // row.value), row.value, width.value)
        else:
            launch = flat_launch(size.value, width.value)
        figure = draw(launch).figure
        figure.canvas.draw()
        picture.value = encode_png(figure)
        plt.close(figure)

    for control in (size, width, row):
        control.observe(show, names="value")
    show()
    return View([ipywidgets.HBox([size, width, row]), picture],
                controls={"elements": size, "block": width, "row_length": row},
                panes={"picture": picture})

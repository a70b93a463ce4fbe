"""Attention view: per head and query, the attention weights P your Function computes and the
gradient dS it sends to the scores, with causal and padding masks toggled on and off."""

from dataclasses import dataclass

import ipywidgets
import numpy as np
import torch
from matplotlib.gridspec import GridSpec
from matplotlib.patches import Rectangle

from . import markup
from .figures import CURRENT, CUSTOM, INK, Frames, new_figure
from .functions import apply, display_name, error_summary
from .markup import code, format_number
from .view import View, html_pane, image_pane, on_change, show_figure

TOLERANCE = 1e-6  # float64 agreement with the reference


@dataclass
class AttentionMaps:
    """Everything the view shows, for inputs flattened to (heads, L, d)."""

    weights: torch.Tensor          # P from your Function, (heads, Lq, Lk)
    score_grads: torch.Tensor      # dS = dLoss/dScores from your backward
    reference_weights: torch.Tensor
    reference_score_grads: torch.Tensor
    keep: torch.Tensor             # bool (Lq, Lk), False = masked out
    errors: dict                   # "output", "grad_Q", ... -> max |yours - reference|


def build_mask(queries: int, keys: int, *, causal: bool, padding: int) -> torch.Tensor | None:
    """Boolean mask (True = keep): causal hides later keys, padding hides the last keys."""
    keep = torch.ones(queries, keys, dtype=torch.bool)
    if causal:
        keep &= torch.ones(queries, keys, dtype=torch.bool).tril(diagonal=keys - queries)
    if padding:
        keep[:, keys - padding:] = False
    return None if keep.all() else keep


def _reference(Q, K, V, scale, keep):
    scores = Q @ K.transpose(-2, -1) * scale
    if keep is not None:
        scores = scores.masked_fill(~keep, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ V, weights


def _max_error(yours, reference) -> float:
    if yours is None:
        return float("inf")
    if yours.shape != reference.shape:
        return float("inf")
    return (yours.detach() - reference.detach()).abs().max().item()


def attention_maps(attention, Q, K, V, scale: float, keep: torch.Tensor | None,
                   grad_output: torch.Tensor) -> AttentionMaps:
    """Run your Function twice: on the real inputs (checking output and gradients against
    autograd through softmax), and on the scores S with identity K and V, where its output
    is P and its grad_Q is dS (since S @ I = S and P @ I = P)."""
    leaves = [t.detach().clone().requires_grad_(True) for t in (Q, K, V)]
    output = apply(attention, *leaves, scale, keep)
    grads = torch.autograd.grad(output, leaves, grad_output, allow_unused=True)
    reference = [t.detach().clone().requires_grad_(True) for t in (Q, K, V)]
    reference_output, reference_weights = _reference(*reference, scale, keep)
    reference_grads = torch.autograd.grad(reference_output, reference, grad_output)
    errors = {"output": _max_error(output, reference_output)}
    errors.update({f"grad_{n}": _max_error(g, r)
                   for n, g, r in zip("QKV", grads, reference_grads)})

    heads, _, keys = Q.shape[0], Q.shape[-2], K.shape[-2]
    scores = (Q @ K.transpose(-2, -1) * scale).detach().requires_grad_(True)
    identity = torch.eye(keys, dtype=Q.dtype).repeat(heads, 1, 1)
    weights = apply(attention, scores, identity, identity.clone(), 1.0, keep)
    grad_weights = grad_output @ V.transpose(-2, -1)  # dP = dO @ V^T
    score_grads, = torch.autograd.grad(weights, scores, grad_weights)
    reference_scores = scores.detach().clone().requires_grad_(True)
    masked = (reference_scores if keep is None
              else reference_scores.masked_fill(~keep, float("-inf")))
    reference_p = torch.softmax(masked, dim=-1)
    reference_ds, = torch.autograd.grad(reference_p, reference_scores, grad_weights)
    full_keep = torch.ones(Q.shape[-2], keys, dtype=torch.bool) if keep is None else keep
    return AttentionMaps(weights.detach(), score_grads.detach(), reference_weights.detach(),
                         reference_ds, full_keep, errors)


def readout_html(function, maps: AttentionMaps, head: int, query: int) -> str:
    """Agreement with the reference and what the selected query attends to."""
    rows = [[code(name), format_number(error), "✓" if error <= TOLERANCE else "✗ differs"]
            for name, error in maps.errors.items()]
    table = markup.table(["yours vs reference", "max |difference|", ""], rows, numeric={1})
    row = maps.weights[head, query]
    leak = row[~maps.keep[query]].abs().sum().item()
    best = int(torch.argmax(row))
    parts = [markup.paragraph(
        f"Head {head}, query {query} attends most to key {best} "
        f"(weight {format_number(row[best].item())}); its weights sum to "
        f"{format_number(row.sum().item())}.")]
    if leak > TOLERANCE:
        parts.append(markup.box("warning", f"{format_number(leak)} of this query's weight sits "
                                           "on masked keys (×): mask the scores with -inf "
                                           "before the softmax."))
    bad = [name for name, error in maps.errors.items() if error > TOLERANCE]
    if bad:
        parts.append(markup.box("warning", f"{markup.escape(display_name(function))} differs "
                                           f"from the reference in {', '.join(bad)}."))
    return table + "".join(parts)


class AttentionFigure:
    """P and dS heatmaps for one head, the selected query's row as bars beside them."""

    def __init__(self, queries: int, keys: int):
        self.figure = new_figure(9.0, 3.3)
        grid = GridSpec(2, 3, figure=self.figure, width_ratios=(1, 1, 1.1), hspace=0.6,
                        wspace=0.35, left=0.06, right=0.98, bottom=0.14, top=0.9)
        self.p_axes = self.figure.add_subplot(grid[:, 0])
        self.ds_axes = self.figure.add_subplot(grid[:, 1])
        self.p_row = self.figure.add_subplot(grid[0, 2])
        self.ds_row = self.figure.add_subplot(grid[1, 2])
        self.p_image = self.p_axes.imshow(np.zeros((queries, keys)), cmap="Blues", vmin=0,
                                          vmax=1, interpolation="nearest")
        self.ds_image = self.ds_axes.imshow(np.zeros((queries, keys)), cmap="RdBu_r",
                                            interpolation="nearest")
        for image, ax in ((self.p_image, self.p_axes), (self.ds_image, self.ds_axes)):
            self.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.03).ax.tick_params(
                labelsize=7)
            ax.set_xlabel("key", fontsize=8)
            ax.set_ylabel("query", fontsize=8)
            ax.tick_params(labelsize=7)
        self.p_axes.set_title("weights P = softmax(S)", fontsize=9)
        self.ds_axes.set_title("dS: your gradient at the scores", fontsize=9)
        self.marks = [ax.add_patch(Rectangle((-0.5, -0.5), keys, 1, fill=False,
                                             edgecolor=CURRENT, linewidth=2))
                      for ax in (self.p_axes, self.ds_axes)]
        self.crosses = [ax.scatter([], [], marker="x", color="#777777", s=18, linewidths=1)
                        for ax in (self.p_axes, self.ds_axes)]
        positions = np.arange(keys)
        self.p_bars = list(self.p_row.bar(positions, np.zeros(keys), color="#4a90c2"))
        self.ds_bars = list(self.ds_row.bar(positions, np.zeros(keys), color=CUSTOM))
        self.p_dots, = self.p_row.plot([], [], "_", color=INK, markersize=10,
                                       label="reference")
        self.ds_dots, = self.ds_row.plot([], [], "_", color=INK, markersize=10)
        self.p_row.legend(fontsize=7, frameon=False, loc="upper right")
        self.p_row.set_ylim(0, 1.05)
        self.row_title = self.p_row.text(0.5, 1.08, "", transform=self.p_row.transAxes,
                                         ha="center", fontsize=9)
        self.ds_row.set_title("dS row", fontsize=9)
        for ax in (self.p_row, self.ds_row):
            ax.set_xticks(positions[:: max(1, keys // 8)])
            ax.tick_params(labelsize=7)
            ax.axhline(0, color="#bbbbbb", linewidth=0.8)
        self.ds_row.set_xlabel("key", fontsize=8)
        self.frames = Frames(self.figure, [self.p_image, self.ds_image, *self.marks,
                                           *self.p_bars, *self.ds_bars, self.p_dots,
                                           self.ds_dots, self.row_title, *self.crosses])

    def set_scales(self, all_maps: list[AttentionMaps]) -> None:
        """One colour scale and one bar range for every head, query and mask."""
        grads = torch.cat([t.flatten() for maps in all_maps
                           for t in (maps.score_grads, maps.reference_score_grads)])
        grads = grads[grads.isfinite()]  # a fully masked row gives nan: leave it out
        if grads.numel() == 0:
            grads = torch.zeros(1, dtype=torch.float64)
        spread = max(grads.abs().max().item(), 1e-12)
        self.ds_image.set_clim(-spread, spread)
        low, high = min(grads.min().item(), 0.0), max(grads.max().item(), 0.0)
        pad = 0.1 * max(high - low, 1e-12)
        self.ds_row.set_ylim(low - pad, high + pad)
        self.frames.restage()

    def show(self, maps: AttentionMaps, head: int, query: int) -> None:
        """Draw head ``head`` with row ``query`` outlined and masked cells crossed out."""
        masked = np.argwhere(~maps.keep.numpy())[:, ::-1]
        for cross in self.crosses:
            cross.set_offsets(masked if len(masked) else np.empty((0, 2)))
        weights, grads = maps.weights[head].numpy(), maps.score_grads[head].numpy()
        self.p_image.set_data(weights)
        self.ds_image.set_data(grads)
        for mark in self.marks:
            mark.set_y(query - 0.5)
        for bar, value in zip(self.p_bars, weights[query]):
            bar.set_height(value)
        for bar, value in zip(self.ds_bars, grads[query]):
            bar.set_height(value)
        keys = np.arange(weights.shape[1])
        self.p_dots.set_data(keys, maps.reference_weights[head, query].numpy())
        self.ds_dots.set_data(keys, maps.reference_score_grads[head, query].numpy())
        self.row_title.set_text(f"head {head}, query {query}: P row")


def _heads(t: torch.Tensor) -> torch.Tensor:
    return t.detach().to(torch.float64).reshape(-1, *t.shape[-2:])


def attention_explorer(attention, Q=None, K=None, V=None, *, scale: float | None = None,
                       heads: int = 4, length: int = 8, dim: int = 16, seed: int = 0) -> View:
    """Head and query selectors over ``attention.apply(Q, K, V, scale, mask)``'s weights and
    score gradients, with causal and padding mask toggles. Inputs default to seeded random
    (heads, length, dim) tensors; leading dimensions are flattened into heads."""
    generator = torch.Generator().manual_seed(seed)
    Q, K, V = (_heads(t) if t is not None else
               torch.randn(heads, length, dim, generator=generator, dtype=torch.float64)
               for t in (Q, K, V))
    scale = Q.shape[-1] ** -0.5 if scale is None else scale
    grad_output = torch.randn(V.shape[0], Q.shape[-2], V.shape[-1], generator=generator,
                              dtype=torch.float64)
    queries, keys = Q.shape[-2], K.shape[-2]
    head = ipywidgets.IntSlider(value=0, min=0, max=Q.shape[0] - 1, description="head",
                                layout=ipywidgets.Layout(width="260px"))
    query = ipywidgets.IntSlider(value=queries - 1, min=0, max=queries - 1,
                                 description="query", layout=ipywidgets.Layout(width="260px"))
    padding = max(1, keys // 4)
    spaced = dict(width="auto", margin="0 0 0 24px")  # a label must not touch the next box
    causal = ipywidgets.Checkbox(value=False, description="causal mask", indent=False,
                                 layout=ipywidgets.Layout(**spaced))
    padded = ipywidgets.Checkbox(value=False, description=f"padding mask (last {padding} keys)",
                                 indent=False, layout=ipywidgets.Layout(**spaced))
    readout = html_pane()
    heading = html_pane(markup.heading(
        f"{code(display_name(attention) + '.apply(Q, K, V, scale, mask)')}: Q {tuple(Q.shape)}, "
        f"K {tuple(K.shape)}, V {tuple(V.shape)}, scale {format_number(scale)}"))
    controls = {"head": head, "query": query, "causal": causal, "padding": padded}
    bar = ipywidgets.HBox([head, query, causal, padded],
                          layout=ipywidgets.Layout(flex_flow="row wrap", align_items="center"))
    computed = {}  # (causal, padded) -> AttentionMaps, or the error your Function raised
    for flags in [(False, False), (True, False), (False, True), (True, True)]:
        keep = build_mask(queries, keys, causal=flags[0], padding=padding if flags[1] else 0)
        try:
            computed[flags] = attention_maps(attention, Q, K, V, scale, keep, grad_output)
        except Exception as error:  # the learner's Function may raise anything
            computed[flags] = markup.box("error", markup.escape(error_summary(attention, error)))
    good = [maps for maps in computed.values() if isinstance(maps, AttentionMaps)]
    if not good:
        readout.value = computed[(False, False)]
        return View([heading, bar, readout], controls=controls, panes={"readout": readout})
    drawing = AttentionFigure(queries, keys)
    drawing.set_scales(good)
    drawing.show(good[0], 0, 0)
    picture = image_pane(drawing.frames)

    def update():
        maps = computed[(causal.value, padded.value)]
        if not isinstance(maps, AttentionMaps):
            readout.value = maps
            picture.layout.display = "none"
            return
        picture.layout.display = None
        drawing.show(maps, head.value, query.value)
        show_figure(picture, drawing.frames)
        readout.value = readout_html(attention, maps, head.value, query.value)

    on_change(controls.values(), update)
    update()
    return View([heading, bar, picture, readout], controls=controls,
                panes={"plot": picture, "readout": readout})

"""Do widgets get the same model ids on every run once ids are seeded?"""

import nbformat
import pytest
from ipywidgets import Widget

from tests.kernels import (WIDGETS_DEMO as DEMO, bounded_environment, executed_widgets_demo,
                           run_notebook)
from widgets.ids import deterministic_ids, random_ids



def _ids(count: int) -> list[str]:
    made = [Widget() for _ in range(count)]  # the bare model: no layout or style to track
    ids = [w.model_id for w in made]
    for w in made:
        w.close()
    return ids


@pytest.fixture
def restore_callback():
    previous = Widget._widget_construction_callback
    yield
    Widget.on_widget_constructed(previous)


def test_does_the_same_seed_give_the_same_ids(restore_callback):
    deterministic_ids(3)
    first = _ids(4)
    deterministic_ids(3)
    assert _ids(4) == first
    assert len(set(first)) == 4 and all(len(i) == 32 for i in first)
    deterministic_ids(4)
    assert _ids(4) != first


def test_does_random_ids_undo_it(restore_callback):
    deterministic_ids(0)
    seeded = _ids(1)
    random_ids()
    assert _ids(1) != seeded
    assert Widget._widget_construction_callback is None


def test_does_an_earlier_construction_callback_still_run(restore_callback):
    seen = []
    Widget.on_widget_constructed(seen.append)
    deterministic_ids(0)
    deterministic_ids(1)  # re-seeding does not stack callbacks
    Widget().close()
    assert len(seen) == 1


VIEW_MIME = "application/vnd.jupyter.widget-view+json"
MEASURING = "fused_loss_explorer"  # a view that times runs: its numbers differ run to run


def _measured(notebook, state: dict) -> tuple[set[str], set[str]]:
    """The cells (ids) of the measuring views, and every widget model inside them."""
    cells = {cell.id for cell in notebook.cells if MEASURING in cell.get("source", "")}
    models = {output["data"][VIEW_MIME]["model_id"] for cell in notebook.cells
              if cell.id in cells for output in cell.outputs if VIEW_MIME in output.get("data", {})}
    while grown := {child.removeprefix("IPY_MODEL_") for model in models
                    for value in state[model]["state"].values()
                    for child in (value if isinstance(value, list) else [value])
                    if isinstance(child, str) and child.startswith("IPY_MODEL_")} - models:
        models |= grown
    return cells, models


@pytest.mark.slow
def test_is_an_executed_notebook_the_same_twice(tmp_path_factory):
    """Two executions with WIDGETS_SEED set give the same widget ids, state and outputs (the
    first is the one the browser test opens), but for what a measuring view measured."""
    first = nbformat.read(executed_widgets_demo(tmp_path_factory), as_version=4)
    second = run_notebook(nbformat.read(DEMO, as_version=4), DEMO.parent,
                          store_widget_state=True, env=bounded_environment(WIDGETS_SEED="0"))
    states = [nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
              for nb in (first, second)]
    assert sorted(states[0]) == sorted(states[1])  # the first was written to disk: keys sorted
    measuring_cells, measured = _measured(first, states[0])
    assert measuring_cells and len(measured) > 5, "the demo has no measuring view to set aside"
    differ = [states[0][k]["model_name"] for k in states[0]
              if k not in measured and states[0][k] != states[1][k]]
    assert differ == []
    outputs = [[c.outputs for c in nb.cells
                if c.cell_type == "code" and c.id not in measuring_cells] for nb in (first, second)]
    assert outputs[0] == outputs[1]
    views = [[o["data"][VIEW_MIME]["model_id"]
              for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if VIEW_MIME in o.get("data", {})]
             for nb in (first, second)]
    assert views[0] == views[1] and len(views[0]) == 15

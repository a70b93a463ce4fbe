"""Deterministic widget model ids, so an executed notebook's widget state is the same on
every run (ipywidgets otherwise takes each model id from ``uuid.uuid4()``)."""

import os
import random
import uuid

from ipywidgets import Widget

SEED_VARIABLE = "WIDGETS_SEED"


def deterministic_ids(seed: int = 0) -> None:
    """From now on, give every new widget a model id drawn from a generator seeded with
    ``seed``: the n-th widget created in a fresh kernel always gets the same id.

    Uses ipywidgets' ``Widget.on_widget_constructed`` hook, which runs before the widget
    opens its comm; a callback registered there earlier still runs.
    """
    generator = random.Random(seed)
    previous = Widget._widget_construction_callback
    if getattr(previous, "deterministic_ids", False):
        previous = previous.previous

    def assign(widget):
        if widget._model_id is None:
            widget._model_id = uuid.UUID(int=generator.getrandbits(128), version=4).hex
        if previous is not None:
            previous(widget)

    assign.deterministic_ids = True
    assign.previous = previous
    Widget.on_widget_constructed(assign)


def random_ids() -> None:
    """Undo ``deterministic_ids``: back to ipywidgets' uuid4 ids."""
    current = Widget._widget_construction_callback
    if getattr(current, "deterministic_ids", False):
        Widget.on_widget_constructed(current.previous)


def seed_from_environment() -> None:
    """Call ``deterministic_ids`` when ``WIDGETS_SEED`` is set (e.g. by the notebook build)."""
    seed = os.environ.get(SEED_VARIABLE, "").strip()
    if seed:
        deterministic_ids(int(seed))

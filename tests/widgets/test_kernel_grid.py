"""The programs-and-blocks view of lesson 13."""

import matplotlib
import pytest

from widgets.kernel_grid import draw, flat_launch, kernel_grid_view, row_launch, unread
from widgets.view import SNAPSHOT_NOTE, snapshot_html

matplotlib.use("Agg")


def test_flat_launch_masks_only_the_tail():
    """Do 10 elements in blocks of 4 take 3 programs, with the last 2 lanes masked off?"""
    launch = flat_launch(10, 4)
    assert launch.programs == 3 and launch.masked == 2
    assert launch.lanes[2].tolist() == [8, 9, -1, -1]
    assert unread(launch) == []


def test_a_multiple_of_the_block_masks_nothing():
    """Does a size that is a multiple of the block leave every lane on?"""
    assert flat_launch(16, 8).masked == 0


def test_row_launch_masks_past_the_row():
    """Does a block wider than a 3-column row mask the lanes past its end, on every row?"""
    launch = row_launch(2, 3, 4)
    assert launch.lanes.tolist() == [[0, 1, 2, -1], [3, 4, 5, -1]]


def test_a_block_narrower_than_the_row_leaves_elements_unread():
    """Does a block of 2 over rows of 3 leave each row's last column to no program?"""
    assert unread(row_launch(2, 3, 2)) == [2, 5]


def test_the_title_counts_the_masked_lanes():
    """Does the figure say how many lanes the mask switches off?"""
    assert "3 masked lanes" in draw(flat_launch(5, 4)).get_title()


def test_does_every_control_redraw_the_picture():
    """Does each control change the picture, and the snapshot (what an untrusted notebook
    shows) hold it?"""
    view = kernel_grid_view(7, 4, 0)
    for name, value in (("elements", 9), ("block", 8), ("row_length", 3)):
        before = view.panes["picture"].value
        view.controls[name].value = value
        assert view.panes["picture"].value != before, name
    assert SNAPSHOT_NOTE in snapshot_html(view) and "data:image/png" in snapshot_html(view)


@pytest.mark.parametrize("launch", [flat_launch(10, 2), row_launch(12, 3, 2)])
def test_every_label_is_inside_the_figure(launch):
    """Are the programs' names, the title and the axis label drawn whole, even for a narrow
    block (a block of 2 is the narrowest) and the longest title (elements never read)?"""
    ax = draw(launch)
    figure = ax.figure
    figure.canvas.draw()
    width, height = figure.canvas.get_width_height()
    renderer = figure.canvas.get_renderer()
    for text in [*ax.get_yticklabels(), ax.title, ax.xaxis.label]:
        box = text.get_window_extent(renderer)
        assert box.x0 >= 0 and box.x1 <= width and box.y0 >= 0 and box.y1 <= height, (
            f"{text.get_text()!r} is drawn at {box}, outside the {width}x{height} figure")

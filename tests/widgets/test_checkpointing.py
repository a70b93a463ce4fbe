"""Does the checkpointing view measure saved activations and catch parameters left without
a gradient?"""

import torch

from widgets.checkpointing import ActivationBytes, checkpointing_explorer, layers_of, measure_run


def test_does_checkpointing_save_less_than_the_plain_model(ref):
    torch.manual_seed(0)
    layers = layers_of(lambda: ref.small_mlp(16, 4))
    x = torch.randn(8, 16)
    plain = measure_run(ref.checkpoint_sequential, layers, x, None, repeats=1)
    two = measure_run(ref.checkpoint_sequential, layers, x, 2, repeats=1)
    assert two.saved_bytes == 2 * 8 * 16 * 4  # the input of each of two segments
    assert plain.saved_bytes > two.saved_bytes
    assert two.params_without_grad == [] and two.forward_ms > 0


def test_does_the_meter_skip_parameters_and_see_release():
    layer = torch.nn.Linear(4, 4)
    x = torch.randn(2, 4, requires_grad=True)
    with ActivationBytes(layer.parameters()) as meter:
        output = torch.tanh(layer(x))
        assert meter.now == 2 * x.numel() * 4  # x and tanh's output; weight.T is a parameter
        output.sum().backward()
    del output
    assert meter.now == 0 and meter.peak == 64


def test_is_the_peak_above_what_checkpointing_keeps(ref):
    layers = layers_of(lambda: ref.small_mlp(16, 4))
    x = torch.randn(8, 16)
    plain = measure_run(ref.checkpoint_sequential, layers, x, None, repeats=0)
    two = measure_run(ref.checkpoint_sequential, layers, x, 2, repeats=0)
    assert plain.peak_bytes == plain.saved_bytes
    assert two.saved_bytes < two.peak_bytes < plain.peak_bytes + two.saved_bytes


def test_does_it_flag_parameters_without_gradient(ref):
    layers = layers_of(lambda: ref.small_mlp(8, 2))
    run = measure_run(ref.forgetful_checkpoint_sequential, layers, torch.randn(3, 8), 2,
                      repeats=1)
    assert len(run.params_without_grad) == 4


def test_does_the_slider_move_the_highlight(ref):
    view = checkpointing_explorer(ref.checkpoint_sequential, lambda: ref.small_mlp(16, 3),
                                  torch.randn(8, 16))
    assert view.controls["segments"].max == 6
    before = view.panes["plot"].value
    view.controls["segments"].value = 3
    assert "3 segments over 6 layers" in view.panes["readout"].value
    assert view.panes["plot"].value != before


def test_does_the_view_warn_about_a_forgetful_checkpoint(ref):
    view = checkpointing_explorer(ref.forgetful_checkpoint_sequential,
                                  lambda: ref.small_mlp(8, 2), torch.randn(3, 8))
    assert "got no gradient" in view.panes["readout"].value


def test_do_counted_flops_show_the_recompute(ref):
    layers = layers_of(lambda: ref.small_mlp(16, 2))
    x = torch.randn(8, 16)
    plain = measure_run(ref.checkpoint_sequential, layers, x, None, repeats=0)
    checkpointed = measure_run(ref.checkpoint_sequential, layers, x, 2, repeats=0)
    matmul = 2 * 8 * 16 * 16
    assert plain.forward_flops == checkpointed.forward_flops == 2 * matmul
    assert plain.backward_flops == 4 * matmul  # grad of input and weight per layer
    assert checkpointed.backward_flops == plain.backward_flops + 2 * matmul
    assert checkpointed.forward_ms == 0.0


def test_is_the_flops_view_the_same_on_every_run(ref):
    def build():
        view = checkpointing_explorer(ref.checkpoint_sequential, lambda: ref.small_mlp(16, 2),
                                      torch.randn(8, 16), cost="flops")
        return view.panes["plot"].value, view.panes["readout"].value
    assert build() == build()

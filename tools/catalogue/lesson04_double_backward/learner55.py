"""Lesson 04, learner 55: an unmarked CubeOnce whose backward calls x.numpy() on the saved x
(fine in a plain .backward(), refused under create_graph=True), and a backward that returns
the NumPy array itself."""

from .. import Mistake
from .cube_once import CUBE_READ, _cube

MISTAKES = [
    Mistake("CubeOnce", "x.numpy() on the saved x, backward not marked",
            "CubeOnce.backward raised RuntimeError only when run with create_graph=True",
            "import numpy as np\n" + _cube(
                CUBE_READ + "        g = grad_output.detach().numpy() * 3 * x.numpy() ** 2\n"
                "        return torch.as_tensor(g)", decorator="")),
    Mistake("CubeOnce", "backward returns the NumPy array itself",
            "CubeOnce.backward returned a NumPy array where autograd needs a tensor",
            "import numpy as np\n" + _cube(
                CUBE_READ + "        return grad_output.numpy() * 3 * x.numpy() ** 2")),
]
UNUSUAL = []

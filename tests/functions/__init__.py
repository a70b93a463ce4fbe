"""Reference torch.autograd.Function classes the tests grade: correct ones and mistakes."""

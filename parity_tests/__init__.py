"""Parity tests: npformer (hand-written NumPy) against torchformer (PyTorch autograd) and torch.nn.

`parity_tests.harness` is the reusable part (strategies, tolerances, comparison by name, recording of
module outputs, weight copy); the `test_*.py` files are the suite; `parity_tests.oracle` points the same
harness at implementations this project has never seen.
"""

"""A submission folder written as a package whose files import each other relatively, as many
from-scratch projects are (`from .scores import scaled_scores`). Its `__init__` pulls in the whole
project, here a training module that is not installed: the oracle must load one file of the
package without running this."""
from .training_loop import train  # noqa: F401 - there is no training_loop module on purpose

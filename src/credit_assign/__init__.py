"""Credit assignment without backpropagation: models, learning rules, diagnostics.

The package is torch-free at import time so that thread limits can be set
(``credit_assign.infra.hardware.set_threads``) before torch loads its OpenMP runtime.
"""

__version__ = "0.1.0"

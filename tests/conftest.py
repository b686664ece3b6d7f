import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)


@pytest.fixture
def small_model():
    from credit_assign.science.model import ResidualMLP

    torch.manual_seed(0)
    return ResidualMLP(in_features=12, width=8, depth=3, n_classes=4).double()


@pytest.fixture
def batch():
    g = torch.Generator().manual_seed(1)
    return torch.randn(16, 12, generator=g, dtype=torch.float64), torch.randint(0, 4, (16,),
                                                                                 generator=g)

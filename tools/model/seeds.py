"""The determinism settings every model tool applies before torch runs, so that two runs write the
same bytes: fixed seeds, deterministic kernels, one thread."""

from __future__ import annotations

import os
import random

import numpy as np


def deterministic() -> None:
    os.environ.setdefault("PYTHONHASHSEED", "0")
    random.seed(0)
    np.random.seed(0)
    import torch

    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)

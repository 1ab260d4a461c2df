"""torch.utils: only `torch.utils.data` (datasets, DataLoader, random_split)."""
from . import data

__all__ = ["data"]

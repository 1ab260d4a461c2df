"""MKL, the library PyTorch's CPU build computes with, loaded from the `mkl` wheel when it is installed.

PyTorch 2.13 links MKL 2024.2 statically: its elementwise math (engine/vml.py) and its float32 matrix products
(engine/mkl_gemm.py) are MKL's, and MKL picks its code path by the CPU. The same release, called with the arguments
ATen passes, gives PyTorch's digits on any machine; numpy's kernels (OpenBLAS, its own SIMD maths) do not. Loaded
once at import, before a run process sets its address-space limit; MKL runs on the calling thread only.
"""
from __future__ import annotations

import ctypes
import os
import sys

_SEQUENTIAL = 1  # MKL_THREADING_SEQUENTIAL: no thread pool of MKL's own (runs are forked processes, one core each)
# NOTE: MKL ends the process ("oneMKL FATAL ERROR") when a library it loads later is missing: all must be there.
# The interface and threading layer it loads first, then the code path for this CPU (VML's among them)
REQUIRED = ("libmkl_rt.so.2", "libmkl_core.so.2", "libmkl_intel_lp64.so.2", "libmkl_sequential.so.2",
            "libmkl_vml_cmpt.so.2",
            *(f"libmkl_{vml}{cpu}.so.2" for vml in ("", "vml_") for cpu in ("def", "mc3", "avx2", "avx512")))


def _library_dirs() -> list[str]:
    """Where the `mkl` wheel puts its libraries (its data files go to the environment's lib/)."""
    return list(dict.fromkeys([os.path.join(sys.prefix, "lib"), os.path.join(sys.base_prefix, "lib")]))


def _load():
    """The library with its threading layer set, or None. FLOWGRAD_NO_MKL=1 leaves it out (the fallback's tests)."""
    if os.environ.get("FLOWGRAD_NO_MKL") or not sys.platform.startswith("linux"):
        return None
    for folder in _library_dirs():
        if not all(os.path.exists(os.path.join(folder, name)) for name in REQUIRED):
            continue
        try:
            lib = ctypes.CDLL(os.path.join(folder, REQUIRED[0]))
            lib.MKL_Set_Threading_Layer(ctypes.c_int(_SEQUENTIAL))
        except (OSError, AttributeError):
            continue
        return lib
    return None


LIBRARY = _load()
AVAILABLE = LIBRARY is not None

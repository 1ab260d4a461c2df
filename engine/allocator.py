"""glibc malloc tuned for the engine's allocation pattern: every op makes fresh arrays of the same few sizes.

NOTE: glibc's defaults return a training step's freed temporaries (im2col buffers, activations, gradients:
~11 MB a LeNet step) to the kernel at the end of the step (heap trim, or munmap above the mmap threshold),
so the next step page-faults every page in again: ~2,900 faults a step, 60 % of LeNet's time. Serving arrays
up to MMAP_THRESHOLD from the heap and keeping up to TRIM_THRESHOLD of free heap makes them reused memory.
The run's peak address space is unchanged (kept memory is memory the run already held), so RLIMIT_AS
budgets hold; freed memory of a run goes back when its process ends.
"""
from __future__ import annotations

import ctypes
import ctypes.util

MMAP_THRESHOLD = 16 * 1024 * 1024  # bytes: bigger arrays still get their own mapping, returned on free
TRIM_THRESHOLD = 64 * 1024 * 1024  # bytes of free heap top kept before returning it
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameter numbers (malloc.h)


def tune_malloc() -> bool:
    """Apply the thresholds once per process; False where the C library is not glibc (nothing changes)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))

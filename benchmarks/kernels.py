"""The floating-point kernels every replay here runs on, pinned before numpy loads (import this first).

OpenBLAS and numpy pick their kernels by CPU (AVX-512 on one box, AVX2 on another). The curve model's fits then
differ in the last bits, and a model-based scheduler's decisions differ with them: the same code and seed
replayed the default on hartmann6 into 132 trials with OpenBLAS's Haswell kernels and 129 with its Sandybridge
ones. A replay decides alike run to run only on the same kernels, so every x86-64 box takes AVX2's, which all
of them have. A setting already in the environment is kept.
"""

import os
import platform

if platform.machine() in ("x86_64", "AMD64"):
    os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")
    os.environ.setdefault("NPY_DISABLE_CPU_FEATURES", "X86_V4 AVX512_ICL AVX512_SPR")

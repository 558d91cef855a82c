"""The floating-point kernels tuner's replays here run on, pinned before numpy loads (import this first).

OpenBLAS and numpy pick their kernels by CPU (AVX-512 on one box, AVX2 on another). The curve model's fits can
then differ in the last bits, and a model-based scheduler's decisions with them: on one box, the same code and
seed replayed the default on hartmann6 into 132 trials with OpenBLAS's Haswell kernels and 129 with its
Sandybridge ones. So where the CPU has AVX2, these scripts take AVX2's kernels and leave AVX-512's unused, for
this venv's numpy (2.x names). Syne Tune's runs in .venv-peers (numpy 1.26) are not pinned. A setting already
in the environment is kept.
"""

import os
from pathlib import Path


def _has_avx2() -> bool:
    try:
        return " avx2 " in f" {Path('/proc/cpuinfo').read_text()} ".replace("\n", " ")
    except OSError:
        return False


if _has_avx2():
    os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")
    os.environ.setdefault("NPY_DISABLE_CPU_FEATURES", "X86_V4 AVX512_ICL AVX512_SPR")

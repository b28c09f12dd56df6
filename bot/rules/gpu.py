"""Compute capability from an NVIDIA GPU name, as printed by nvidia-smi / collect_env ("NVIDIA H100 80GB HBM3").

The table is ordered: the first pattern that matches wins, so specific names come before families.
"""

from __future__ import annotations

from functools import lru_cache

import re2

_TABLE: tuple[tuple[str, float], ...] = (
    # Blackwell
    (r"\bGB10\b|DGX Spark", 12.1),
    (r"RTX PRO \d+.*Blackwell|RTX PRO 6000|RTX 50\d\d|\bRTX 5\d\d\d\b", 12.0),
    (r"\bB[23]00\b|\bGB[23]00\b", 10.0),
    (r"\bB100\b", 10.0),
    (r"\bJetson Thor\b|\bThor\b", 11.0),
    # Hopper
    (r"\bH100\b|\bH200\b|\bH800\b|\bH20\b|\bGH200\b", 9.0),
    # Ada
    (r"\bL40S?\b|\bL4\b|\bL20\b|\bL2\b|RTX 40\d\d|RTX \d+ Ada|\bRTX [2-6]000 Ada|Ada Generation", 8.9),
    # Ampere
    (r"\bA100\b|\bA800\b|\bA30\b", 8.0),
    (r"Jetson AGX Orin|\bOrin\b", 8.7),
    (r"\bA10G?\b|\bA40\b|\bA16\b|\bA2\b|\bA[4-6]000\b|RTX A\d+|RTX 30\d\d|\bA[24]500\b", 8.6),
    # Turing
    (r"\bT4\b|RTX 20\d\d|GTX 16\d\d|TITAN RTX|Quadro RTX|\bT[46]00\b|\bT1000\b", 7.5),
    # Volta
    (r"\bV100\b|TITAN V\b|Quadro GV100", 7.0),
    (r"Jetson AGX Xavier|\bXavier\b", 7.2),
    # Pascal
    (r"\bP100\b", 6.0),
    (r"\bP40\b|\bP4\b|GTX 10\d\d|TITAN Xp?\b|\bP[56]000\b", 6.1),
    # Maxwell / Kepler
    (r"\bM40\b|\bM60\b|GTX 9\d\d|\bM10\b", 5.2),
    (r"\bK80\b", 3.7),
)


def _compile() -> tuple[tuple[object, float], ...]:
    options = re2.Options()
    options.case_sensitive = False
    return tuple((re2.compile(p, options), cc) for p, cc in _TABLE)


_COMPILED = _compile()


@lru_cache(maxsize=1024)
def compute_capability(gpu_name: str | None) -> float | None:
    """The CUDA compute capability of an NVIDIA GPU name, or None for an unknown or non-NVIDIA device."""
    if not gpu_name:
        return None
    name = gpu_name[:200]
    if "amd" in name.lower() or "radeon" in name.lower() or "instinct" in name.lower():
        return None
    for regexp, cc in _COMPILED:
        if regexp.search(name) is not None:
            return cc
    return None

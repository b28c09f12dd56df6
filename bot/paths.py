"""Where the data folders shipped beside the package are: `rules/` and `templates/`.

An editable install (and a checkout) finds them next to `bot/`; a regular install puts `bot/` in
site-packages, so a deployment points at them with VLLM_TRIAGE_RULES_DIR / VLLM_TRIAGE_TEMPLATES_DIR
(the Dockerfile sets both).
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def rules_dir() -> Path:
    return Path(os.environ.get("VLLM_TRIAGE_RULES_DIR") or REPO_ROOT / "rules")


def templates_dir() -> Path:
    return Path(os.environ.get("VLLM_TRIAGE_TEMPLATES_DIR") or REPO_ROOT / "templates")

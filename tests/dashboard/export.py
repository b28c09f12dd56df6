"""A small export for the dashboard tests: the project's sample reports (samples/issues.jsonl, written for the
demo) re-dated to the last two weeks, a few maintainers' labels, and one hostile issue whose title and body try to
run script in a maintainer's browser."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples" / "issues.jsonl"
XSS_NUMBER = 120
XSS_TITLE = "<img src=x onerror=alert(1)>"
XSS_BODY = """### Your current environment

<script>window.__xss = 1; alert("body")</script>

### 🐛 Describe the bug

Serving fails right after start-up: <img src=x onerror="window.__xss=2"> <svg onload=alert(3)>
[the log](javascript:alert(4)) and <a href="javascript:alert(5)">here</a> @maintainers please look.

```
(APIServer pid=812) Traceback (most recent call last):
(APIServer pid=812)   File "/usr/lib/python3/vllm/entrypoints/openai/api_server.py", line 1961, in run_server
(APIServer pid=812)     await run_server_worker(listen_address, sock, args, **uvicorn_kwargs)
(APIServer pid=812) ValueError: bad value <script>window.__xss=3</script> for --served-model-name
```
"""
# Three questions of one kind (loading models through ModelScope) whose wording differs: each later one has the
# earlier ones as "possibly related" (the same question key, too little shared wording to link).
USAGE = "### Your current environment\n\n_No response_\n\n### How would you like to use vllm\n\n{}\n"
RELATED = [
    {"number": 121, "title": "[Usage]: download the weights through ModelScope instead of the Hub",
     "body": USAGE.format("Our servers cannot reach the Hub; the mirror is the only source. "
                          "How do I point vllm at it?")},
    {"number": 122, "title": "[Usage]: VLLM_USE_MODELSCOPE seems to have no effect",
     "body": USAGE.format("I exported the variable and restarted, nothing changed.")},
    {"number": 123, "title": "[Usage]: is ModelScope supported as a model source?",
     "body": USAGE.format("Asking before we set up a cluster in a region without access to the usual hub.")},
]
MAINTAINER_LABELS = {
    103: ["feature request"], 106: ["installation"], 107: ["bug", "tool-calling"], 111: ["bug", "structured-output"],
    112: ["new model"], 114: ["bug", "rocm"], XSS_NUMBER: ["bug"],
}


def export_issues(now: datetime | None = None) -> list[dict]:
    now = now or datetime.now(UTC)
    issues = [json.loads(line) for line in SAMPLES.read_text(encoding="utf-8").splitlines() if line.strip()]
    issues.append({"number": XSS_NUMBER, "title": XSS_TITLE, "body": XSS_BODY, "state": "open",
                   "html_url": "javascript:alert(6)", "created_at": ""})
    issues.extend({**r, "state": "open", "created_at": f"9999-12-{r['number'] - 100:02d}"} for r in RELATED)
    issues.sort(key=lambda i: (i.get("created_at") or "9999", i["number"]))
    for age, issue in zip(range(len(issues) - 1, -1, -1), issues, strict=True):
        created = now - timedelta(days=age, hours=1)
        issue["created_at"] = created.strftime("%Y-%m-%dT%H:%M:%SZ")
        issue["labels"] = [{"name": name} for name in MAINTAINER_LABELS.get(issue["number"], [])]
    return issues


def write_export(path: Path, now: datetime | None = None) -> Path:
    path.write_text("".join(json.dumps(i) + "\n" for i in export_issues(now)), encoding="utf-8")
    return path

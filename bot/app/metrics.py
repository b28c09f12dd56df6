"""Counters and histograms rendered in the Prometheus text format (no client library needed)."""

from __future__ import annotations

from collections import defaultdict

_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


def _labels(labels: dict[str, str]) -> str:
    if not labels:
        return ""
    inner = ",".join(f'{k}="{str(v).replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'
                     for k, v in sorted(labels.items()))
    return "{" + inner + "}"


class Metrics:
    def __init__(self) -> None:
        self.counters: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        self.histograms: dict[str, list[float]] = {}
        self.help: dict[str, str] = {
            "vllm_triage_webhooks_total": "Webhook requests by event and outcome",
            "vllm_triage_deliveries_processed_total": "Deliveries the worker finished, by outcome",
            "vllm_triage_decisions_total": "Triage decisions recorded, by mode",
            "vllm_triage_actions_total": "Writes made on GitHub, by kind",
            "vllm_triage_handler_errors_total": "Handler failures, by handler",
            "vllm_triage_webhook_seconds": "Time to verify, record and acknowledge one webhook",
        }

    def inc(self, name: str, value: float = 1.0, **labels: str) -> None:
        self.counters[name][_labels(labels)] += value

    def observe(self, name: str, seconds: float) -> None:
        h = self.histograms.setdefault(name, [0.0] * (len(_BUCKETS) + 2))  # buckets..., count, sum
        for i, bound in enumerate(_BUCKETS):
            if seconds <= bound:
                h[i] += 1
        h[-2] += 1
        h[-1] += seconds

    def render(self, gauges: dict[str, tuple[str, dict[str, float]]] | None = None) -> str:
        out: list[str] = []
        for name, series in sorted(self.counters.items()):
            out.append(f"# HELP {name} {self.help.get(name, name)}")
            out.append(f"# TYPE {name} counter")
            out.extend(f"{name}{labels} {value:g}" for labels, value in sorted(series.items()))
        for name, h in sorted(self.histograms.items()):
            out.append(f"# HELP {name} {self.help.get(name, name)}")
            out.append(f"# TYPE {name} histogram")
            out.extend(f'{name}_bucket{{le="{bound}"}} {h[i]:g}' for i, bound in enumerate(_BUCKETS))
            out.append(f'{name}_bucket{{le="+Inf"}} {h[-2]:g}')
            out.append(f"{name}_count {h[-2]:g}")
            out.append(f"{name}_sum {h[-1]:.6f}")
        for name, (help_text, series) in sorted((gauges or {}).items()):
            out.append(f"# HELP {name} {help_text}")
            out.append(f"# TYPE {name} gauge")
            out.extend(f"{name}{key} {value:g}" for key, value in sorted(series.items()))
        return "\n".join(out) + "\n"

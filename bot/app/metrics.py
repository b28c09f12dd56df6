"""The server's counters and the webhook ack histogram (prometheus_client), and /metrics' text.

With `serve --intake-processes N` every process writes its counts to files in one directory (prometheus_client's
multiprocess mode, `share_across_processes`), and the serving process's /metrics adds them up, so webhooks an
intake process acknowledged are counted too. With one process the counts stay in memory.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from prometheus_client import CollectorRegistry, Counter, Histogram, disable_created_metrics, generate_latest, values
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.multiprocess import MultiProcessCollector

CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
COUNTERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "vllm_triage_webhooks_total": ("Webhook requests by event and outcome", ("event", "outcome")),
    "vllm_triage_deliveries_processed_total": ("Deliveries the worker finished, by outcome", ("outcome",)),
    "vllm_triage_decisions_total": ("Triage decisions recorded, by mode", ("mode",)),
    "vllm_triage_actions_total": ("Writes made on GitHub, by kind", ("kind",)),
    "vllm_triage_handler_errors_total": ("Handler failures, by handler", ("handler",)),
}
HISTOGRAMS: dict[str, str] = {
    "vllm_triage_webhook_seconds": "Time to verify, record and acknowledge one webhook",
}
# Gauge = (name, help, label name or None, {label value: value}): read from the store at each scrape
Gauge = tuple[str, str, str | None, dict[str, float]]

disable_created_metrics()  # no `_created` series beside each counter: nothing here reads them


def share_across_processes(directory: Path, *, clear: bool = False) -> None:
    """Counts go to files in `directory`, shared by every process of one server. The serving process calls it
    with `clear` before it makes its Metrics and starts the intake processes (they inherit the directory)."""
    directory.mkdir(parents=True, exist_ok=True)
    if clear:  # counts of an earlier run of the server
        for stale in directory.glob("*.db"):
            stale.unlink()
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(directory)
    if not _shared():
        values.ValueClass = values.MultiProcessValue()


def _shared() -> bool:
    return bool(getattr(values.ValueClass, "_multiprocess", False))


class _Snapshot:
    """A collector over gauge values read before the scrape."""

    def __init__(self, families: list[GaugeMetricFamily]) -> None:
        self.families = families

    def collect(self) -> list[GaugeMetricFamily]:
        return self.families


class Metrics:
    def __init__(self) -> None:
        own = CollectorRegistry(auto_describe=True)
        self._counters = {name: Counter(name, text, labels, registry=own) for name, (text, labels) in COUNTERS.items()}
        self._histograms = {name: Histogram(name, text, buckets=BUCKETS, registry=own)
                            for name, text in HISTOGRAMS.items()}
        if _shared():
            self._exposed = CollectorRegistry()
            MultiProcessCollector(self._exposed, os.environ["PROMETHEUS_MULTIPROC_DIR"])
        else:
            self._exposed = own

    def inc(self, name: str, value: float = 1.0, **labels: str) -> None:
        self._counters[name].labels(**labels).inc(value)

    def observe(self, name: str, seconds: float) -> None:
        self._histograms[name].observe(seconds)

    def render(self, gauges: Iterable[Gauge] = ()) -> bytes:
        """The Prometheus text format: every counter and histogram (of every process), then `gauges`."""
        families = []
        for name, text, label, series in gauges:
            family = GaugeMetricFamily(name, text, labels=[label] if label else [])
            for key, value in sorted(series.items()):
                family.add_metric([key] if label else [], value)
            families.append(family)
        snapshot = CollectorRegistry(auto_describe=False)
        snapshot.register(_Snapshot(families))
        return generate_latest(self._exposed) + generate_latest(snapshot)

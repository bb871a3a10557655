"""Scoring for the internal evaluation lanes: named checks grouped into metrics, each metric a pass rate."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class LaneScore:
    """Collects checks; a metric's value is the fraction of its checks that passed."""

    lane: str
    passed: dict[str, int] = field(default_factory=dict)
    total: dict[str, int] = field(default_factory=dict)
    failures: list[dict[str, str]] = field(default_factory=list)

    def check(self, metric: str, ok: bool, description: str) -> bool:
        self.total[metric] = self.total.get(metric, 0) + 1
        self.passed[metric] = self.passed.get(metric, 0) + bool(ok)
        if not ok:
            self.failures.append({"metric": metric, "check": description})
        return ok

    def metrics(self) -> dict[str, float]:
        return {name: round(self.passed[name] / count, 4) for name, count in self.total.items()}

    def report(self, **extra: Any) -> dict[str, Any]:
        metrics = self.metrics()
        return {
            "lane": self.lane,
            "internal": True,
            "metrics": metrics,
            "checks": {name: {"passed": self.passed[name], "total": self.total[name]} for name in self.total},
            "failures": self.failures,
            "passed": bool(metrics) and all(value == 1.0 for value in metrics.values()),
            **extra,
        }

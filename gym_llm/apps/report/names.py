"""File names of the report (a module with no imports, so :mod:`gym_llm.apps.evaluate`
can name them without an import cycle through :mod:`gym_llm.apps.report.data`)."""

__all__ = ["REPORT_FILE", "METRICS_FILE"]

#: The report's name in a run directory.
REPORT_FILE = "report.html"
#: A training run's metrics (written by gym_llm_trainers.metrics.MetricsLogger, which the core cannot import).
METRICS_FILE = "metrics.jsonl"

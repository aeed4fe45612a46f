"""``kernlint check``'s entry points (the pipeline lives in :mod:`kernlint.pipeline`)."""

from kernlint.pipeline import Options, apply_filters, collect_files, enabled_rules, run_check, source_rules

__all__ = ["Options", "apply_filters", "collect_files", "enabled_rules", "run_check", "source_rules"]

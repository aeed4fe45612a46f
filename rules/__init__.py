"""The kernlint rule catalogue: one module per rule (installed as ``kernlint.rules``)."""

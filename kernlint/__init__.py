"""kernlint: static-plus-dynamic linter and evaluation harness for Triton and TileLang kernels."""

__version__ = "0.1.0"

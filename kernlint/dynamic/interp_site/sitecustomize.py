"""Put on ``PYTHONPATH`` by ``run_interpreted`` for a command (``pytest ...``, ``python x.py``):
every Python process the command starts instruments Triton's interpreter when it imports it."""

import os

if os.environ.get("KERNLINT_INTERP_OUT_DIR"):
    try:
        from kernlint.dynamic.interp_hook import install_on_import

        install_on_import()
    except Exception as e:  # never break the user's program
        import sys

        print(f"kernlint: interpreter instrumentation not installed: {e!r}", file=sys.stderr)

"""Timing quality alone (the second part of gpu_eval_check.py), for a short device session:

    python benchmarks/gpu_timing_check.py OUT_DIR [--repeats 10]
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu_eval_check  # noqa: E402

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--repeats", type=int, default=10)
    args = ap.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    result = gpu_eval_check.timing_quality(args.out_dir, args.repeats, skip_ncu=False)
    (args.out_dir / "timing_check.json").write_text(json.dumps(result, indent=2, default=str))
    print(json.dumps({k: v for k, v in result.items() if k != "flush_modes"}, indent=1, default=str))
    for mode, v in result["flush_modes"].items():
        print(mode, round(v["mean_of_medians_us"], 2), v.get("cv"), v.get("errors", ""))

"""Source-phase findings of every study candidate, one JSON line per candidate.

    python benchmarks/study/lint_candidates.py CANDS_DIR OUT.jsonl

CANDS_DIR is the folder candidates.py writes (``<task>/<model>.py``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def main() -> None:
    cands, out = Path(sys.argv[1]), Path(sys.argv[2])
    rows = []
    for path in sorted(cands.glob("*/*.py")):
        r = subprocess.run([sys.executable, "-m", "kernlint", "check", path.name, "--output-format", "json"],
                           cwd=path.parent, capture_output=True, text=True, timeout=300)
        try:
            data = json.loads(r.stdout)
            findings = [{"rule": f["rule"], "line": f["line"], "level": f["level"]} for f in data["findings"]]
            errors = data.get("errors", [])
        except json.JSONDecodeError:
            findings, errors = [], [(r.stdout + r.stderr)[-300:]]
        rows.append({"id": f"{path.parent.name}/{path.stem}", "task": path.parent.name, "model": path.stem,
                     "exit": r.returncode, "findings": findings, "errors": errors})
    out.write_text("".join(json.dumps(x) + "\n" for x in rows))
    print(f"{len(rows)} candidates, {sum(len(x['findings']) for x in rows)} findings -> {out}")


if __name__ == "__main__":
    main()

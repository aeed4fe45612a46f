"""Run the IR phase over the TritonBench-G reference modules, count what compiled, triage findings.

    python benchmarks/ir_tritonbench.py [CORPUS_JSON] [-o benchmarks/results/ir_tritonbench.md]
                                        [--workdir DIR] [--sample N --seed S [--rules KL305]]

Each module's ``output`` field is written to its own file (``tbNNN_<name>.py``, NNN the entry's
index) in ``--workdir`` (default: a temporary folder); the phase runs over all of them once (cold,
private cache in the work folder: a second run with the same folder is warm), and the report gives
kernels, specializations, compiled/failed counts, the failure stages and messages grouped, findings
per rule, the time, and the triage table from the recorded ``VERDICTS``. Every finding is dumped
with +-3 lines of context to ``DIR/findings.jsonl``. With ``--sample N --seed S`` the script prints
a reproducible sample of at most N findings per rule (``random.Random(f"{seed}:{rule}")`` over the
findings sorted by file, line, rule) instead of writing the report.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "ir"))
import conftest  # noqa: E402,F401  - maps kernlint.rules in a plain checkout

from kernlint.ir.phase import run_ir_phase  # noqa: E402

DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "tritonbench" / "TritonBench_G_v1.json"


#: Verdicts of the triage recorded in benchmarks/results/ir_tritonbench.md: "tbNNN:line:rule" -> T or F
#: (the criterion is in the report). Seeded samples (--seed 1, 10 per rule) at the commit named there.
VERDICTS = """
tb005:183:KL300=F tb015:58:KL300=F tb017:42:KL300=F tb054:36:KL300=T tb072:43:KL300=T tb072:95:KL300=T
tb072:150:KL300=T tb075:44:KL300=T tb076:166:KL300=F tb102:51:KL300=T tb102:122:KL300=T tb125:127:KL300=T
tb155:90:KL300=T tb167:30:KL300=F tb177:38:KL300=T
tb181:44:KL301=T tb181:51:KL301=T
tb000:56:KL302=T tb000:137:KL302=T tb000:243:KL302=T tb011:84:KL302=T tb016:112:KL302=T tb052:59:KL302=T
tb052:131:KL302=T tb057:129:KL302=T tb094:28:KL302=T tb138:150:KL302=T
tb007:7:KL303=T tb016:10:KL303=T tb021:93:KL303=T tb027:51:KL303=F tb037:6:KL303=T tb057:7:KL303=F
tb134:6:KL303=T tb138:7:KL303=T tb150:49:KL303=T tb183:318:KL303=T
tb000:80:KL304=T tb027:51:KL304=F tb052:77:KL304=T tb052:106:KL304=T tb057:7:KL304=F tb090:8:KL304=T
tb138:7:KL304=T tb143:22:KL304=T tb163:23:KL304=T tb168:19:KL304=T
tb040:19:KL305=T tb051:79:KL305=T tb090:55:KL305=F tb098:57:KL305=T tb098:64:KL305=T tb098:67:KL305=T
tb098:72:KL305=T tb098:93:KL305=T tb098:104:KL305=T tb098:105:KL305=T tb098:108:KL305=T tb098:118:KL305=T
tb105:38:KL305=T tb110:43:KL305=F tb117:56:KL305=T tb117:214:KL305=T tb117:326:KL305=T tb117:410:KL305=T
tb144:53:KL305=T tb150:84:KL305=T tb158:25:KL305=F tb159:19:KL305=T tb178:96:KL305=T tb178:106:KL305=T
tb178:114:KL305=T tb178:174:KL305=T tb178:194:KL305=T
"""


def _verdicts() -> dict[str, str]:
    out = {}
    for tok in VERDICTS.split():
        key, _, v = tok.partition("=")
        out[key] = v
    return out


def _short(path: str) -> str:
    return Path(path).name.split("_", 1)[0]


def _sample(findings: list[dict], n: int, seed: int, rules: set[str] | None) -> dict[str, list[dict]]:
    by_rule: dict[str, list[dict]] = collections.defaultdict(list)
    for f in sorted(findings, key=lambda f: (f["file"], f["line"], f["rule"])):
        by_rule[f["rule"]].append(f)
    out = {}
    for rule, items in sorted(by_rule.items()):
        if rules and rule not in rules:
            continue
        rng = random.Random(f"{seed}:{rule}")
        out[rule] = items if len(items) <= n else sorted(rng.sample(items, n), key=lambda f: (f["file"], f["line"]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", nargs="?", default=str(DEFAULT_CORPUS))
    ap.add_argument("-o", "--output", default=str(ROOT / "benchmarks" / "results" / "ir_tritonbench.md"))
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--jobs", type=int, default=0)
    ap.add_argument("--workdir", default=None, help="where the modules, the cache and findings.jsonl go")
    ap.add_argument("--sample", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rules", default="")
    args = ap.parse_args()
    entries = json.loads(Path(args.corpus).read_text())
    tmp = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="kernlint-tb-"))
    tmp.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, e in enumerate(entries):
        name = re.sub(r"[^A-Za-z0-9_]", "_", Path(e.get("file", f"m{i}")).stem)
        p = tmp / f"tb{i:03d}_{name}.py"
        if not p.exists() or p.read_text() != e["output"]:
            p.write_text(e["output"])
        paths.append(str(p))
    stats: dict = {}
    t0 = time.perf_counter()
    findings = run_ir_phase(paths, arch=args.arch, cache_dir=tmp / "cache", jobs=args.jobs, stats=stats)
    wall = time.perf_counter() - t0
    dumped = []
    for f in findings:
        lines_ = Path(f.path).read_text().splitlines()
        lo, hi = max(0, f.span.line - 4), min(len(lines_), f.span.line + 3)
        dumped.append({"file": _short(f.path), "path": f.path, "line": f.span.line, "rule": f.rule,
                       "level": f.level.value, "kernel": f.kernel, "message": f.message,
                       "context": [f"{n + 1:4d}{'>' if n + 1 == f.span.line else ' '} {lines_[n]}"
                                   for n in range(lo, hi)],
                       "excerpt": f.evidence.get("excerpt", [])[:4]})
    with open(tmp / "findings.jsonl", "w") as fh:
        for d in dumped:
            fh.write(json.dumps(d) + "\n")
    if args.sample:
        rules = {r.strip().upper() for r in args.rules.split(",") if r.strip()} or None
        for rule, items in _sample(dumped, args.sample, args.seed, rules).items():
            print(f"=== {rule}: {len(items)} sampled")
            for d in items:
                print(f"--- {d['file']}:{d['line']}:{d['rule']} [{d['kernel']}] {d['message']}")
                print("\n".join(d["context"]))
                if d["excerpt"]:
                    print("    ir: " + " | ".join(d["excerpt"]))
        return
    per_rule = collections.Counter(f.rule for f in findings)
    failures = [f for f in findings if f.rule == "KL300"]
    reasons = collections.Counter()
    for f in failures:
        stage = f.evidence.get("stage", "compile")
        msg = f.message.split(": ", 1)[-1]
        msg = re.sub(r"\(/[^)]*\)", "(a path)", msg)  # no machine paths in the report
        msg = re.sub(r"\d+", "N", msg)[:90]
        reasons[(stage, msg)] += 1
    verdicts = _verdicts()
    sampled = _sample(dumped, 10, args.seed, None)
    triage = []
    unjudged = []
    for rule, items in sorted(sampled.items()):
        keys = [f"{d['file']}:{d['line']}:{d['rule']}" for d in items]
        judged = [verdicts[k] for k in keys if k in verdicts]
        unjudged += [k for k in keys if k not in verdicts]
        triage.append(f"| {rule} | {per_rule[rule]} | {len(items)} | {judged.count('T')} |")
    # every specialization that fails yields one KL300 (others at the same place are listed in it)
    failed = sum(1 + len(f.evidence.get("also_in_specializations", [])) for f in failures)
    specs = stats.get("specializations", 0)
    cold = stats.get("compiled", 0) > 0
    lines = [
        f"# IR phase over TritonBench-G ({len(entries)} reference modules)",
        "",
        f"- target: {args.arch}; jobs: {args.jobs or os.cpu_count()}; wall time: {wall:.1f} s "
        f"({'cold: empty cache' if cold else 'warm: from the cache of an earlier run'})",
        f"- kernels: {stats.get('kernels')}; specializations: {specs}; failed: {failed} ({specs - failed} compiled)",
        "",
        "## Findings per rule, and triage",
        "",
        f"Sample: at most 10 findings per rule, seed {args.seed} (`--sample 10 --seed {args.seed}`), each judged by",
        "reading the kernel, its wrapper and the compiled code. A finding is *true* when the compiled kernel",
        "does what the finding says for the specialization shown, and that specialization is one a real call",
        "makes or could make: launch and autotune values as written, sizes only the caller picks at",
        "kernlint's guess, fp32 tensors unless the module's host code says half precision. It is *false*",
        "when it rests on a guess the module contradicts or no realistic call makes (a 64x64 convolution",
        "window, fp32 tensors in an int8/fp16 attention kernel, a guessed constexpr that fails the kernel's",
        "own static_assert).",
        "",
        "| rule | findings | sampled | true |",
        "|---|---|---|---|",
        *triage,
        "",
        *([f"Sampled but not judged yet: {' '.join(unjudged)}", ""] if unjudged else []),
        "## Why specializations did not compile (KL300, grouped)",
        "",
        "| stage | message (numbers as N) | count |",
        "|---|---|---|",
        *[f"| {s} | {m.replace('|', '/')} | {n} |" for (s, m), n in reasons.most_common()],
        "",
    ]
    out = Path(args.output)
    notes = ""
    if out.exists() and "\n## Notes" in out.read_text():
        notes = out.read_text()[out.read_text().index("\n## Notes"):]
    out.write_text("\n".join(lines) + notes)
    print("\n".join(lines))


if __name__ == "__main__":
    main()

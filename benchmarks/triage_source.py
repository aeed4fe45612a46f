"""Run kernlint's source phase over TritonBench-G references and two LLM answer sets, for triage.

Usage: python benchmarks/triage_source.py [--corpus DIR] [--dump FILE] [--sample N --seed S]
                                          [--rules KL104,KL106] [--summary]

- counts findings per rule per corpus (``ref``, ``gpt``, ``claude``) and kernel lines (the sum of
  the kernel spans' lengths) per corpus;
- dumps every finding, with +-3 lines of context, as JSON lines to ``--dump`` (default
  ``/tmp/triage_source_findings.jsonl``);
- with ``--sample N --seed S``: prints a reproducible random sample of at most N findings per rule
  per corpus (``random.Random(f"{seed}:{corpus}:{rule}")`` over the findings sorted by
  path/line/col), with context; ``--rules`` restricts which rules are sampled;
- with ``--summary``: the triage table from the recorded ``VERDICTS`` (every reference finding of
  the fully-read rules, seeded samples elsewhere) and false findings per 1,000 kernel lines by level;
  it lists any finding of the judged set that has no verdict yet.

File names: ``ref012_<file>`` for the reference of task 12, ``gpt012.py`` / ``claude012.py`` for
the answers (the ```python fenced block of ``predict`` if there is one, else the whole text).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kernlint import catalogue  # noqa: E402
from kernlint.model import Phase  # noqa: E402
from kernlint.source.phase import lint_text  # noqa: E402

CORPORA = ("ref", "gpt", "claude")
ANSWERS = {"gpt": "gpt-4o_simp.jsonl", "claude": "claude-3-5-sonnet_simp.jsonl"}
_FENCE = re.compile(r"```python[^\n]*\n(.*?)(?:```|\Z)", re.S)

# Verdicts of the triage at the commit named in benchmarks/results/triage_source.md: "file:line:rule" ->
# T (the defect exists for an input the wrapper accepts) or F (false finding). File is the short
# name (ref012, gpt012, claude012). Covers every reference finding of the fully-read rules, the
# seeded samples (--seed 1) and the findings that disappeared since the previous triage.
VERDICTS = """
ref000:70:KL102=T ref006:59:KL109=T ref006:69:KL101=T ref006:72:KL109=T ref006:73:KL109=T ref006:77:KL101=T
ref006:101:KL109=T ref007:39:KL101=T ref007:41:KL101=T ref007:46:KL101=T ref007:52:KL101=T ref011:78:KL101=T
ref011:80:KL101=T ref011:85:KL101=T ref012:74:KL105=T ref021:172:KL101=F ref021:173:KL101=F ref021:189:KL102=F
ref022:58:KL109=T ref022:96:KL102=T ref022:97:KL102=T ref022:119:KL102=T ref022:120:KL102=T ref022:223:KL101=T
ref022:229:KL101=T ref022:237:KL109=T ref022:239:KL109=T ref025:84:KL109=T ref025:89:KL109=T ref025:90:KL109=T
ref025:110:KL102=T ref025:119:KL109=T ref036:81:KL101=T ref052:58:KL101=T ref052:59:KL101=T ref052:130:KL101=T
ref052:131:KL101=T ref065:43:KL103=F ref069:50:KL101=T ref069:85:KL101=T ref084:65:KL109=T ref084:76:KL101=T
ref084:81:KL109=T ref084:83:KL109=T ref084:91:KL101=T ref084:121:KL109=T ref087:68:KL105=T ref088:71:KL101=T
ref088:72:KL101=T ref088:192:KL101=T ref088:193:KL101=T ref088:194:KL101=T ref088:195:KL101=T ref091:103:KL101=T
ref091:104:KL101=T ref091:105:KL101=T ref091:106:KL101=T ref094:37:KL102=T ref101:25:KL101=T ref109:54:KL102=F
ref111:205:KL102=F ref111:206:KL109=F ref114:26:KL101=F ref114:36:KL102=F ref126:97:KL101=T ref126:98:KL101=T
ref130:67:KL103=F ref141:78:KL101=F ref141:79:KL101=F ref160:97:KL101=T ref160:98:KL101=T ref162:34:KL101=F
ref162:35:KL101=F ref162:40:KL102=F ref166:39:KL109=T ref166:42:KL109=T ref166:44:KL109=T ref166:60:KL109=T
ref168:43:KL101=T ref168:44:KL101=T ref174:39:KL101=F ref181:44:KL101=T ref181:46:KL101=T ref181:51:KL101=T
ref016:59:KL101=F ref016:74:KL101=F ref016:109:KL101=F ref016:127:KL102=F
ref033:20:KL104=T ref096:18:KL104=T ref183:160:KL104=T ref004:27:KL104=T ref011:24:KL104=T ref011:72:KL104=T
ref018:35:KL104=T ref019:30:KL104=T ref028:44:KL104=T ref038:96:KL104=F ref042:35:KL104=F ref046:44:KL104=T
ref047:35:KL104=T ref057:94:KL104=T ref073:122:KL104=F ref080:42:KL104=T ref085:29:KL104=T ref107:32:KL104=T
ref110:40:KL104=T ref136:109:KL104=F ref148:14:KL104=T ref154:50:KL104=T ref156:127:KL104=T ref165:34:KL104=T
ref171:140:KL104=F
ref018:30:KL106=T ref028:51:KL106=T ref035:14:KL106=T ref038:38:KL106=T ref049:109:KL106=T ref049:226:KL106=T
ref110:35:KL106=T ref174:38:KL106=T ref014:43:KL106=T ref014:97:KL106=T ref061:40:KL106=T ref081:91:KL106=T
ref090:37:KL106=T ref134:45:KL106=T ref136:51:KL106=T
gpt111:32:KL101=T gpt010:33:KL101=T gpt014:16:KL101=T gpt017:26:KL101=T gpt037:28:KL101=T gpt076:66:KL101=T
gpt076:67:KL101=T gpt102:29:KL101=T gpt134:22:KL101=T gpt167:19:KL101=T
gpt014:27:KL102=T gpt167:42:KL102=T gpt014:37:KL102=T gpt036:33:KL102=T gpt072:84:KL102=F gpt076:77:KL102=T
gpt078:46:KL102=T gpt131:35:KL102=T gpt132:40:KL102=T gpt160:44:KL102=T
gpt000:55:KL103=T gpt000:56:KL103=T gpt017:43:KL103=T gpt022:48:KL103=T gpt048:26:KL103=T gpt049:21:KL103=F
gpt049:52:KL103=F gpt116:57:KL103=T gpt116:59:KL103=T gpt130:56:KL103=T
gpt012:13:KL104=T gpt012:45:KL104=T gpt017:25:KL104=T gpt023:58:KL104=T gpt053:16:KL104=F gpt107:14:KL104=T
gpt110:24:KL104=T gpt127:13:KL104=T gpt171:12:KL104=T gpt178:50:KL104=T
gpt043:29:KL105=T gpt047:22:KL105=T gpt073:32:KL105=T gpt125:26:KL105=F gpt125:70:KL105=F gpt150:67:KL105=T
gpt039:48:KL105=T gpt073:97:KL105=F gpt083:23:KL105=T gpt150:19:KL105=T
gpt061:35:KL106=T gpt061:37:KL106=T gpt062:28:KL106=T gpt068:28:KL106=T gpt085:25:KL106=T gpt090:24:KL106=T
gpt099:30:KL106=T gpt136:42:KL106=T gpt136:86:KL106=T gpt038:71:KL106=T
gpt142:66:KL108=T gpt142:79:KL108=T
gpt130:44:KL109=T gpt130:45:KL109=T gpt130:46:KL109=T gpt130:52:KL109=T gpt130:56:KL109=T gpt130:58:KL109=T
gpt073:105:KL110=T gpt073:106:KL110=T
claude020:55:KL101=T claude007:57:KL101=T claude016:46:KL101=F claude034:49:KL101=T claude037:40:KL101=T
claude091:75:KL101=T claude111:45:KL101=T claude147:51:KL101=T claude160:56:KL101=T claude183:33:KL101=T
claude005:60:KL102=T claude074:49:KL102=F claude074:50:KL102=F claude111:69:KL102=T claude125:62:KL102=T
claude125:63:KL102=T claude125:117:KL102=T claude126:122:KL102=T claude073:125:KL102=F claude183:43:KL102=T
claude008:50:KL103=F claude051:53:KL103=T claude051:54:KL103=T claude053:126:KL103=T claude054:32:KL103=T
claude030:20:KL104=T claude138:48:KL104=T claude006:58:KL104=T claude047:26:KL104=T claude061:30:KL104=T
claude068:41:KL104=T claude073:84:KL104=T claude115:26:KL104=T claude144:39:KL104=F claude150:78:KL104=T
claude047:42:KL105=T claude073:42:KL105=F claude073:102:KL105=F claude073:120:KL105=F claude083:41:KL105=T
claude113:38:KL105=T claude012:36:KL105=F claude073:107:KL105=F claude093:70:KL105=F claude134:51:KL105=T
claude035:29:KL106=T claude085:32:KL106=T claude114:38:KL106=T claude129:53:KL106=T claude129:54:KL106=T
claude136:56:KL106=T claude136:104:KL106=T claude150:31:KL106=T claude150:93:KL106=T claude171:135:KL106=T
claude075:85:KL109=T claude130:57:KL109=T claude155:37:KL109=T claude155:77:KL109=T claude155:78:KL109=T
claude155:118:KL109=T claude155:184:KL109=T claude155:186:KL109=T claude155:187:KL109=T claude155:214:KL109=T
gpt076:62:KL101=T gpt076:63:KL101=T gpt102:27:KL101=T gpt111:30:KL101=T gpt134:21:KL101=T gpt163:30:KL101=T
claude007:40:KL101=T claude125:43:KL101=T claude126:99:KL101=T claude162:33:KL101=T
claude078:91:KL102=F claude125:119:KL102=T claude147:69:KL102=T claude183:110:KL102=T
ref003:61:KL104=F ref003:83:KL104=F ref012:64:KL104=T ref013:61:KL104=F ref023:143:KL104=T ref025:53:KL104=T ref026:17:KL104=F
ref026:39:KL104=F ref036:43:KL104=T ref069:33:KL104=T ref071:10:KL104=T ref072:43:KL104=T ref073:27:KL104=T
ref074:43:KL104=F ref090:28:KL104=F ref097:29:KL104=T ref099:38:KL104=T ref118:17:KL104=T ref127:32:KL104=T
ref129:25:KL104=T ref137:15:KL104=T ref176:30:KL104=T ref180:17:KL104=T
gpt013:23:KL104=T gpt022:38:KL104=T gpt046:32:KL104=T gpt101:32:KL104=T gpt108:16:KL104=T gpt122:13:KL104=T
gpt165:11:KL104=T gpt176:25:KL104=T claude008:24:KL104=T claude012:15:KL104=T claude041:27:KL104=T
claude053:26:KL104=T claude081:18:KL104=T claude105:46:KL104=T claude110:34:KL104=T claude122:23:KL104=T
claude140:106:KL104=T
gpt039:51:KL105=T gpt125:29:KL105=F gpt165:30:KL105=F claude038:69:KL105=T claude043:31:KL105=F claude134:53:KL105=T
ref036:81:KL101=T
ref006:28:KL104=T ref008:36:KL104=T ref009:61:KL104=T ref012:114:KL104=T ref021:110:KL104=T ref022:94:KL104=T
ref022:205:KL104=T ref026:11:KL104=T ref026:33:KL104=T ref029:10:KL104=T ref034:49:KL104=T ref039:78:KL104=T
ref041:29:KL104=T ref042:67:KL104=T ref044:11:KL104=T ref046:18:KL104=T ref047:68:KL104=T ref053:20:KL104=T
ref053:60:KL104=T ref054:37:KL104=T ref054:79:KL104=T ref060:29:KL104=T ref064:40:KL104=T ref065:16:KL104=T
ref065:79:KL104=T ref067:20:KL104=T ref070:33:KL104=T ref070:73:KL104=T ref070:111:KL104=T ref070:145:KL104=T
ref072:95:KL104=T ref072:150:KL104=T ref072:232:KL104=T ref073:129:KL104=T ref074:52:KL104=F ref075:44:KL104=T
ref076:46:KL104=T ref081:20:KL104=T ref081:67:KL104=T ref083:28:KL104=T ref084:28:KL104=T ref090:29:KL104=T
ref095:24:KL104=T ref095:78:KL104=T ref101:34:KL104=T ref102:51:KL104=T ref103:40:KL104=T ref103:76:KL104=T
ref103:107:KL104=T ref105:34:KL104=T ref109:48:KL104=T ref111:173:KL104=T ref112:36:KL104=T ref115:16:KL104=T
ref116:57:KL104=T ref119:15:KL104=T ref122:58:KL104=T ref123:40:KL104=T ref125:36:KL104=T ref128:21:KL104=T
ref130:55:KL104=T ref132:31:KL104=T ref133:22:KL104=T ref138:56:KL104=T ref140:25:KL104=T ref140:57:KL104=T
ref140:101:KL104=T ref143:47:KL104=T ref144:42:KL104=T ref148:28:KL104=T ref151:31:KL104=T ref152:56:KL104=T
ref152:112:KL104=T ref152:165:KL104=T ref152:221:KL104=T ref153:14:KL104=T ref155:26:KL104=T ref155:57:KL104=T
ref155:90:KL104=T ref155:114:KL104=T ref156:42:KL104=T ref157:20:KL104=T ref158:19:KL104=T ref166:30:KL104=T
ref169:49:KL104=F ref174:31:KL104=F ref175:18:KL104=T ref177:39:KL104=T ref181:38:KL104=T ref183:72:KL104=T
ref183:263:KL104=T
gpt166:22:KL104=T gpt178:18:KL104=T claude143:39:KL104=T gpt113:28:KL105=T gpt150:20:KL105=T gpt150:62:KL105=T
"""
# every reference finding read (KL104 too since the triage at 11e7ff3; its seeded sample of 25 is still
# printed with --sample)
FULLY_READ = ("KL101", "KL102", "KL103", "KL104", "KL105", "KL107", "KL108", "KL109", "KL110")
SAMPLED = {"ref": {"KL104": 25, "KL106": 15}, "gpt": 10, "claude": 10}


def verdicts() -> dict[tuple[str, int, str], bool]:
    out = {}
    for item in VERDICTS.split():
        key, value = item.split("=")
        name, line, rule = key.split(":")
        out[(name, int(line), rule)] = value == "T"
    return out


def short_name(path: str) -> str:
    return path.split("_", 1)[0] if path.startswith("ref") else path.removesuffix(".py")


def summary(rules, records, kernel_lines, seed: int) -> None:
    """Per rule: findings per corpus, judged set (fully read / seeded sample), true count; false
    findings per 1,000 reference kernel lines by level."""
    v = verdicts()
    levels = {r.code: str(r.level.value if hasattr(r.level, "value") else r.level) for r in rules}
    codes = sorted({r["rule"] for r in records})
    print("\n| rule | refs | GPT-4o | Claude | sampled refs | true refs | sampled LLM | true LLM |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    false_by_level: dict[str, float] = {}
    unjudged = []
    for code in codes:
        n = {c: sum(1 for r in records if r["corpus"] == c and r["rule"] == code) for c in CORPORA}
        judged = {}
        for c in CORPORA:
            if c == "ref":
                picked = ([r for r in records if r["corpus"] == c and r["rule"] == code] if code in FULLY_READ
                          else sample(records, c, code, SAMPLED["ref"].get(code, 0), seed))
            else:
                picked = sample(records, c, code, SAMPLED[c], seed)
            keys = [(short_name(r["path"]), r["line"], code) for r in picked]
            unjudged += [k for k in keys if k not in v]
            judged[c] = [v[k] for k in keys if k in v]
        ref_s, ref_t = len(judged["ref"]), sum(judged["ref"])
        llm = judged["gpt"] + judged["claude"]
        tag = " (all)" if code in FULLY_READ and ref_s else ""
        print(f"| {code} ({levels.get(code, '?')}) | {n['ref']} | {n['gpt']} | {n['claude']} | {ref_s}{tag} | "
              f"{ref_t if ref_s else '-'} | {len(llm)} | {sum(llm) if llm else '-'} |"
              f"  gpt {sum(judged['gpt'])}/{len(judged['gpt'])}, claude {sum(judged['claude'])}/{len(judged['claude'])}")
        if ref_s:
            false = (ref_s - ref_t) * (n["ref"] / ref_s)  # measured when all were read, else extrapolated
            lvl = levels.get(code, "?")
            false_by_level[lvl] = false_by_level.get(lvl, 0.0) + false
    print(f"\nfalse reference findings per 1,000 reference kernel lines ({kernel_lines['ref']} lines):")
    for lvl, f in sorted(false_by_level.items()):
        print(f"  {lvl:8} {f:6.1f} false  {1000 * f / kernel_lines['ref']:.2f} per 1,000 lines")
    if unjudged:
        print(f"\n{len(unjudged)} judged-set findings have no verdict yet:")
        for k in unjudged:
            print("  " + ":".join(map(str, k)))


def extract_code(predict: str) -> str:
    blocks = _FENCE.findall(predict)
    if blocks:
        return "\n".join(blocks)
    return predict


def load_sources(corpus_dir: Path) -> dict[str, list[tuple[str, str]]]:
    tasks = json.loads((corpus_dir / "TritonBench_G_v1.json").read_text())
    out: dict[str, list[tuple[str, str]]] = {
        "ref": [(f"ref{i:03d}_{t['file']}", t["output"]) for i, t in enumerate(tasks)]
    }
    for key, fname in ANSWERS.items():
        rows = [json.loads(line) for line in (corpus_dir / fname).read_text().splitlines() if line.strip()]
        out[key] = [(f"{key}{i:03d}.py", extract_code(r["predict"])) for i, r in enumerate(rows)]
    return out


def context(text: str, line: int, end_line: int, around: int = 3) -> str:
    lines = text.splitlines()
    lo, hi = max(line - around, 1), min(end_line + around, len(lines))
    return "\n".join(f"{n:5d}{'>' if line <= n <= end_line else ' '} {lines[n - 1]}" for n in range(lo, hi + 1))


def run(corpus_dir: Path):
    rules = [r() for r in catalogue.all_rules().values() if r.phase is Phase.SOURCE]
    sources = load_sources(corpus_dir)
    counts: dict[str, Counter] = {c: Counter() for c in CORPORA}
    kernel_lines: Counter = Counter()
    kernels: Counter = Counter()
    errors: Counter = Counter()
    records: list[dict] = []
    for corpus, files in sources.items():
        for path, text in files:
            result, _ = lint_text(path, text, rules)
            errors[corpus] += len(result.errors)
            for k in result.kernels:
                kernels[corpus] += 1
                kernel_lines[corpus] += k.span.end_line - k.span.line + 1
            for f in sorted(result.findings, key=lambda f: f.sort_key):
                counts[corpus][f.rule] += 1
                d = f.to_dict()
                d["corpus"] = corpus
                d["context"] = context(text, f.span.line, f.span.end_line)
                records.append(d)
    return rules, sources, counts, kernel_lines, kernels, errors, records


def sample(records: list[dict], corpus: str, rule: str, n: int, seed: int) -> list[dict]:
    pool = [r for r in records if r["corpus"] == corpus and r["rule"] == rule]
    pool.sort(key=lambda r: (r["path"], r["line"], r["col"]))
    if len(pool) <= n:
        return pool
    picked = random.Random(f"{seed}:{corpus}:{rule}").sample(range(len(pool)), n)
    return [pool[i] for i in sorted(picked)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpora" / "tritonbench")
    parser.add_argument("--dump", type=Path, default=Path("/tmp/triage_source_findings.jsonl"))
    parser.add_argument("--sample", type=int, default=0, help="findings per rule per corpus to sample")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rules", default="", help="comma-separated rule codes to sample (default: all)")
    parser.add_argument("--corpora", default=",".join(CORPORA), help="corpora to sample from")
    parser.add_argument("--summary", action="store_true",
                        help="with the recorded VERDICTS: the triage table and false findings per 1,000 lines")
    parser.add_argument("--sample-out", type=Path, default=None, help="write the sample as JSON lines here")
    args = parser.parse_args()

    rules, sources, counts, kernel_lines, kernels, errors, records = run(args.corpus)
    args.dump.parent.mkdir(parents=True, exist_ok=True)
    with args.dump.open("w") as fh:
        for r in records:
            fh.write(json.dumps(r) + "\n")

    codes = sorted({r.code for r in rules})
    print(f"{'rule':6} " + " ".join(f"{c:>7}" for c in CORPORA))
    for code in codes:
        if any(counts[c][code] for c in CORPORA):
            print(f"{code:6} " + " ".join(f"{counts[c][code]:7d}" for c in CORPORA))
    print("files   " + " ".join(f"{len(sources[c]):7d}" for c in CORPORA))
    print("kernels " + " ".join(f"{kernels[c]:7d}" for c in CORPORA))
    print("klines  " + " ".join(f"{kernel_lines[c]:7d}" for c in CORPORA))
    print("errors  " + " ".join(f"{errors[c]:7d}" for c in CORPORA))
    print(f"{len(records)} findings dumped to {args.dump}")

    if args.summary:
        summary(rules, records, kernel_lines, args.seed or 1)

    if args.sample:
        wanted = [c.strip().upper() for c in args.rules.split(",") if c.strip()] or codes
        picked: list[dict] = []
        for corpus in [c.strip() for c in args.corpora.split(",") if c.strip()]:
            for code in wanted:
                picked.extend(sample(records, corpus, code, args.sample, args.seed))
        if args.sample_out:
            with args.sample_out.open("w") as fh:
                for r in picked:
                    fh.write(json.dumps(r) + "\n")
        for r in picked:
            print(f"\n=== [{r['corpus']}] {r['rule']} {r['path']}:{r['line']}  {r['message']}")
            print(r["context"])


if __name__ == "__main__":
    main()

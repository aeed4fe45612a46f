"""Merge a GPU run's records into the study's committed JSONL (docs/study-t/records.jsonl).

    python benchmarks/study_t/collect.py DEVICE_OUT_DIR [--into docs/study-t/records.jsonl] [--replace]

DEVICE_OUT_DIR is what ``run_gpu.sh`` wrote: ``<folder>/records.jsonl``. Each record gets a ``model``
field: the model of the answer file it came from (``output_<model>.jsonl``), or its folder's name; a candidate already committed is kept as it is (the
sample grows; ``--replace`` takes the new run's record instead, after a judge fix). What must not
be committed is rewritten in every string of a record: absolute file paths of the machine become
placeholders (``<site-packages>/torch/...``, ``<triton-cache>/...``, ``<out>/...``, ``<path>/name``)
and the host's name becomes ``<host>``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
INTO = ROOT / "docs" / "study-t" / "records.jsonl"
HOST = "<host>"
#: an absolute path of at least two components, not inside a word or a relative path ("a/b", "ms/s")
ABS_PATH = re.compile(r"(?<![\w.~/<>-])/(?:[\w.+@-]+/)+[\w.+@-]*")
#: where a path's tail is still informative: the placeholder for everything up to the anchor
ANCHORS = (("site-packages/", "<site-packages>/"), ("dist-packages/", "<site-packages>/"),
           ("triton-cache/", "<triton-cache>/"), (".triton/cache/", "<triton-cache>/"),
           ("T/TritonBench_T_v1/", "<corpus>/T/TritonBench_T_v1/"), ("llm_T/", "<corpus>/llm_T/"))


def _placeholder(path: str, out_dir: str) -> str:
    for anchor, name in ANCHORS:
        if anchor in path:
            return name + path.split(anchor, 1)[1]
    if out_dir and (path == out_dir or path.startswith(out_dir.rstrip("/") + "/")):
        return "<out>" + path[len(out_dir.rstrip("/")):]
    if re.search(r"/python3\.\d+/", path):  # the standard library
        return "<python>/" + path.split("/python3.", 1)[1].split("/", 1)[-1]
    return "<path>/" + path.rstrip("/").rsplit("/", 1)[-1]


def scrub_text(text: str, out_dir: str = "", host: str = "") -> str:
    text = ABS_PATH.sub(lambda m: _placeholder(m.group(0), out_dir), text)
    if host and host != HOST:
        text = re.sub(rf"(?<![\w.-]){re.escape(host)}(?![\w-])", HOST, text)
    return text


def scrub(value, out_dir: str = "", host: str = ""):
    """``value`` (a record, or any part of one) with machine paths and the host name replaced."""
    if isinstance(value, str):
        return scrub_text(value, out_dir, host)
    if isinstance(value, list):
        return [scrub(v, out_dir, host) for v in value]
    if isinstance(value, dict):
        return {scrub_text(k, out_dir, host): scrub(v, out_dir, host) for k, v in value.items()}
    return value


def read_jsonl(path: Path) -> list[dict]:
    """The records of a JSONL file; a line that is not a JSON object is a clear error (file and line)."""
    out = []
    for no, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{no}: not a JSON line ({exc.msg})") from None
        if not isinstance(rec, dict) or "id" not in rec:
            raise ValueError(f"{path}:{no}: not a kernlint eval record (no 'id')")
        out.append(rec)
    return out


#: a record's origin: the answer file and its row
ANSWER_FILE = re.compile(r"^output_(.+)\.jsonl:\d+$")


def model_of(rec: dict, folder: str) -> str:
    m = ANSWER_FILE.match(str(rec.get("origin") or ""))
    return m.group(1) if m else folder


def device_records(out_dir: Path) -> list[dict]:
    """Every record of a run folder, each with its model, scrubbed."""
    files = sorted(out_dir.glob("*/records.jsonl"))
    if not files:
        raise ValueError(f"{out_dir}: no <folder>/records.jsonl in it (the folder run_gpu.sh writes)")
    recs = []
    for path in files:
        for rec in read_jsonl(path):
            host = str(rec.get("host") or "")
            clean = scrub(rec, str(out_dir.resolve()), host)
            clean["host"] = HOST if host else clean.get("host")
            clean["model"] = model_of(rec, path.parent.name)
            recs.append(clean)
    return recs


def key(rec: dict) -> tuple[str, str]:
    return rec["model"], rec["id"]


def merge(old: list[dict], new: list[dict], replace: bool = False) -> tuple[list[dict], int, int]:
    """(merged records in a stable order, how many added, how many replaced)."""
    by_key = {key(r): r for r in old}
    added = replaced = 0
    for rec in new:
        k = key(rec)
        if k not in by_key:
            added += 1
        elif replace and by_key[k] != rec:
            replaced += 1
        else:
            continue
        by_key[k] = rec
    return sorted(by_key.values(), key=lambda r: (r["model"], r["problem"], r["id"])), added, replaced


def collect(out_dir: Path, into: Path = INTO, replace: bool = False) -> str:
    old = read_jsonl(into) if into.exists() else []
    merged, added, replaced = merge(old, device_records(out_dir), replace)
    into.parent.mkdir(parents=True, exist_ok=True)
    into.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in merged))
    return f"{into.name}: {len(merged)} records ({added} added, {replaced} replaced, {len(old)} before)"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", type=Path, help="the GPU run's folder (<folder>/records.jsonl)")
    parser.add_argument("--into", type=Path, default=INTO, help="the committed JSONL (default: %(default)s)")
    parser.add_argument("--replace", action="store_true", help="a candidate already committed takes the new record")
    ns = parser.parse_args(argv)
    try:
        print(collect(ns.out_dir, ns.into, ns.replace))
    except (OSError, ValueError) as exc:
        print(f"collect: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

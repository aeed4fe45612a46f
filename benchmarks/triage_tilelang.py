"""Hand triage of every TileLang finding (KL2xx) on TileLang's upstream examples.

Usage: python benchmarks/triage_tilelang.py [--corpus DIR] [--out FILE]

Runs ``kernlint check --select KL2`` over the corpus (default ``../shared/corpora/tilelang``), matches
each finding to the verdict recorded below (``path:line rule`` -> real/false/unclear with the input
that triggers it or why it cannot happen), and writes the table with the counts before and after
(default ``benchmarks/results/tilelang_triage.md``). A finding without a verdict is listed as
``UNJUDGED`` and makes the script exit 1, as does a verdict for a finding no longer made (move it to
``RESOLVED`` with the reason), so the table cannot silently go stale.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: counts at the base commit a4ba319, before issue 21 (same command)
BEFORE = {"KL201": 33, "KL202": 2, "KL203": 35, "KL204": 3, "KL205": 0, "KL206": 0}
BEFORE_TRIAGE = "11 real, 59 false, 3 unclear (the issue's hand triage)"
#: counts of the previous table (705d7ae): 26 real, 1 false (KL203 on a varlen kernel), and two KL205 then
#: judged real that a second reading found unreachable (see RESOLVED)
PREVIOUS = {"KL201": 3, "KL202": 1, "KL203": 17, "KL204": 0, "KL205": 2, "KL206": 4}

_SEQ = ("seq_len = 1000 (not a multiple of block_N), non-causal: the `T.clear(acc_s)` branch feeds the "
        "zero-filled key tail to the max and, after exp2, to the row sum")
_SPLIT_TAIL = ("seqlen_kv = 1000, num_split = 4, block_N = 64: split length 250, the last split's 4th tile "
               "ends at 1006, 6 zero-filled keys reach the max/sum through `T.clear(acc_s)` + `T.gemm`")
_NOSPLIT = "seqlen_kv = 1000 (block_N = 64): the last tile's 24 zero-filled keys reach the max/sum unmasked"
_OVERLAP = ("seqlen_kv = 1000, num_split = 4, block_N = 64: split length 250 is walked in 4 tiles of 64, the "
            "last reads keys 250..255 of the next split, which are counted in two partials "
            "(seqlen_kv = 1001 also drops the last key)")

VERDICTS: dict[str, tuple[str, str]] = {
    "examples/autodd/tilelang_minimized_expected.py:36 KL201": (
        "real", "any input: the minimized repro allocates A_shared/B_shared/C_local and runs T.gemm with nothing "
        "writing any of them (C without clear_accum)"),
    "examples/dequantize_gemm/example_dequant_gemv_fp16xint4.py:135 KL202": (
        "real", "main(): accum_dtype float16, K = 1024: each thread sums 32 products across the ko loop in "
        "float16, then a float16 allreduce of 32 partials; the error grows with K"),
    "examples/amd/example_amd_flash_attn_fwd.py:210 KL203": ("real", _SEQ),
    "examples/blocksparse_attention/example_tilelang_block_sparse_attn.py:95 KL203": ("real", _SEQ),
    "examples/deepseek_mla/amd/benchmark_mla_decode_amd_tilelang.py:89 KL203": ("real", _SPLIT_TAIL),
    "examples/deepseek_mla/amd/benchmark_mla_decode_amd_tilelang.py:96 KL203": ("real", _SPLIT_TAIL),
    "examples/deepseek_mla/amd/benchmark_mla_decode_amd_tilelang.py:180 KL203": ("real", _NOSPLIT),
    "examples/deepseek_mla/amd/benchmark_mla_decode_amd_tilelang.py:187 KL203": ("real", _NOSPLIT),
    "examples/deepseek_mla/example_mla_decode.py:69 KL203": ("real", _SPLIT_TAIL),
    "examples/deepseek_mla/example_mla_decode.py:76 KL203": ("real", _SPLIT_TAIL),
    "examples/deepseek_mla/example_mla_decode.py:159 KL203": ("real", _NOSPLIT + " (main() uses 8192)"),
    "examples/deepseek_mla/example_mla_decode.py:166 KL203": ("real", _NOSPLIT + " (main() uses 8192)"),
    "examples/deepseek_mla/example_mla_decode_persistent.py:87 KL203": (
        "real", "seqlen_kv = 1000, num_split = 2 (main), block_N = 64: the last split's 8th tile ends at 1012, "
        "12 zero-filled keys reach the max"),
    "examples/deepseek_mla/experimental/example_mla_decode_kv_fp8.py:69 KL203": ("real", _NOSPLIT),
    "examples/deepseek_mla/experimental/example_mla_decode_kv_fp8.py:76 KL203": ("real", _NOSPLIT),
    "examples/flash_decoding/example_mha_inference.py:78 KL203": (
        "real", "non-causal, seqlen_kv = 1000, num_split = 4, block_N = 128: the last split's 2nd tile ends at "
        "1006, 6 zero-filled keys reach the max/sum"),
    "examples/flash_decoding/example_mha_inference.py:93 KL203": (
        "real", "as line 78: the same zero-filled keys become exp2(0 - max) terms of the row sum"),
    "examples/seer_attention/block_sparse_attn_tilelang.py:95 KL203": ("real", _SEQ),
    "examples/deepseek_mla/amd/benchmark_mla_decode_amd_tilelang.py:79 KL206": ("real", _OVERLAP),
    "examples/deepseek_mla/example_mla_decode.py:59 KL206": ("real", _OVERLAP + " (main() uses num_split = 1)"),
    "examples/flash_decoding/example_gqa_decode.py:102 KL206": (
        "real", "seqlen_kv = 1000, num_split = 4, block_N = 128: valid_block_N = min(128, 250) = 128, tiles "
        "0..127 and 128..255 of each split; the mask `j < seqlen_kv // num_split` only tests the tile-local "
        "column, so keys 250..255 of the next split are counted twice"),
    "examples/flash_decoding/example_mha_inference.py:63 KL206": (
        "real", "non-causal, seqlen_kv = 1000, num_split = 4, block_N = 128: split length 250, the 2nd tile "
        "reads keys 250..255 of the next split (counted twice)"),
}

#: findings of the previous table (false on hand triage) that the analysis no longer makes, and why
RESOLVED: dict[str, str] = {
    "examples/block_causal_attention/block_causal_attention_varlen.py:92 KL203": (
        "false: the K tile starts at `cu_seqlens[bz] + (r + s) * block_size` with `r = (len // 2) // block_size`, "
        "and the loop and the `if bx < 2 * r` keep `s < r`, so every tile ends by `cu_seqlens[bz] + 2 * r * "
        "block_size <= cu_seqlens[bz + 1]` whatever the lengths are (the host's multiple-of-2*block_size assert is "
        "not needed for that; only a valid `cu_seqlens`). A tile placed by a loaded offset is "
        "now judged only when its walk counts tiles with `T.ceildiv(L, B)` (fixtures packed_sequence_tail_*)"),
    "examples/dequantize_gemm/example_dequant_gemm_fine_grained.py:334 KL205": (
        "false: `reduced_accum_res = T.alloc_local(0, ...)` is only touched under `if reduce_k > 1:`, and the factory "
        "fixes `reduce_k = 1`; TileLang's parser drops that branch (lowered on CPU, neither the buffer nor the access "
        "is in the CUDA). Accesses under a compile-time false condition are no longer judged (fixtures "
        "compiled_out_branch_*)"),
    "examples/dequantize_gemm/example_dequant_gemm_fine_grained.py:340 KL205": ("false: as line 334"),
}


def run(corpus: Path) -> list[dict]:
    cmd = [sys.executable, "-m", "kernlint", "check", str(corpus), "--select", "KL2", "--output-format", "json",
           "--exit-zero"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=ROOT)
    return json.loads(out.stdout)["findings"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpora" / "tilelang")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "tilelang_triage.md")
    args = ap.parse_args()
    findings = run(args.corpus)
    rows, unjudged = [], []
    for f in sorted(findings, key=lambda f: (f["rule"], f["path"], f["line"])):
        rel = Path(f["path"]).resolve().relative_to(args.corpus.resolve()).as_posix()
        key = f"{rel}:{f['line']} {f['rule']}"
        verdict, why = VERDICTS.get(key, ("UNJUDGED", ""))
        if verdict == "UNJUDGED":
            unjudged.append(key)
        rows.append((f"`{rel}:{f['line']}`", f["rule"], f["level"], verdict, why))
    after = Counter(f["rule"] for f in findings)
    verdicts = Counter(r[3] for r in rows)
    lines = [
        "# Hand triage of the TileLang rules on TileLang's upstream examples",
        "",
        f"Corpus: `../shared/corpora/tilelang` (285 example files). Command: `kernlint check "
        f"../shared/corpora/tilelang --select KL2`; table regenerated by `python benchmarks/triage_tilelang.py`.",
        "Every finding was read by hand against TileLang's sources; \"real\" names an input that triggers it.",
        "",
        "## Counts",
        "",
        "| rule | before (a4ba319) | previous table (705d7ae) | after |",
        "|---|---|---|---|",
    ]
    for code in sorted(set(BEFORE) | set(after)):
        lines.append(f"| {code} | {BEFORE.get(code, 0)} | {PREVIOUS.get(code, 0)} | {after.get(code, 0)} |")
    lines += [
        f"| total | {sum(BEFORE.values())} | {sum(PREVIOUS.values())} | {sum(after.values())} |",
        "",
        f"Before: {BEFORE_TRIAGE}. After: " + ", ".join(f"{n} {v}" for v, n in sorted(verdicts.items()))
        + f" -- {100 * verdicts['real'] / max(len(rows), 1):.0f}% real.",
        "",
        "Assumptions the rules made: sizes that are parameters of a kernel's factory can be any value unless an "
        "`assert` says otherwise (call sites are examples); parameters `@tilelang.autotune` chooses take the "
        "tuner's values, not their defaults; KL204 judges the GPU the module names (explicit target, "
        "architecture-only intrinsics, the file's architecture name), otherwise an A100; a tile whose start adds an "
        "offset read from memory (`cu_seqlens[b]`) is judged by its walk (`T.ceildiv(L, B)` steps), not against the "
        "tensor's end; a statement under an `if` that is false at compile time in every configuration is not "
        "generated and not judged.",
        "",
        "## Findings",
        "",
        "| file:line | rule | level | verdict | input that triggers it / why it cannot happen |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| {a} | {b} | {c} | {d} | {e} |" for a, b, c, d, e in rows]
    found = {f"{r[0].strip('`')} {r[1]}" for r in rows}
    lines += ["", "## No longer reported", "",
              "Findings of the previous table that the analysis no longer makes (hand verdict and the fix).", "",
              "| file:line | rule | verdict, and why it is gone |", "|---|---|---|"]
    for key, why in RESOLVED.items():
        where, code = key.rsplit(" ", 1)
        lines.append(f"| `{where}` | {code} | {why}{' (STILL REPORTED)' if key in found else ''} |")
    stale = sorted(set(VERDICTS) - found)
    args.out.write_text("\n".join(lines) + "\n")
    for key in unjudged:
        print("UNJUDGED", key)
    for key in stale:
        print("STALE (verdict for a finding no longer made)", key)
    print(f"{len(rows)} findings, {dict(verdicts)} -> {args.out}")
    return 1 if unjudged or stale else 0


if __name__ == "__main__":
    sys.exit(main())

"""The GPU a TileLang module is written for, from what the module itself says.

In order: an explicit target string (``@tilelang.jit(target="hip -mcpu=gfx950")``,
``tvm.target.Target("cuda -arch=sm_90a")``, ``tilelang.compile(..., target=...)``); intrinsics only
one architecture has (``T.wgmma_gemm``/TMA/``mbarrier`` ops: sm_90, ``tcgen05``/``tmem``/cluster
launch control: sm_100); the architecture the file is named for (``*_hopper.py``, ``*_sm90.py``,
``*_cdna4.py``). Without any of these the target is unknown and rules say what they assumed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from kernlint.source.discover import ModuleInfo

#: largest shared memory (LDS on AMD) one block may use, in bytes
SHARED_LIMIT = {
    "sm_80": 163 * 1024, "sm_86": 99 * 1024, "sm_89": 99 * 1024, "sm_90": 227 * 1024, "sm_100": 227 * 1024,
    "sm_120": 99 * 1024, "gfx90a": 64 * 1024, "gfx942": 64 * 1024, "gfx950": 160 * 1024,
}
_SM90_OPS = ("wgmma", "tma_", "warpgroup", "set_max_nreg", "create_tma_descriptor", "fence_proxy_async")
_SM100_OPS = ("tcgen05", "tmem", "clc_", "utccp")
_NAME_HINTS = (
    (re.compile(r"(hopper|sm_?90a?|h100|h800|h20)\b"), "sm_90"),
    (re.compile(r"(blackwell|sm_?100a?|b200|tcgen0?5)\b"), "sm_100"),
    (re.compile(r"(ampere|sm_?80|a100)\b"), "sm_80"),
    (re.compile(r"(cdna4|gfx950|mi35\d)\b"), "gfx950"),
    (re.compile(r"(cdna3|gfx942|mi30\d)\b"), "gfx942"),
)


@dataclass(frozen=True)
class Target:
    arch: str | None  # sm_90, gfx950, ... or None when unknown
    why: str

    @property
    def shared_limit(self) -> int | None:
        return SHARED_LIMIT.get(self.arch or "")


def _from_string(text: str) -> str | None:
    text = text.lower()
    m = re.search(r"gfx\d+[a-z]?", text)
    if m:
        return m.group(0) if m.group(0) in SHARED_LIMIT else "gfx942"
    if "hip" in text or "rocm" in text:
        return "gfx942"
    m = re.search(r"sm_(\d+)", text)
    if m:
        arch = f"sm_{m.group(1)}"
        return arch if arch in SHARED_LIMIT else None
    return None


def module_target(info: ModuleInfo) -> Target:
    cached = getattr(info, "_tilelang_target", None)
    if cached is not None:
        return cached
    target = _infer(info)
    info._tilelang_target = target  # type: ignore[attr-defined]
    return target


_TARGET_TEXT = re.compile(r"""(?:\btarget\s*=\s*|target\.Target\(\s*)(["'])(?P<text>[^"']+)\1""")
_CALLED = re.compile(r"\.\s*([A-Za-z_]\w*)\s*\(")


def _infer(info: ModuleInfo) -> Target:
    # read from the text: a whole-tree walk per module costs more than every rule together
    for m in _TARGET_TEXT.finditer(info.source):
        arch = _from_string(m.group("text"))
        if arch:
            return Target(arch, f"target {m.group('text')!r}")
    called = set(_CALLED.findall(info.source))
    for prefixes, arch in ((_SM100_OPS, "sm_100"), (_SM90_OPS, "sm_90")):
        used = sorted(op for op in called if any(p in op for p in prefixes))
        if used:
            return Target(arch, f"it calls {used[0]}")
    stem = Path(info.path).stem.lower()
    for pattern, arch in _NAME_HINTS:
        if pattern.search(stem.replace("-", "_")):
            return Target(arch, f"the file is named for {arch}")
    return Target(None, "no target in the module")

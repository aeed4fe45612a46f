"""Property-based: odd and broken input never crashes the source phase."""

import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernlint.source.phase import lint_text
from tests.helpers import source_rules

RULES = source_rules()
KERNEL_BITS = [
    "import triton\nimport triton.language as tl\n",
    "@triton.jit\n",
    "@triton.autotune(configs=[], key=[])\n",
    "@triton.heuristics({'E': lambda a: True})\n",
    "@triton.jit(do_not_specialize=[0])\n",
    "def k(x_ptr, n, B: tl.constexpr):\n",
    "    pid = tl.program_id(0)\n",
    "    o = pid * B + tl.arange(0, B)\n",
    "    o2 = o[:, None] + o[None, :]\n",
    "    x = tl.load(x_ptr + o, mask=o < n)\n",
    "    tl.store(x_ptr + o2, x)\n",
    "    for i in range(0, n, B):\n",
    "        x += tl.load(x_ptr + i + o)\n",
    "    if x > 0:\n",
    "    while pid < n:\n",
    "        pid += 1\n",
    "    tl.store(x_ptr, tl.sum(x))\n",
    "    a, b = x, o\n",
    "    return\n",
    "        pass\n",
    "    x = tl.load(x_ptr + o[None, None, :], mask=(o < n)[:, None], other=0)\n",
    "    y = tl.where(o < n, x, 0) % n\n",
    "    z = x.to(tl.int64) * B if B else o\n",
    "    tl.atomic_add(x_ptr + o, 1)\n",
    "    p = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (B,), (0,))\n",
    "    q = tl.load(p, boundary_check=(0,))\n",
    "k2 = triton.jit(k)\n",
    "    lambda: 0\n",
    "    x[1:2, ...]\n",
    "\t\n",
    "\\\n",
    "(((\n",
]


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(KERNEL_BITS), min_size=1, max_size=25))
def test_random_kernel_fragments_never_crash(parts):
    text = "".join(parts)
    result, _ = lint_text("f.py", text, RULES)
    for f in result.findings:
        assert f.span.line >= 1 and f.span.col >= 1
    for e in result.errors:
        assert e.line >= 1 and e.message


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.binary(max_size=400))
def test_random_bytes_never_crash(data):
    lint_text("f.py", b"import triton\n" + data, RULES)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.text(alphabet=string.printable + "éλ中\u2028\x00", max_size=300))
def test_random_text_never_crashes(text):
    lint_text("f.py", "import triton\n@triton.jit\ndef k(x):\n" + text, RULES)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(["utf-8", "utf-16", "latin-1", "cp1252"]))
def test_encodings(encoding):
    src = "# -*- coding: %s -*-\nimport triton\n@triton.jit\ndef k(x):\n    s = 'é'\n" % encoding
    try:
        data = src.encode(encoding)
    except UnicodeEncodeError:
        return
    lint_text("f.py", data, RULES)


def test_huge_and_deep_files():
    big = "import triton\nimport triton.language as tl\n" + "".join(
        f"@triton.jit\ndef k{i}(x, n, B: tl.constexpr):\n    o = tl.program_id(0) * B + tl.arange(0, B)\n"
        f"    tl.store(x + o, tl.load(x + o, mask=o < n), mask=o < n)\n" for i in range(2000)
    )
    result, _ = lint_text("big.py", big, RULES)
    assert len(result.kernels) == 2000 and result.findings == []
    deep = "import triton\nx = " + "(" * 5000 + "1" + ")" * 5000 + "\n"
    result, _ = lint_text("deep.py", deep, RULES)
    assert result.errors and result.errors[0].message

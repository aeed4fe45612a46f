"""Valid code nested deeper than Python's recursion limit: the kernel is reported as too complex
(a notice), the file's other kernels and the other files are still linted."""

import pytest

from kernlint.check import Options, run_check
from kernlint.config import Config

HEADER = "import torch\nimport triton\nimport triton.language as tl\n\n\n"
OK = HEADER + '''@triton.jit
def plain(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, x)


def launch_plain():
    x = torch.empty(100)
    plain[(4,)](x, 100, BLOCK=64)  # 4 blocks of 64 over 100 elements, unmasked: a finding to keep
'''
KERNEL = '''@triton.jit
def deep(x_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
{body}
'''
SUM = "    x = tl.load(x_ptr + offs)\n    tl.store(x_ptr + offs, " + " + ".join(["x"] * 1000) + ")"
MASK = "    tl.store(x_ptr + offs, 1.0, mask=" + " & ".join(["(offs < 10)"] * 1000) + ")"
ELIF = ("    if pid == 0:\n        v = 0\n" + "".join(f"    elif pid == {i}:\n        v = {i}\n" for i in range(1, 1000))
        + "    tl.store(x_ptr + offs, v)")


@pytest.mark.parametrize("body", [SUM, MASK, ELIF], ids=["sum", "mask", "elif"])
def test_deep_kernels_are_notices_and_the_rest_is_linted(tmp_path, body):
    (tmp_path / "deep.py").write_text(OK + "\n\n" + KERNEL.format(body=body))
    (tmp_path / "other.py").write_text(OK)
    result = run_check([tmp_path / "deep.py", tmp_path / "other.py"], Config(root=tmp_path), Options())
    assert result.errors == []
    assert sorted({(f.path, f.kernel) for f in result.findings}) == [("deep.py", "plain"), ("other.py", "plain")]
    assert any("deep.py: kernel deep is too complex" in n for n in result.notices), result.notices


def test_a_host_function_with_a_thousand_elifs_keeps_its_launch_facts(tmp_path):
    import libcst as cst

    from kernlint.source.discover import discover

    chain = "".join(f"    elif n == {i}:\n        block = {i}\n" for i in range(1, 1000))
    host = f"\n\ndef launch(x, n):\n    block = 64\n    if n == 0:\n        block = 0\n{chain}    plain[(1,)](x, n, 128)\n"
    src = OK + host
    (launch,) = [la for la in discover("m.py", src, cst.parse_module(src)).facts.launches if la.caller == "launch"]
    assert launch.value("BLOCK").value == 128

"""One registry: rules by phase and code; the IR cache hangs on every IR rule's module."""

from pathlib import Path

from kernlint.catalogue import all_rules
from kernlint.model import Phase
from kernlint.registry import for_phase, rule_files


def test_for_phase_filters_by_phase_and_codes():
    for phase in Phase:
        assert all(r.phase is phase for r in for_phase(phase))
    assert sum(len(for_phase(p)) for p in Phase) == len(all_rules())
    assert [r.code for r in for_phase(Phase.SOURCE, {"KL101", "KL303", "kl102"})] == ["KL101", "KL102"]


def test_the_ir_fingerprint_covers_every_ir_rule_module(monkeypatch, tmp_path):
    import kernlint.registry as registry
    from kernlint.ir import phase as ir_phase

    files = rule_files(Phase.IR)
    assert {Path(f).name for f in files} >= {"kl303_ir_register_spill.py"}
    extra = tmp_path / "kl999_a_rule_named_anyhow.py"
    extra.write_text("A = 1\n")
    monkeypatch.setattr(registry, "rule_files", lambda phase: [*files, extra])
    ir_phase._code_fingerprint.cache_clear()
    before = ir_phase._code_fingerprint()
    extra.write_text("A = 2\n")
    ir_phase._code_fingerprint.cache_clear()
    assert ir_phase._code_fingerprint() != before
    ir_phase._code_fingerprint.cache_clear()

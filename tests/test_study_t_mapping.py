"""The TritonBench-T answer rows against their tasks (benchmarks/study_t/mapping.py)."""

import json
from pathlib import Path

import pytest

from kernlint.eval.worker import load_module as load_script

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpora" / "tritonbench"


def _mapping():
    return load_script(ROOT / "benchmarks" / "study_t" / "mapping.py", "study_t_mapping")


def _task(folder: Path, name: str, entry: str, description: str) -> dict:
    (folder / f"{name}.py").write_text(f"import torch\n\ndef {entry}(x):\n    return x * 2\n\n"
                                       f"{'#' * 20}\n\ndef test_{name}():\n    return {{'a': {entry}(torch.ones(3))}}\n")
    return {"name": f"torch.{name}", "description": description, "file": f"{name}.py", "func_inputs": ""}


def _instruction(description: str, signature: str) -> str:
    return f"Write a kernel.\nFunctional Description: {description}\nWrapper Entry Information: {signature}\n"


def test_rows_that_answer_another_task_or_name_another_function_do_not_map(tmp_path):
    ref_dir = tmp_path / "T_list"
    ref_dir.mkdir()
    tasks = [_task(ref_dir, "double", "double", "Doubles every element of the input tensor."),
             _task(ref_dir, "twice", "twice_custom", "Multiplies the input by two, elementwise, twice over."),
             _task(ref_dir, "scale", "scale", "Scales a tensor by a constant factor of two.")]
    (tmp_path / "T_list.jsonl").write_text(json.dumps(tasks))
    code = "```python\ndef {}(x):\n    return x + x\n```"
    rows = [  # row 0 answers task 0; row 1 quotes task 2's description; row 2 names the wrong function
        {"instruction": _instruction(tasks[0]["description"], "double(x) -> Tensor"), "predict": code.format("double")},
        {"instruction": _instruction(tasks[2]["description"], "scale(x) -> Tensor"), "predict": code.format("scale")},
        {"instruction": _instruction(tasks[2]["description"], "x (Tensor): the input"), "predict": "def scale(:"},
    ]
    answers = tmp_path / "output_m.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    m = _mapping()
    from kernlint.eval.problems import load_problems

    got = m.map_rows(load_problems(tmp_path / "T_list.jsonl"), answers)
    assert [r.maps for r in got] == [True, False, False]
    assert got[0].defines_entry is True and got[0].task_name_verbatim is False  # "torch.double" is not quoted
    assert got[1].description == "remapped from twice" and got[1].named == "scale" and got[1].entry == "twice_custom"
    assert "names `scale`" in got[1].why_not()
    assert got[2].named == "" and "names no function" in got[2].why_not()
    assert got[2].defines_entry is None  # the answer does not parse


@pytest.mark.skipif(not (CORPUS / "T" / "TritonBench_T_v1.jsonl").is_file(), reason="TritonBench corpus not present")
def test_the_corpus_rows_map_by_index_and_the_committed_table_is_regenerated():
    m = _mapping()
    from kernlint.eval.problems import load_problems

    problems = load_problems(CORPUS / "T" / "TritonBench_T_v1.jsonl")
    for answers in sorted((CORPUS / "llm_T").glob("output_*.jsonl")):
        rows = m.map_rows(problems, answers)
        assert len(rows) == len(problems) == 166
        # every instruction quotes the description of the task at its index and of no other task
        assert all(r.description == "checked" and r.quoted_by == 1 for r in rows), answers.name
        assert sum(r.task_name_verbatim for r in rows) == 105  # the count
        assert {r.task for r in rows if not r.maps} <= {"mean", "solve", "quantize_dynamic"}
    assert m.render(CORPUS) == (ROOT / "docs" / "study-t" / "mapping.md").read_text(), \
        "run: python benchmarks/study_t/mapping.py"

"""TritonBench-T: tasks from the JSON task list and its reference folder, answers mapped by row order and
checked against the description their instruction quotes."""

import json

import pytest

from kernlint.eval.problems import load_candidates, load_problems, mapping_report


REF = '''import torch

def {fn}(x):
    """{desc}"""
    return torch.{fn}(x)

##########

import torch

def test_{fn}():
    return {{"case": {fn}(torch.ones(3))}}

test_results = test_{fn}()
'''


def _tasks(tmp_path, names):
    folder = tmp_path / "T_v1"
    folder.mkdir()
    tasks = []
    for name in names:
        desc = f"Computes the {name} of every element of the input tensor."
        (folder / f"{name}.py").write_text(REF.format(fn=name, desc=desc))
        tasks.append({"name": f"torch.{name}", "description": desc, "file": f"{name}.py", "difficulty": "1"})
    listing = tmp_path / "T_v1.jsonl"  # a JSON list despite the name, as TritonBench-T ships it
    listing.write_text(json.dumps(tasks))
    return listing, tasks


def _answers(tmp_path, instructions):
    path = tmp_path / "output_model.jsonl"
    path.write_text("".join(json.dumps({"instruction": i, "predict": "def f():\n    pass\n", "label": ""}) + "\n"
                            for i in instructions))
    return path


def test_task_list_loads_references_in_task_order(tmp_path):
    listing, _ = _tasks(tmp_path, ["tanh", "abs", "sqrt"])
    probs = load_problems(listing)
    assert list(probs) == ["tanh", "abs", "sqrt"]
    tanh = probs["tanh"]
    assert tanh.kind == "tritonbench" and tanh.test_function == "test_tanh"
    assert "test_results = test_tanh()" in tanh.test_code and "#####" not in tanh.source
    assert tanh.meta["entry"] == "tanh" and tanh.meta["row"] == 0 and tanh.meta["name"] == "torch.tanh"


def test_answers_are_checked_against_the_description_they_quote(tmp_path):
    listing, tasks = _tasks(tmp_path, ["tanh", "abs", "sqrt"])
    probs = load_problems(listing)
    answers = _answers(tmp_path, [
        f"Functional Description: {tasks[0]['description']}\nWrapper Entry Information: tanh(x)",
        f"Functional Description: {tasks[2]['description']}",  # row 1 answers the third task
        "Functional Description: something no task describes",
    ])
    cands = load_candidates(answers, probs)
    assert [(c.problem_id, c.meta["mapping"]) for c in cands] == [
        ("tanh", "checked"), ("sqrt", "remapped from abs"), ("sqrt", "unmapped")]
    report = mapping_report(cands)
    assert report == ["output_model.jsonl:2: remapped from abs -> sqrt", "output_model.jsonl:3: unmapped -> sqrt"]


def test_a_task_list_without_its_reference_folder_is_a_clear_error(tmp_path):
    listing, _ = _tasks(tmp_path, ["abs"])
    (tmp_path / "T_v1" / "abs.py").unlink()
    with pytest.raises(ValueError, match="reference file 'abs.py' not found"):
        load_problems(listing)
    (tmp_path / "T_v1").rmdir()
    with pytest.raises(ValueError, match="reference folder T_v1/ is not beside it"):
        load_problems(listing)


def test_the_tritonbench_t_corpus_loads_and_every_answer_maps(corpus):
    probs = load_problems(corpus / "T" / "TritonBench_T_v1.jsonl")
    assert len(probs) == 166
    assert all(p.test_function and p.meta["entry"] for p in probs.values())
    for answers in sorted((corpus / "llm_T").glob("output_*.jsonl")):
        cands = load_candidates(answers, probs)
        assert len(cands) == 166
        assert mapping_report(cands) == [], answers.name
        assert [c.problem_id for c in cands] == list(probs)

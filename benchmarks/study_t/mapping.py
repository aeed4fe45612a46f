"""How each TritonBench-T answer row maps to a task, by index, by description and by name.

The answer files hold one row per task in task order, but not every instruction names the task's
function verbatim (the task's ``name`` is often the dotted torch name, e.g. ``torch.div``). A row
is checked three ways against the task at its index:

- description: the instruction quotes the task's description, and no other task's
  (``kernlint.eval.problems.map_by_instruction``, which ``kernlint eval`` applies when loading);
- name: the function the instruction's "Wrapper Entry Information" names is the reference's
  entry function (its last top-level ``def``, the one the task's test calls);
- the answer's code defines that entry function at top level (else the test cannot call it).

A row "maps" when the first two hold. Writes docs/study-t/mapping.md:

    python benchmarks/study_t/mapping.py [CORPUS_DIR]
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks" / "study"))
from kernlint.eval.problems import Problem, _words, load_candidates, load_problems  # noqa: E402
from study_common import column_header, column_row  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpora" / "tritonbench"
OUT = ROOT / "docs" / "study-t" / "mapping.md"
#: the function signature the instruction asks for, e.g. "Wrapper Entry Information: def linalg.eig(A, ..."
#: (a parameter list such as "input (Tensor): ..." names no function: no space before the parenthesis)
WRAPPER = re.compile(r"Wrapper Entry Information:\s*(?:def\s+)?([A-Za-z_][\w.]*)\(")


@dataclass
class RowMapping:
    row: int
    task: str  # the task at the row's index
    description: str  # kernlint's mapping verdict: checked / remapped from ... / unmapped / row-order
    quoted_by: int  # how many tasks' descriptions the instruction quotes
    named: str  # the wrapper name the instruction gives ("" when it gives none)
    entry: str  # the reference's entry function
    task_name_verbatim: bool  # the task's ``name`` field appears in the instruction
    defines_entry: bool | None  # the answer defines the entry function; None: the answer does not parse

    @property
    def name_matches(self) -> bool:
        return self.named.rsplit(".", 1)[-1] == self.entry

    @property
    def maps(self) -> bool:
        return self.description == "checked" and self.quoted_by == 1 and self.name_matches

    def why_not(self) -> str:
        why = []
        if self.description != "checked" or self.quoted_by != 1:
            why.append(f"description: {self.description}, quoted by {self.quoted_by} tasks")
        if not self.name_matches:
            why.append(f"the instruction names `{self.named}`" if self.named else "the instruction names no function")
        return "; ".join(why)


def top_level_names(code: str) -> set[str] | None:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def _quotes(instruction: str, prob: Problem) -> bool:
    desc = _words(str(prob.meta.get("description", "")))
    return bool(desc) and desc[:300] in instruction


def map_rows(problems: dict[str, Problem], answers: Path) -> list[RowMapping]:
    """One RowMapping per answer row of ``answers`` (a JSONL with ``instruction``), against ``problems``
    (a TritonBench-T task list in its order)."""
    import json

    ids = list(problems)
    rows = [json.loads(x) for x in answers.read_text().splitlines() if x.strip()]
    cands = load_candidates(answers, problems)
    out = []
    for i, (row, cand) in enumerate(zip(rows, cands)):
        task = ids[i] if i < len(ids) else f"row{i}"
        prob = problems.get(task)
        instruction = str(row.get("instruction", ""))
        text = _words(instruction)
        named = WRAPPER.search(instruction)
        entry = prob.meta.get("entry", "") if prob else ""
        names = top_level_names(cand.source)
        out.append(RowMapping(
            row=i, task=task, description=str(cand.meta.get("mapping", "row-order")),
            quoted_by=sum(_quotes(text, p) for p in problems.values()),
            named=named.group(1) if named else "", entry=entry,
            task_name_verbatim=bool(prob and str(prob.meta.get("name") or "") in instruction),
            defines_entry=None if names is None else entry in names))
    return out


def model_name(answers: Path) -> str:
    return answers.stem.removeprefix("output_")


def render(corpus: Path) -> str:
    problems = load_problems(corpus / "T" / "TritonBench_T_v1.jsonl")
    files = sorted((corpus / "llm_T").glob("output_*.jsonl"))
    by_model = {model_name(f): map_rows(problems, f) for f in files}
    models = list(by_model)

    def row(label: str, fn) -> str:
        return column_row(label, by_model, fn)

    lines = [
        "# TritonBench-T: which task each answer row answers",
        "",
        "Generated by `python benchmarks/study_t/mapping.py` from the corpus (`T/TritonBench_T_v1.jsonl`,",
        "`llm_T/output_<model>.jsonl`); the method is in that script's docstring. Row *i* of an answer file",
        "is taken to answer task *i*; a row maps when its instruction quotes that task's description (and",
        "no other task's) and names the reference's entry function as the wrapper to write.",
        "",
        *column_header(by_model),
        row("answer rows", len),
        row("tasks in the list", lambda rs: len(problems)),
        row("description of the task at the row's index quoted (kernlint: `checked`)",
            lambda rs: sum(r.description == "checked" for r in rs)),
        row("&nbsp;&nbsp;of which the instruction quotes exactly one task's description",
            lambda rs: sum(r.description == "checked" and r.quoted_by == 1 for r in rs)),
        row("task's `name` field verbatim in the instruction", lambda rs: sum(r.task_name_verbatim for r in rs)),
        row("instruction names the reference's entry function", lambda rs: sum(r.name_matches for r in rs)),
        row("**rows that map** (description and name)", lambda rs: sum(r.maps for r in rs)),
        row("answer defines the entry function at top level", lambda rs: sum(bool(r.defines_entry) for r in rs)),
        row("answer's code does not parse", lambda rs: sum(r.defines_entry is None for r in rs)),
        "",
        "The task's `name` field is the PyTorch name (`torch.div`, `torch.nn.functional.relu`), while the",
        "instruction gives the bare function (`div(input, other, ...)`), so a verbatim search for `name`",
        "misses rows that do answer their task.",
        "",
        "## Rows that do not map",
        "",
        "| model | row | task at the index | reference's entry function | why |",
        "|---|---:|---|---|---|",
    ]
    for m in models:
        lines += [f"| {m} | {r.row} | `{r.task}` | `{r.entry}` | {r.why_not()} |" for r in by_model[m] if not r.maps]
    lines += ["", "Those rows are still evaluated against the task at their index (the description confirms it);",
              "an answer that names its wrapper differently fails at the call, like in TritonBench.", "",
              "## Answers that do not define the entry function", "",
              "Their test cannot call them (an interface failure, TritonBench's call accuracy); *unparsed*: the",
              "answer's code is not valid Python.", ""]
    for m in models:
        miss = [f"`{r.task}`" + (" (unparsed)" if r.defines_entry is None else "")
                for r in by_model[m] if not r.defines_entry]
        lines.append(f"- {m} ({len(miss)}): " + (", ".join(miss) or "none"))
    lines.append("")
    return "\n".join(lines)


def main(corpus: Path = CORPUS, out: Path = OUT) -> str:
    if not (corpus / "T" / "TritonBench_T_v1.jsonl").is_file():
        raise SystemExit(f"{corpus}: no T/TritonBench_T_v1.jsonl (give the TritonBench corpus folder)")
    text = render(corpus)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    return text


if __name__ == "__main__":
    print(main(Path(sys.argv[1]) if len(sys.argv) > 1 else CORPUS))

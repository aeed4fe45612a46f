"""Problems (the reference) and candidates (the answers), loaded without importing them.

Two problem styles:

- **KernelBench**: a module with ``class Model(nn.Module)``, ``get_inputs()`` and
  ``get_init_inputs()``; candidates define ``ModelNew`` with the same constructor and forward.
- **TritonBench**: a module of kernels + wrapper, then a separator line of ``#####`` and test code
  with a ``test_*`` function returning a dict (or tensor, list) of results. The candidate is run
  with the reference's test code appended, as TritonBench does, and the returned tensors are
  compared. TritonBench-G gives the references as a JSON list (``output``); TritonBench-T as a JSON
  list of tasks (``name``, ``description``, ``file``) whose reference files (PyTorch, then
  ``#####`` and the test) lie in the folder named like the list, beside it.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

SEPARATOR = re.compile(r"^#{5,}\s*$", re.MULTILINE)
FENCE = re.compile(r"```(?:python|py|Python)?[ \t]*\n(.*?)```", re.DOTALL)
TEST_FN = re.compile(r"^def (test_\w*)\s*\(\s*\)\s*:", re.MULTILINE)


@dataclass
class Problem:
    id: str
    kind: str  # "kernelbench" | "tritonbench"
    source: str  # the reference module (TritonBench: without the test code)
    test_code: str = ""
    test_function: str = ""
    path: str = ""
    #: optional bookkeeping (e.g. the dataset row)
    meta: dict = field(default_factory=dict)

    def to_job(self) -> dict:
        return {"id": self.id, "kind": self.kind, "source": self.source, "test_code": self.test_code,
                "test_function": self.test_function, "path": self.path, "entry": self.meta.get("entry", "")}


@dataclass
class Candidate:
    id: str
    problem_id: str
    source: str
    origin: str = ""
    meta: dict = field(default_factory=dict)

    @property
    def sha(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()[:16]


def split_tritonbench(text: str) -> tuple[str, str, str]:
    """(kernel code, test code, test function name); empty test parts when there is no separator."""
    matches = list(SEPARATOR.finditer(text))
    for m in reversed(matches):
        tail = text[m.end():]
        fn = TEST_FN.search(tail)
        if fn:
            return text[: m.start()], tail, fn.group(1)
    return text, "", ""


def problem_kind(text: str) -> str:
    if re.search(r"^class Model\s*\(", text, re.MULTILINE) and "def get_inputs" in text:
        return "kernelbench"
    return "tritonbench"


def problem_from_text(pid: str, text: str, path: str = "") -> Problem:
    kind = problem_kind(text)
    if kind == "kernelbench":
        return Problem(pid, kind, text, path=path)
    code, test, fn = split_tritonbench(text)
    return Problem(pid, kind, code, test_code=test, test_function=fn, path=path)


def attach_tests(problems: dict[str, Problem], tests_dir: str | Path) -> int:
    """Supply TritonBench test code kept apart from the references: ``<problem_id>.py`` in
    ``tests_dir`` holds what would follow the ``#####`` line. Returns how many problems got one."""
    tests_dir = Path(tests_dir)
    n = 0
    for pid, prob in problems.items():
        f = tests_dir / f"{pid}.py"
        if prob.kind != "tritonbench" or not f.is_file():
            continue
        text = f.read_text()
        fn = TEST_FN.search(text)
        if not fn:
            raise ValueError(f"{f}: no top-level 'def test_*():' function")
        prob.test_code, prob.test_function = text, fn.group(1)
        n += 1
    return n


def select_problems(problems: dict[str, Problem], spec: str) -> dict[str, Problem]:
    """Keep the problems named in ``spec``: comma-separated ids, or ``@file`` with one id per line
    (``#`` comments allowed), in that order. Unknown ids are an error."""
    if spec.startswith("@"):
        lines = Path(spec[1:]).read_text().splitlines()
        ids = [ln.split("#", 1)[0].strip() for ln in lines]
    else:
        ids = [x.strip() for x in spec.split(",")]
    ids = [i for i in ids if i]
    unknown = [i for i in ids if i not in problems]
    if unknown:
        raise ValueError(f"unknown problem id(s): {', '.join(unknown[:5])}")
    return {i: problems[i] for i in ids}


def _tritonbench_t_problem(row: dict, i: int, ref_dir: Path, list_name: str) -> Problem:
    ref = ref_dir / row["file"]
    if not ref.is_file():
        raise ValueError(f"{list_name} row {i}: reference file {row['file']!r} not found in {ref_dir}")
    prob = problem_from_text(Path(row["file"]).stem, ref.read_text(), str(Path(ref_dir.name) / row["file"]))
    if not prob.test_function:
        raise ValueError(f"{ref}: no '#####' line followed by a 'def test_*():' function")
    prob.meta = {"row": i, "file": row["file"], "name": row.get("name"), "difficulty": row.get("difficulty"),
                 "description": str(row.get("description") or ""), "entry": entry_function(prob.source)}
    return prob


def entry_function(source: str) -> str:
    """The function a TritonBench-T task asks for: the reference's last top-level ``def``."""
    names = re.findall(r"^def (\w+)\s*\(", source, re.MULTILINE)
    return names[-1] if names else ""


def load_problems(path: str | Path) -> dict[str, Problem]:
    """A problem file, a folder of ``*.py`` problems, a TritonBench-G JSON list (field ``output``) or a
    TritonBench-T task list (fields ``file`` and ``description``; the references in the folder beside it
    named like the list), in the list's order."""
    path = Path(path)
    out: dict[str, Problem] = {}
    if path.is_dir():
        for p in sorted(path.glob("*.py")):
            out[p.stem] = problem_from_text(p.stem, p.read_text(), str(p))
    elif path.suffix in (".json", ".jsonl"):
        try:
            rows = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from None
        if isinstance(rows, list) and rows and all(isinstance(r, dict) and "output" not in r and "file" in r
                                                   and "description" in r for r in rows):
            ref_dir = path.with_suffix("")
            if not ref_dir.is_dir():
                raise ValueError(f"{path}: a TritonBench-T task list, but its reference folder {ref_dir.name}/ "
                                 f"is not beside it")
            for i, row in enumerate(rows):
                prob = _tritonbench_t_problem(row, i, ref_dir, path.name)
                if prob.id in out:
                    raise ValueError(f"{path} row {i}: task file {row['file']!r} listed twice")
                out[prob.id] = prob
            return out
        if not isinstance(rows, list) or not all(isinstance(r, dict) and "output" in r for r in rows):
            raise ValueError(f"{path}: expected a TritonBench-G task list (objects with 'output', the reference "
                             f"module, and 'file') or a TritonBench-T one (objects with 'file' and 'description')")
        for i, row in enumerate(rows):
            pid = Path(row.get("file", f"task{i}")).stem
            if pid in out:
                pid = f"{pid}_{i}"
            prob = problem_from_text(pid, row["output"], f"{path.name}#{i}")
            prob.meta = {"row": i, "file": row.get("file"), "difficulty": row.get("difficulty")}
            out[pid] = prob
    else:
        out[path.stem] = problem_from_text(path.stem, path.read_text(), str(path))
    return out


def extract_code(answer: str) -> str:
    """The candidate module in a model's answer: the largest ```python block, else the text itself."""
    blocks = FENCE.findall(answer)
    if blocks:
        return max(blocks, key=len).strip() + "\n"
    return answer.strip() + "\n"


def load_candidates(path: str | Path, problems: dict[str, Problem]) -> list[Candidate]:
    """Candidates from a folder, one ``.py`` file, or a JSONL of model answers.

    Folder: ``<problem_id>.py`` or ``<problem_id>/<name>.py`` (or ``<problem_id>__<name>.py``).
    One file: laid out like that, or answering the only problem given.
    JSONL: one answer per line with ``predict``/``answer``/``completion``/``code`` and either a
    ``problem``/``problem_id`` field or, failing that, the row order of ``problems``.
    Raises ValueError (with the file and line) for input that is none of these.
    """
    path = Path(path)
    ids = list(problems)
    out: list[Candidate] = []
    if path.is_dir():
        for p in sorted(path.rglob("*.py")):
            rel = p.relative_to(path)
            if len(rel.parts) > 1:
                pid, name = rel.parts[0], p.stem
            elif "__" in p.stem:
                pid, name = p.stem.split("__", 1)
            else:
                pid, name = p.stem, "0"
            # the origin is kept relative to the folder given, so records read the same on every machine
            out.append(Candidate(f"{pid}/{name}", pid, p.read_text(), str(Path(path.name) / rel)))
        return out
    if path.suffix == ".py":
        pid, _, name = path.stem.partition("__")
        if pid not in problems and path.parent.name in problems:  # <problem_id>/<name>.py
            pid, name = path.parent.name, path.stem
        if pid not in problems:
            if len(problems) != 1:
                raise ValueError(f"{path}: cannot tell which problem this candidate answers: name it "
                                 f"<problem_id>.py or <problem_id>__<name>.py, or give one problem")
            pid, name = ids[0], path.stem
        return [Candidate(f"{pid}/{name or '0'}", pid, path.read_text(), str(path))]
    tag = path.stem
    keys = ("predict", "answer", "completion", "code", "response")
    with path.open() as fh:
        for row_no, line in enumerate(fh):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{row_no + 1}: not a JSON line ({exc.msg}); candidates are a folder, "
                                 f"a .py file or a JSONL of answers") from None
            if not isinstance(row, dict) or not any(k in row for k in keys):
                raise ValueError(f"{path}:{row_no + 1}: no answer in this row (expected one of {', '.join(keys)})")
            text = next(row[k] for k in keys if k in row)
            pid = row.get("problem") or row.get("problem_id")
            meta = {}
            if pid is None:
                pid = ids[row_no] if row_no < len(ids) else f"row{row_no}"
                if isinstance(row.get("instruction"), str):
                    pid, meta["mapping"] = map_by_instruction(row["instruction"], pid, problems)
            cid = row.get("id") or f"{pid}/{tag}-{row_no}"
            out.append(Candidate(str(cid), str(pid), extract_code(text), f"{path.name}:{row_no + 1}", meta))
    return out


def _words(text: str) -> str:
    return " ".join(text.split())


def map_by_instruction(instruction: str, pid: str, problems: dict[str, Problem]) -> tuple[str, str]:
    """Check a row-ordered answer against the task its instruction describes.

    Answers are matched to tasks by row order; an instruction that quotes the task's description
    confirms the match (``checked``). Otherwise the one task whose description it quotes is taken
    (``remapped from <row-order id>``); with none or several, the row order stands (``unmapped``).
    Tasks without a description (KernelBench, TritonBench-G) are not checked (``row-order``)."""
    text = _words(instruction)

    def quoted(prob: Problem | None) -> bool:
        desc = _words(str(prob.meta.get("description", ""))) if prob else ""
        return bool(desc) and desc[:300] in text

    prob = problems.get(pid)
    if prob is None or not prob.meta.get("description"):
        return pid, "row-order"
    if quoted(prob):
        return pid, "checked"
    hits = [other for other, p in problems.items() if quoted(p)]
    if len(hits) == 1:
        return hits[0], f"remapped from {pid}"
    return pid, "unmapped"


def mapping_report(candidates: list[Candidate]) -> list[str]:
    """One line per answer whose task was not confirmed by its instruction (remapped or unmapped)."""
    return [f"{c.origin}: {c.meta['mapping']} -> {c.problem_id}" for c in candidates
            if c.meta.get("mapping", "").startswith(("remapped", "unmapped"))]

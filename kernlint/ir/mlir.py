"""A reader for Triton's TTIR/TTGIR text (MLIR generic+custom assembly as Triton prints it).

It extracts what the rules need, one record per operation: result names, the op name
(``tt.load``, ``ttg.local_load``, ``ttg.convert_layout``...), operand names, the type text, the
layout aliases (``#blocked``, ``#shared``...) and the source location. Locations are resolved
through named locations (``loc("x"(#loc3))``), call sites of inlined helpers
(``loc(callsite(#loc5 at #loc21))``) and fused locations to a list of frames
(file, line, col), innermost first, so every op maps back to the user's ``file:line:col``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator

Frame = tuple[str, int, int]


@dataclass
class Op:
    index: int
    name: str  # e.g. "tt.load"
    results: tuple[str, ...]
    operands: tuple[str, ...]
    #: the text after the operands: attributes and ``: types``
    text: str
    types: str
    frames: tuple[Frame, ...] = ()
    #: names given by named locations (variable names in the user's code), innermost first
    names: tuple[str, ...] = ()
    line_no: int = 0  # 1-based line in the IR text
    raw: str = ""
    #: index of the op whose region contains this one (None at function level)
    parent: int | None = None

    @property
    def loc(self) -> Frame | None:
        return self.frames[0] if self.frames else None


@dataclass
class MlirModule:
    ops: list[Op] = field(default_factory=list)
    layouts: dict[str, str] = field(default_factory=dict)  # alias -> definition text
    #: result or block-argument name -> defining op (block args map to None)
    defs: dict[str, Op | None] = field(default_factory=dict)
    #: loop-carried block argument -> its initial operand (scf.for iter_args) and yielded value
    iter_args: dict[str, list[str]] = field(default_factory=dict)
    func_args: dict[str, str] = field(default_factory=dict)  # name -> type
    attributes: dict[str, str] = field(default_factory=dict)  # module attributes

    def find(self, *names: str) -> Iterator[Op]:
        for op in self.ops:
            if op.name in names:
                yield op

    @property
    def num_warps(self) -> int | None:
        v = self.attributes.get("ttg.num-warps")
        return int(v) if v and v.isdigit() else None


# --------------------------------------------------------------------------------------------
# locations


_LOC_DEF = re.compile(r"^(#loc\d*)\s*=\s*loc\((.*)\)\s*$")


class _LocParser:
    def __init__(self, defs: dict[str, str]):
        self.defs = defs
        self.cache: dict[str, tuple[tuple[Frame, ...], tuple[str, ...]]] = {}

    def resolve_ref(self, ref: str, depth: int = 0) -> tuple[tuple[Frame, ...], tuple[str, ...]]:
        if ref in self.cache:
            return self.cache[ref]
        text = self.defs.get(ref)
        if text is None or depth > 64:
            return (), ()
        self.cache[ref] = ((), ())  # cycle guard
        out = self.parse(text, depth + 1)
        self.cache[ref] = out
        return out

    def parse(self, text: str, depth: int = 0) -> tuple[tuple[Frame, ...], tuple[str, ...]]:
        value, _ = self._expr(text.strip(), 0, depth)
        return value

    def _skip(self, s: str, i: int) -> int:
        while i < len(s) and s[i] in " \t":
            i += 1
        return i

    def _expr(self, s: str, i: int, depth: int):
        i = self._skip(s, i)
        if s.startswith("#loc", i):
            m = re.match(r"#loc\d*", s[i:])
            assert m
            return self.resolve_ref(m.group(0), depth), i + m.end()
        if s.startswith("unknown", i):
            return ((), ()), i + len("unknown")
        if s.startswith("callsite(", i):
            callee, j = self._expr(s, i + len("callsite("), depth)
            j = self._skip(s, j)
            if s.startswith("at", j):
                j += 2
            caller, j = self._expr(s, j, depth)
            j = self._skip(s, j)
            if j < len(s) and s[j] == ")":
                j += 1
            return (callee[0] + caller[0], callee[1] + caller[1]), j
        if s.startswith("fused", i):
            j = s.index("[", i) + 1
            frames: tuple[Frame, ...] = ()
            names: tuple[str, ...] = ()
            while j < len(s) and s[j] != "]":
                (f, n), j = self._expr(s, j, depth)
                frames += f
                names += n
                j = self._skip(s, j)
                if j < len(s) and s[j] == ",":
                    j += 1
            return (frames, names), j + 1
        if s.startswith('"', i):
            end = i + 1
            while end < len(s) and s[end] != '"':
                end += 2 if s[end] == "\\" else 1
            string = s[i + 1:end]
            j = end + 1
            m = re.match(r":(\d+):(\d+)(?:\s*to\s*(?::\d+)?:\d+)?", s[j:])
            if m:  # file location
                return (((string, int(m.group(1)), int(m.group(2))),), ()), j + m.end()
            j = self._skip(s, j)
            if j < len(s) and s[j] == "(":  # named location
                (frames, names), k = self._expr(s, j + 1, depth)
                k = self._skip(s, k)
                if k < len(s) and s[k] == ")":
                    k += 1
                return (frames, (string,) + names), k
            return ((), (string,)), j
        # anything else: skip to the next delimiter
        m = re.match(r"[^,)\]]*", s[i:])
        return ((), ()), i + (m.end() if m else 1)


# --------------------------------------------------------------------------------------------
# operations

_RESULTS = re.compile(r"^\s*((?:%[\w.$-]+(?::\d+)?)(?:\s*,\s*%[\w.$-]+(?::\d+)?)*)\s*=\s*")
_OPNAME = re.compile(r'^"?([a-z_][\w]*\.[\w.]+)"?')
_REF = re.compile(r"%[\w.$-]+(?:#\d+)?")
_TRAILING_LOC = re.compile(r"\bloc\(")
_ITER_ARGS = re.compile(r"iter_args\((.*?)\)\s*->")
_FUNC = re.compile(r"tt\.func\b.*?@([\w$]+)\((.*)\)")
_ARG = re.compile(r"(%[\w.$-]+)\s*:\s*([^,]*?)(?:\s+loc\(|,|$)")
_ALIAS = re.compile(r"^(#[A-Za-z_][\w]*)\s*=\s*(#.*)$")


def _split_trailing_loc(line: str) -> tuple[str, str | None]:
    """``op ... loc(X)`` -> (``op ...``, ``X``) using the last top-level ``loc(``."""
    idx = None
    for m in _TRAILING_LOC.finditer(line):
        idx = m.start()
    if idx is None:
        return line, None
    depth = 0
    j = idx + 3
    for k in range(j, len(line)):
        if line[k] == "(":
            depth += 1
        elif line[k] == ")":
            depth -= 1
            if depth == 0:
                if line[k + 1:].strip() in ("", "{"):
                    return line[:idx].rstrip(), line[j + 1:k]
                return line, None
    return line, None


def _top_level_colon(text: str) -> int:
    depth = 0
    for i, ch in enumerate(text):
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        elif ch == ":" and depth == 0 and i > 0 and text[i - 1] == " " and (i + 1 < len(text) and text[i + 1] == " "):
            return i
    return -1


def parse(text: str) -> MlirModule:
    module = MlirModule()
    loc_defs: dict[str, str] = {}
    lines = text.splitlines()
    for line in lines:
        m = _LOC_DEF.match(line.strip())
        if m:
            loc_defs[m.group(1)] = m.group(2)
    locs = _LocParser(loc_defs)
    regions: list[int | None] = []  # owners of the open regions
    for no, line in enumerate(lines, start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("//") or stripped.startswith("#loc"):
            continue
        if stripped.startswith("}"):
            if regions:
                owner = regions.pop()
                if stripped.endswith("{"):  # } else {
                    regions.append(owner)
            continue
        if stripped.startswith("#"):
            m = _ALIAS.match(stripped)
            if m:
                module.layouts[m.group(1)] = m.group(2)
            continue
        if stripped.startswith("module attributes"):
            for k, v in re.findall(r'"?([\w.-]+)"?\s*=\s*("?[\w:.-]+"?)(?:\s*:\s*i\d+)?', stripped):
                module.attributes[k] = v.strip('"')
            continue
        if stripped.startswith("tt.func"):
            regions.append(None)
            fm = _FUNC.search(stripped)
            if fm:
                for am in _ARG.finditer(fm.group(2)):
                    module.func_args[am.group(1)] = am.group(2).strip()
                    module.defs[am.group(1)] = None
            continue
        body, loc_text = _split_trailing_loc(stripped)
        results: tuple[str, ...] = ()
        rm = _RESULTS.match(body)
        if rm:
            results = tuple(r.strip().split(":")[0] for r in rm.group(1).split(","))
            body = body[rm.end():]
        om = _OPNAME.match(body)
        if not om:
            continue
        name = om.group(1)
        rest = body[om.end():]
        colon = _top_level_colon(rest)
        head, types = (rest[:colon], rest[colon + 1:].strip()) if colon >= 0 else (rest, "")
        if name == "scf.for":
            ia = _ITER_ARGS.search(rest)
            if ia:
                for pair in ia.group(1).split(","):
                    if "=" in pair:
                        arg, init = (p.strip() for p in pair.split("=", 1))
                        module.iter_args.setdefault(arg, []).append(init)
                        module.defs[arg] = None
            loopvar = re.match(r"\s*(%[\w.$-]+)\s*=", rest)
            if loopvar:
                module.defs[loopvar.group(1)] = None
            head = rest.split("iter_args")[0]
        operands = tuple(r for r in _REF.findall(head))
        frames: tuple[Frame, ...] = ()
        names: tuple[str, ...] = ()
        if loc_text is not None:
            frames, names = locs.parse(loc_text)
        op = Op(len(module.ops), name, results, operands, rest, types, frames, names, no, stripped,
                regions[-1] if regions else None)
        module.ops.append(op)
        if stripped.endswith("{"):
            regions.append(op.index)
        for r in results:
            module.defs[r] = op
    _link_yields(module)
    return module


def _link_yields(module: MlirModule) -> None:
    """Add each ``scf.yield`` operand to the matching loop-carried argument's sources."""
    for op in module.ops:
        if op.name != "scf.yield" or op.parent is None:
            continue
        owner = module.ops[op.parent]
        if owner.name != "scf.for":
            continue
        ia = _ITER_ARGS.search(owner.text)
        args = [p.split("=")[0].strip() for p in ia.group(1).split(",")] if ia else []
        for arg, val in zip(args, op.operands):
            module.iter_args.setdefault(arg, []).append(val)


def producers(module: MlirModule, value: str, limit: int = 4000) -> Iterator[Op]:
    """Every op whose result flows into ``value`` (transitively), through loop-carried args."""
    seen: set[str] = set()
    todo = [value]
    while todo and len(seen) < limit:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        op = module.defs.get(v)
        if op is None:
            todo.extend(module.iter_args.get(v, ()))
            continue
        yield op
        todo.extend(op.operands)

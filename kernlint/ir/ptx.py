"""A PTX parser (lark, LALR) producing instruction records mapped to source ``file:line:col``.

It understands what compilers emit for a kernel body: directives (``.version``, ``.entry`` headers
and ``.param`` lists, ``.reg``, ``.shared``...), labels, instructions with their predicate guard
(``@%p1``/``@!%p1``), opcode and modifiers (``ld.global.v4.b32`` -> ``ld`` + ``[global, v4, b32]``)
and operands (registers, immediates, symbols, ``[addr+off]`` addresses, ``{%r1, %r2}`` vectors),
plus the debug line table: ``.loc FILE LINE COL`` (with ``inlined_at`` for inlined helpers) and
``.file N "path"``. The DWARF sections after the code are not parsed.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Iterator

from lark import Lark, Token, Transformer, v_args

GRAMMAR = r"""
start: _NL* (_line _NL+)* _line?

_line: _chain_item+ _end_item? | _end_item
_chain_item: label | instruction | directive_semi | lbrace | rbrace | rpar
_end_item: loc | file | directive_open

label: LABEL_DEF
lbrace: "{"
rbrace: "}"
rpar: ")"

loc: LOC INT INT INT ("," "function_name" IDENT "," "inlined_at" INT INT INT)?
file: FILE INT STRING ("," INT "," INT)?

directive_semi: DIRECTIVE darg* ";" -> directive
directive_open: DIRECTIVE darg*     -> directive
?darg: DIRECTIVE | IDENT | INT | DECIMAL | REG | STRING | FLOAT | "(" | "," | "<" | ">" | "[" | "]" | "=" | "{" | "}"

instruction: guard? OPCODE operands? ";"
guard: "@" NOT? (REG | IDENT)
operands: operand ("," operand)*
?operand: REG                  -> reg
        | NOT REG              -> negreg
        | REG "|" REG          -> regpair
        | INT                  -> imm
        | FLOAT                -> fimm
        | DECIMAL              -> fimm
        | IDENT                -> sym
        | "_"                  -> sink
        | "[" addr "]"         -> address
        | "[" base "," "{" operand ("," operand)* "}" "]" -> tensor_address
        | "{" operand ("," operand)* "}" -> vector
addr: base (SIGN INT)?
    | INT                      -> absaddr
?base: REG | IDENT

LABEL_DEF.3: /[$A-Za-z_][\w$]*:/
LOC.3: /\.loc(?![\w$])/
FILE.3: /\.file(?![\w$])/
DIRECTIVE: /\.[A-Za-z_][\w$]*/
OPCODE: /[a-z][a-z0-9_]*(\.[A-Za-z0-9_]+(::[A-Za-z0-9_]+)*)*/
REG: /%[A-Za-z_][\w]*(\.[xyz])?/
IDENT.0: /[$A-Za-z_][\w$]*/
FLOAT.2: /0[fFdD][0-9A-Fa-f]+/
DECIMAL.2: /\d+\.\d+/
INT: /-?(0[xX][0-9A-Fa-f]+|\d+)U?/
SIGN: "+" | "-"
NOT: "!"
STRING: /"[^"]*"/
_NL: /\r?\n/
COMMENT: /\/\/[^\n]*/ | /\/\*(.|\n)*?\*\//
%ignore /[ \t\f]+/
%ignore COMMENT
"""


@dataclass(frozen=True)
class SourceLoc:
    file: str
    line: int
    col: int
    #: (file, line, col) of the call site when the location is inside an inlined function
    inlined_at: tuple[str, int, int] | None = None
    #: the call sites further out, when the call site is itself inside an inlined function
    outer: tuple[tuple[str, int, int], ...] = ()

    def frames(self) -> list[tuple[str, int, int]]:
        """Innermost first."""
        out = [(self.file, self.line, self.col)]
        if self.inlined_at:
            out.append(self.inlined_at)
        out.extend(self.outer)
        return out


@dataclass
class Operand:
    kind: str  # reg | negreg | regpair | imm | fimm | sym | sink | address | tensor | vector
    text: str
    #: address: base (register or symbol) and offset; vector: the elements
    base: str | None = None
    offset: int = 0
    elements: tuple["Operand", ...] = ()
    value: int | None = None

    def registers(self) -> list[str]:
        if self.kind in ("reg", "negreg"):
            return [self.text.lstrip("!")]
        if self.kind == "regpair":
            return self.text.split("|")
        if self.kind == "address" and self.base and self.base.startswith("%"):
            return [self.base]
        if self.kind == "vector":
            return [r for e in self.elements for r in e.registers()]
        return []


@dataclass
class Instruction:
    index: int
    opcode: str  # the base opcode: ld, st, mov, bra, setp...
    modifiers: tuple[str, ...]
    operands: tuple[Operand, ...]
    guard: str | None = None  # predicate register
    guard_negated: bool = False
    loc: SourceLoc | None = None
    #: 1-based line of the instruction in the PTX text
    ptx_line: int = 0

    @property
    def full_opcode(self) -> str:
        return ".".join((self.opcode,) + self.modifiers)

    def has(self, *mods: str) -> bool:
        return all(m in self.modifiers for m in mods)

    @property
    def state_space(self) -> str | None:
        for m in self.modifiers:
            if m in ("global", "shared", "local", "param", "const", "generic", "shared::cta", "shared::cluster"):
                return m
        return None

    def text(self) -> str:
        g = f"@{'!' if self.guard_negated else ''}{self.guard} " if self.guard else ""
        ops = ", ".join(o.text for o in self.operands)
        return f"{g}{self.full_opcode} {ops};".replace(" ;", ";")


@dataclass
class PtxFunction:
    name: str
    params: list[tuple[str, str]] = field(default_factory=list)  # (name, declaration text)
    instructions: list[Instruction] = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)  # label -> index of next instruction


@dataclass
class PtxModule:
    version: str = ""
    target: str = ""
    files: dict[int, str] = field(default_factory=dict)
    functions: list[PtxFunction] = field(default_factory=list)
    shared_symbols: dict[str, int] = field(default_factory=dict)  # name -> declared bytes (0: extern)

    def instructions(self) -> Iterator[Instruction]:
        for f in self.functions:
            yield from f.instructions


@functools.lru_cache(maxsize=1)
def _parser() -> Lark:
    return Lark(GRAMMAR, parser="lalr", lexer="contextual", propagate_positions=True,
                maybe_placeholders=False)


class _ToRecords(Transformer):
    """Turn the tree's operands into :class:`Operand` (statements are walked by :func:`parse`)."""

    def reg(self, c):
        return Operand("reg", str(c[0]))

    def negreg(self, c):
        return Operand("negreg", "!" + str(c[1]))

    def regpair(self, c):
        return Operand("regpair", f"{c[0]}|{c[1]}")

    def imm(self, c):
        return Operand("imm", str(c[0]), value=_int(str(c[0])))

    def fimm(self, c):
        return Operand("fimm", str(c[0]))

    def sym(self, c):
        return Operand("sym", str(c[0]), base=str(c[0]))

    def sink(self, c):
        return Operand("sink", "_")

    def address(self, c):
        a = c[0]
        return a

    @v_args(meta=True)
    def addr(self, meta, c):
        base = str(c[0])
        off = 0
        if len(c) == 3:
            off = _int(str(c[2])) * (-1 if str(c[1]) == "-" else 1)
        text = f"[{base}{'+' + str(off) if off > 0 else (str(off) if off < 0 else '')}]"
        return Operand("address", text, base=base, offset=off)

    def absaddr(self, c):
        return Operand("address", f"[{c[0]}]", base=None, offset=_int(str(c[0])))

    def tensor_address(self, c):
        """``[%rd4, {%r1, %r2}]``: a tensor map and coordinates (TMA), not a plain address."""
        return Operand("tensor", f"[{c[0]}, {{" + ", ".join(o.text for o in c[1:]) + "}]", base=str(c[0]),
                       elements=tuple(c[1:]))

    def vector(self, c):
        return Operand("vector", "{" + ", ".join(o.text for o in c) + "}", elements=tuple(c))

    def operands(self, c):
        return list(c)


def _int(text: str) -> int:
    text = text.rstrip("U")
    return int(text, 16) if text.lower().lstrip("-").startswith("0x") else int(text)


_SECTION = re.compile(r"^\s*\.section\b", re.M)


def code_part(text: str) -> str:
    """The PTX up to its DWARF sections, plus the ``.file`` table that precedes them."""
    m = _SECTION.search(text)
    return text if m is None else text[: m.start()]


def parse(text: str) -> PtxModule:
    tree = _ToRecords().transform(_parser().parse(code_part(text) + "\n"))
    module = PtxModule()
    func: PtxFunction | None = None
    loc: SourceLoc | None = None
    raw_instructions: list[tuple[Instruction, tuple | None]] = []
    callers: dict[tuple[int, int, int], tuple[int, int, int]] = {}
    in_header = False
    for item in tree.children:
        kind = item.data
        if kind == "directive":
            toks = [str(t) for t in item.children if isinstance(t, Token)]
            head = toks[0] if toks else ""
            if head == ".version" and len(toks) > 1:
                module.version = toks[1]
            elif head == ".target" and len(toks) > 1:
                module.target = toks[1]
            elif ".entry" in toks or ".func" in toks:
                idx = toks.index(".entry") if ".entry" in toks else toks.index(".func")
                name = next((t for t in toks[idx + 1:] if not t.startswith(".")), "")
                func = PtxFunction(name)
                module.functions.append(func)
                in_header = True
            elif head == ".param" and func is not None and in_header:
                pname = [t for t in toks if not t.startswith(".") and not t.isdigit()]
                func.params.append((pname[-1] if pname else "", " ".join(toks)))
            elif ".shared" in toks:
                names = [t for t in toks if not t.startswith(".") and not re.fullmatch(r"-?\d+", t)]
                if names:
                    nums = [t for t in toks if re.fullmatch(r"\d+", t)]
                    size = int(nums[-1]) if nums else 0
                    module.shared_symbols[names[0]] = size if ".extern" not in toks else 0
        elif kind == "rpar":
            in_header = False
        elif kind == "lbrace":
            in_header = False
        elif kind == "file":
            c = item.children
            module.files[int(str(c[1]))] = str(c[2]).strip('"')
        elif kind == "loc":
            c = [str(t) for t in item.children]
            file_no, line, col = int(c[1]), int(c[2]), int(c[3])
            inl = (int(c[5]), int(c[6]), int(c[7])) if len(c) >= 8 else None
            # PTX names one call site per location; the call site's own caller is the one named by
            # the latest location at that call site (nested inlining: header -> header -> kernel)
            outer: list[tuple[int, int, int]] = []
            at = inl
            while at is not None and len(outer) < 8:
                at = callers.get(at)
                if at is None or at in outer or at == inl:
                    break
                outer.append(at)
            if inl is not None:
                callers[(file_no, line, col)] = inl
            loc = (file_no, line, col, inl, tuple(outer))  # type: ignore[assignment]
        elif kind == "label" and func is not None:
            func.labels[str(item.children[0])[:-1]] = len(func.instructions)
        elif kind == "instruction":
            if func is None:
                continue
            c = item.children
            guard = None
            negated = False
            pos = 0
            if c and getattr(c[0], "data", None) == "guard":
                g = [str(t) for t in c[0].children]
                negated = g[0] == "!"
                guard = g[-1]
                pos = 1
            op = str(c[pos])
            operands = c[pos + 1] if len(c) > pos + 1 else []
            base, *mods = op.split(".")
            inst = Instruction(len(func.instructions), base, tuple(mods), tuple(operands), guard, negated,
                               None, item.meta.line if hasattr(item.meta, "line") else 0)
            func.instructions.append(inst)
            raw_instructions.append((inst, loc))  # type: ignore[arg-type]
    # resolve file numbers once the .file table (printed after the code) is known
    for inst, raw in raw_instructions:
        if raw is None:
            continue
        file_no, line, col, inl, outer = raw  # type: ignore[misc]
        inlined = None
        if inl is not None:
            inlined = (module.files.get(inl[0], str(inl[0])), inl[1], inl[2])
        further = tuple((module.files.get(f, str(f)), ln, c) for f, ln, c in outer)
        inst.loc = SourceLoc(module.files.get(file_no, str(file_no)), line, col, inlined, further)
    return module

"""Find Triton and TileLang kernels (and their launch sites) in a parsed module, without importing it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst

from kernlint.model import Decorator, Frontend, Kernel, Param, Span
from kernlint.source import names as N
from kernlint.source.kernel_aliases import ModuleAliases
from kernlint.source.launch_helpers import find_helpers, launch_through
from kernlint.source.locate import KernelLocator
from kernlint.source.names import source_text


def split_top_level(text: str) -> list[str]:
    """``a, f(b, c), d`` -> ``['a', 'f(b, c)', 'd']``: commas inside brackets and strings stay,
    comments are dropped (``a,  # x, y`` is one argument ``a``)."""
    parts, depth, current, i, n = [], 0, [], 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if ch in "'\"":
            quote = text[i:i + 3] if text[i:i + 3] in ('"""', "'''") else ch
            j = i + len(quote)
            while j < n and text[j:j + len(quote)] != quote:
                j += 2 if text[j] == "\\" else 1
            current.append(text[i:j + len(quote)])
            i = j + len(quote)
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
            i += 1
            continue
        current.append(ch)
        i += 1
    if "".join(current).strip():
        parts.append("".join(current).strip())
    return parts


def tuple_elements(text: str) -> list[str] | None:
    """``(a, f(b, c))`` -> ``['a', 'f(b, c)']``; None when the text is not a tuple/list literal."""
    text = text.strip()
    if not text or text[0] not in "([" or text[-1] not in ")]":
        return None
    return split_top_level(text[1:-1])


@dataclass
class Launch:
    """``kernel[grid](args...)`` somewhere in the module (``start``/``end``: offsets in the source)."""

    kernel: str
    grid_text: str
    call_text: str
    start: int = 0
    end: int = 0
    #: the name the launch is written with where it is an alias of the kernel (``fn[grid](...)`` after
    #: ``fn = kernel_a if cond else kernel_b``: one site for each kernel)
    alias: str | None = None
    _call: cst.Call | None = None
    _grid: cst.BaseExpression | None = None
    #: the kernel definitions the name may mean where the launch stands (set with the module's facts)
    _targets: list | None = None

    @property
    def grid(self) -> cst.BaseExpression:
        """The grid expression, parsed on first use."""
        if self._grid is None:
            try:
                self._grid = cst.parse_expression(self.grid_text)
            except Exception:  # noqa: BLE001 - an unreadable grid: unknown
                self._grid = cst.Name("_unknown_grid")
        return self._grid

    def grid_elements(self) -> list[str] | None:
        """The grid's elements as text when it is written as a tuple/list literal (no parse)."""
        return tuple_elements(self.grid_text)

    def argument_texts(self) -> tuple[list[str], dict[str, str]]:
        """The call's positional and keyword arguments as text (no parse)."""
        positional, keywords = [], {}
        for part in split_top_level(self.call_text[self.call_text.find("(") + 1:self.call_text.rfind(")")]):
            m = re.match(r"^([A-Za-z_]\w*)\s*=(?!=)\s*(.*)$", part, re.S)
            if m:
                keywords[m.group(1)] = m.group(2).strip()
            elif not part.startswith("*"):
                positional.append(part)
        return positional, keywords

    @property
    def call(self) -> cst.Call:
        """The call's arguments, parsed on first use (long argument lists cost more than the grid)."""
        if self._call is None:
            try:
                parsed = cst.parse_expression(self.call_text)
            except Exception:  # noqa: BLE001 - unreadable arguments: none
                parsed = None
            self._call = parsed if isinstance(parsed, cst.Call) else cst.Call(func=cst.Name("_k"))
        return self._call

    def keyword(self, name: str) -> cst.BaseExpression | None:
        for arg in self.call.args:
            if arg.keyword is not None and arg.keyword.value == name:
                return arg.value
        return None


@dataclass
class DiscoveredKernel:
    kernel: Kernel
    node: cst.FunctionDef
    locator: KernelLocator


@dataclass
class ModuleInfo:
    path: str
    source: str
    module: cst.Module
    imports: N.ImportMap
    kernels: list[DiscoveredKernel] = field(default_factory=list)
    _launches: dict[str, list[Launch]] = field(default_factory=dict)
    #: module-level NAME = <int literal> constants
    constants: dict[str, int] = field(default_factory=dict)
    #: module-level NAME = [...] assignments (e.g. autotune config lists)
    lists: dict[str, cst.BaseExpression] = field(default_factory=dict)
    #: every function defined in the module, by name (the first definition)
    functions: dict[str, cst.FunctionDef] = field(default_factory=dict)

    #: the module's functions that launch a kernel they receive, by name
    launch_helpers: dict = field(default_factory=dict)
    #: the module's functions that define a kernel and return it (``@lru_cache def _kernel(): ...
    #: return k``, launched as ``_kernel()[grid](...)``): function name -> kernel name
    kernel_factories: dict = field(default_factory=dict)
    #: names the module's scopes bind only to kernels (:mod:`kernlint.source.kernel_aliases`)
    kernel_aliases: ModuleAliases = field(default_factory=ModuleAliases)

    _facts: object = None
    _host: object = None
    _mentions: dict[str, bool] = field(default_factory=dict)
    _inlined: frozenset[str] | None = None

    def mentions(self, text: str) -> bool:
        """Whether the module's text contains ``text`` (asked once per module, not per kernel)."""
        if text not in self._mentions:
            self._mentions[text] = text in self.source
        return self._mentions[text]

    def launches_of(self, name: str) -> list[Launch]:
        return launch_index(self).get(name, [])

    def owner(self, node: cst.CSTNode) -> "DiscoveredKernel | None":
        """The kernel or ``@triton.jit`` helper of the module whose body holds ``node`` (one walk of
        every body, made the first time a finding is placed)."""
        if "_owners" not in self.__dict__:
            owners: dict[int, DiscoveredKernel] = {}
            for k in self.kernels:
                for n in N.body_nodes(k.node):
                    owners.setdefault(id(n), k)
            self.__dict__["_owners"] = owners
        return self.__dict__["_owners"].get(id(node))

    def discovered(self, kernel: "Kernel | str") -> "DiscoveredKernel | None":
        """The module's Triton kernel ``kernel`` (by name, and by line where a Kernel is given: one
        name can be defined twice)."""
        name = kernel if isinstance(kernel, str) else kernel.name
        same = [k for k in self.kernels if k.kernel.name == name and k.kernel.frontend is Frontend.TRITON]
        if not isinstance(kernel, str):
            same = [k for k in same if k.kernel.span.line == kernel.span.line] or same
        return same[0] if same else None

    @property
    def inlined_kernels(self) -> frozenset[str]:
        """The module's Triton kernels another of its kernels calls (``@triton.jit`` helpers): their
        parameters are what each call passes, and the engine follows them inlined at each call."""
        if self._inlined is None:
            kernels = [k.kernel for k in self.kernels if k.kernel.frontend is Frontend.TRITON]
            found: set[str] = set()
            if len(kernels) > 1:
                # one scan of the text for ``name(`` (a walk of every kernel's tree costs a tenth of the parse)
                pattern = re.compile(r"(?<![\w.])(" + "|".join(sorted(re.escape(k.name) for k in kernels)) + r")\s*\(")
                for m in pattern.finditer(self.source):
                    line_start = self.source.rfind("\n", 0, m.start()) + 1
                    before = self.source[line_start:m.start()]
                    if "#" in before or before.rstrip().endswith("def"):
                        continue
                    line = self.source.count("\n", 0, m.start()) + 1
                    if any(k.span.line < line <= k.span.end_line and k.name != m.group(1) for k in kernels):
                        found.add(m.group(1))
            self._inlined = frozenset(found)
        return self._inlined

    @property
    def host(self):
        """A :class:`~kernlint.facts.HostEvaluator` over the module, with the names its module-level
        code binds (run once on first use)."""
        if self._host is None:
            from kernlint.facts import HostEvaluator, run_block

            ev = HostEvaluator(self.module, self.imports, dict(self.functions))
            try:
                run_block(ev, self.module.body, ev.module_env)
            except RecursionError:
                ev.module_env.clear()
            self._host = ev
        return self._host

    @property
    def facts(self):
        """The module's :class:`~kernlint.model.ModuleFacts`, built once on first use."""
        if self._facts is None:
            from kernlint.facts import build

            self._facts = build(self)
        return self._facts

    def span_of_offsets(self, start: int, end: int) -> Span:
        def at(offset: int) -> tuple[int, int]:
            line_start = self.source.rfind("\n", 0, offset) + 1
            return self.source.count("\n", 0, offset) + 1, offset - line_start + 1

        return Span(*at(start), *at(end))


def _code(module: cst.Module, node: cst.CSTNode) -> str:
    return source_text(module, node).strip()


def _params(module: cst.Module, fn: cst.FunctionDef, imports: N.ImportMap) -> list[Param]:
    out = []
    for p in N.parameters(fn.params):
        ann = _code(module, p.annotation.annotation) if p.annotation else None
        constexpr = bool(p.annotation) and _constexpr_annotation(p.annotation.annotation, imports)
        default = _code(module, p.default) if p.default is not None else None
        out.append(Param(p.name.value, ann, constexpr, default))
    return out


def _constexpr_annotation(annotation: cst.BaseExpression, imports: N.ImportMap) -> bool:
    """``tl.constexpr``, or a string naming it (``"tl.constexpr"``: Triton reads an annotation's text
    and takes any that says ``constexpr``)."""
    if isinstance(annotation, cst.SimpleString):
        value = annotation.evaluated_value
        return isinstance(value, str) and "constexpr" in value
    return (imports.resolve(annotation) or "").endswith("constexpr")


def _decorator_name(module: cst.Module, expr: cst.BaseExpression, imports: N.ImportMap) -> str:
    """The name of a decorator as written, ``@triton.autotune(...)`` or ``@jit`` (the expression
    after ``@``, or the callee of ``k = callee(k)``)."""
    target = expr.func if isinstance(expr, cst.Call) else expr
    return imports.resolve(target) or _code(module, target)


def _decorator(module: cst.Module, dec: cst.Decorator, imports: N.ImportMap) -> Decorator:
    expr = dec.decorator
    call = expr if isinstance(expr, cst.Call) else None
    d = Decorator(name=_decorator_name(module, dec.decorator, imports))
    entries = N.heuristics_entries(expr, imports.resolve)
    if entries is not None:
        d.reads = {name: N.mapping_reads(fn) for name, fn in entries.items()}
    if call:
        for arg in call.args:
            if arg.keyword is not None:
                d.kwargs[arg.keyword.value] = _code(module, arg.value)
            else:
                d.args.append(_code(module, arg.value))
    return d


def _matching(text: str, start: int, open_ch: str, close_ch: str, limit: int = 20000) -> int:
    """Index of the bracket closing the one at ``start`` (strings are not special-cased)."""
    depth = 0
    for i in range(start, min(len(text), start + limit)):
        ch = text[i]
        if ch == open_ch:
            depth += 1
        elif ch == close_ch:
            depth -= 1
            if depth == 0:
                return i
    return -1


#: ``name[``, ``factory()[`` and ``wrap_triton(kernel)[``: the name, the call's parentheses, its argument
_SUBSCRIPT = re.compile(r"(?<![\w.])(?:\w+\.)*(\w+)\s*(\(\s*(\w+)?\s*\))?\s*\[")


def launch_index(info: "ModuleInfo") -> dict[str, list[Launch]]:
    """Every ``kernel[grid](args)`` of the module's kernels, by kernel name: one scan of the text."""
    if not info._launches and info.kernels:
        scan_launches(info)
        if len(info._launches) > 1:
            info.facts  # noqa: B018 - matches each site to its node in the tree: no re-parse of its text
    return info._launches


def scan_launches(info: "ModuleInfo") -> None:
    """Fill ``info._launches``: the launches written as such, and the calls of functions that launch
    the kernel they receive (:mod:`kernlint.source.launch_helpers`), as launches of that kernel."""
    kernels = {k.kernel.name for k in info.kernels}
    params = {p.name.value for fn in info.functions.values()
              for p in N.parameters(fn.params)} - kernels
    info.kernel_factories = kernel_factories(info)
    info.kernel_aliases = ModuleAliases.read(info.module, info.source, kernels)
    # one scan for both: the kernels' launches, and the parameters a function calls as ``p[grid](...)``
    found = find_launches(info.source, kernels | params, info.kernel_factories, info.kernel_aliases.names())
    info._launches = {name: sites for name, sites in found.items() if name in kernels}
    info._launches.setdefault("", [])  # marks the index as built
    called = set(found) & params
    info.launch_helpers = find_helpers(info.functions, called) if called else {}
    if not info.launch_helpers:
        return
    code = cst.Module([]).code_for_node
    pattern = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, info.launch_helpers)) + r")\s*\(")
    for m in pattern.finditer(info.source):
        line_start = info.source.rfind("\n", 0, m.start()) + 1
        before = info.source[line_start:m.start()].lstrip()
        if before.startswith("#") or before.rstrip().endswith("def"):
            continue
        close = _matching(info.source, m.end() - 1, "(", ")")
        try:
            call = cst.parse_expression(info.source[m.start():close + 1]) if close > 0 else None
        except Exception:  # noqa: BLE001 - unreadable: not a launch
            call = None
        found = launch_through(info.launch_helpers[m.group(1)], call, kernels) if isinstance(call, cst.Call) else None
        if found is None:
            continue
        kernel, launch = found
        text = code(launch)
        open_sq = len(kernel)
        close_sq = _matching(text, open_sq, "[", "]")
        info._launches.setdefault(kernel, []).append(
            Launch(kernel, text[open_sq + 1:close_sq], "_k" + text[close_sq + 1:], m.start(), close + 1))
    for sites in info._launches.values():
        sites.sort(key=lambda site: site.start)


def kernel_factories(info: "ModuleInfo") -> dict[str, str]:
    """The module's functions that define a kernel among their own statements and return it by
    name: function name -> kernel name."""
    nodes = {id(k.node): k.kernel.name for k in info.kernels}
    out = {}
    for name, fn in info.functions.items():
        if not isinstance(fn.body, cst.IndentedBlock):
            continue
        defined = {nodes[id(stmt)] for stmt in fn.body.body if id(stmt) in nodes}
        returned = [small.value.value for stmt in fn.body.body if isinstance(stmt, cst.SimpleStatementLine)
                    for small in stmt.body if isinstance(small, cst.Return) and isinstance(small.value, cst.Name)]
        if len(returned) == 1 and returned[0] in defined:
            out[name] = returned[0]
    return out


def find_launches(source: str, names: str | set[str], factories: dict | None = None, aliases: dict | None = None
                  ) -> dict[str, list[Launch]] | list[Launch]:
    """``name[grid](args)`` calls, found in one scan of the text and parsed piecewise (no full-tree
    walk): for one name a list, for a set of names a dict name -> list. ``factories``: functions that
    return a kernel (:func:`kernel_factories`): ``factory()[grid](args)`` launches that kernel, as
    ``wrap_triton(kernel)[grid](args)`` launches its argument. ``aliases``: names bound to kernels
    (:mod:`~kernlint.source.kernel_aliases`): ``alias[grid](args)`` is a site of each kernel it may be."""
    wanted = {names} if isinstance(names, str) else names
    out: dict[str, list[Launch]] = {}
    for m in _SUBSCRIPT.finditer(source):
        name = m.group(1)
        alias = None
        if m.group(3) is not None:
            name = m.group(3) if name in N.LAUNCH_WRAPPERS else None  # ``wrap_triton(kernel)[grid](...)``
        elif m.group(2) is not None:
            name = (factories or {}).get(name)  # ``factory()[grid](...)``
        elif aliases and name in aliases and m.start(1) == m.start():
            alias = name
        if alias is None and name not in wanted:
            continue
        line_start = source.rfind("\n", 0, m.start()) + 1
        if source[line_start:m.start()].lstrip().startswith("#"):
            continue
        open_sq = m.end() - 1
        close_sq = _matching(source, open_sq, "[", "]")
        if close_sq < 0:
            continue
        rest = close_sq + 1
        while rest < len(source) and source[rest] in " \t":
            rest += 1
        if rest >= len(source) or source[rest] != "(":
            continue
        close_par = _matching(source, rest, "(", ")")
        if close_par < 0:
            continue
        grid, call = source[open_sq + 1:close_sq], "_k" + source[rest:close_par + 1]
        if name in wanted:
            out.setdefault(name, []).append(Launch(name, grid, call, m.start(), close_par + 1))
        for kernel in aliases[alias] if alias is not None else ():
            if kernel in wanted:
                out.setdefault(kernel, []).append(Launch(kernel, grid, call, m.start(), close_par + 1, alias))
    return out.get(names, []) if isinstance(names, str) else out




class _Finder:
    """Walks statements only (never expressions): a full libcst visit costs more than the parse."""

    def __init__(self, info: ModuleInfo) -> None:
        self.info = info
        self.jit_wrapped: set[str] = set()
        #: function name -> the callees of ``name = callee(name)`` statements (decorators applied by hand)
        self.rewrapped: dict[str, list[cst.BaseExpression]] = {}
        self.functions: dict[str, cst.FunctionDef] = {}
        self.kernel_nodes: list[tuple[cst.FunctionDef, Frontend, list[Decorator]]] = []
        self.tilelang_blocks = "Kernel" in info.source and ("tilelang" in info.source or "tvm" in info.source)

    def walk(self, stmts, depth: int = 0) -> None:
        for stmt in stmts:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign):
                        self.assign(small, depth)
            elif isinstance(stmt, cst.FunctionDef):
                self.function(stmt)
                self.walk(stmt.body.body, depth + 1) if isinstance(stmt.body, cst.IndentedBlock) else None
            elif isinstance(stmt, cst.ClassDef):
                if isinstance(stmt.body, cst.IndentedBlock):
                    self.walk(stmt.body.body, depth + 1)
            elif isinstance(stmt, (cst.If, cst.Try, cst.With)):
                if isinstance(stmt.body, cst.IndentedBlock):
                    self.walk(stmt.body.body, depth)
                orelse = getattr(stmt, "orelse", None)
                while isinstance(orelse, cst.If):
                    if isinstance(orelse.body, cst.IndentedBlock):
                        self.walk(orelse.body.body, depth)
                    orelse = orelse.orelse
                if isinstance(orelse, cst.Else) and isinstance(orelse.body, cst.IndentedBlock):
                    self.walk(orelse.body.body, depth)

    def assign(self, node: cst.Assign, depth: int) -> None:
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
            return
        name = node.targets[0].target.value
        value = node.value
        if depth == 0:
            if isinstance(value, cst.Integer):
                self.info.constants[name] = int(value.evaluated_value)
            elif isinstance(value, (cst.List, cst.ListComp, cst.Tuple)):
                self.info.lists[name] = value
        # k = triton.jit(fn)
        if isinstance(value, cst.Call) and self.info.imports.resolve(value.func) in N.TRITON_JIT:
            for arg in value.args:
                if isinstance(arg.value, cst.Name):
                    self.jit_wrapped.add(arg.value.value)
        # k = wrapper(k): a decorator applied by hand (``k = fp8_autotune(k)``, ``k = triton.autotune(...)(k)``)
        elif (isinstance(value, cst.Call) and value.args and isinstance(value.args[0].value, cst.Name)
                and value.args[0].value.value == name and value.args[0].keyword is None):
            self.rewrapped.setdefault(name, []).append(value.func)

    def function(self, node: cst.FunctionDef) -> None:
        self.functions.setdefault(node.name.value, node)
        module, imports = self.info.module, self.info.imports
        frontend = N.kernel_frontend({_decorator_name(module, d.decorator, imports) for d in node.decorators})
        if frontend is None and self.tilelang_blocks and self._has_tilelang_kernel_block(node):
            frontend = Frontend.TILELANG
        if frontend is not None:
            # the arguments' text (autotune config lists can be long) only for kernels: no one reads the rest
            self.kernel_nodes.append((node, frontend, [_decorator(module, d, imports) for d in node.decorators]))

    def _has_tilelang_kernel_block(self, node: cst.FunctionDef) -> bool:
        """Whether a statement of the function (not of a function nested in it, judged on its own)
        is ``with T.Kernel(...)``."""
        todo: list[cst.CSTNode] = [node.body]
        while todo:
            n = todo.pop()
            if isinstance(n, cst.FunctionDef):
                continue
            if isinstance(n, cst.With) and any(
                    isinstance(item.item, cst.Call) and self.info.imports.resolve(item.item.func) in N.TILELANG_KERNEL
                    for item in n.items):
                return True
            todo.extend(c for c in N.child_nodes(n) if isinstance(c, N.STATEMENT_PARTS))
        return False


def _autotune_configs(info: ModuleInfo, decos: list[Decorator], fn: cst.FunctionDef) -> list[str]:
    for cst_dec in fn.decorators:
        call = cst_dec.decorator
        if not isinstance(call, cst.Call):
            continue
        configs = next((a.value for a in call.args if a.keyword and a.keyword.value == "configs"), None)
        if info.imports.resolve(call.func) not in N.TRITON_AUTOTUNE and not _tuner_of_configs(info, call, configs):
            continue
        if configs is None and call.args and call.args[0].keyword is None:
            configs = call.args[0].value
        if isinstance(configs, cst.Name) and configs.value in info.lists:
            configs = info.lists[configs.value]
        if isinstance(configs, (cst.List, cst.Tuple)) and not any(
                isinstance(el, cst.StarredElement) for el in configs.elements):
            return [_code(info.module, el.value) for el in configs.elements]
        if configs is not None:
            return _built_configs(info, configs) or [_code(info.module, configs)]
    return []


def _built_configs(info: ModuleInfo, configs: cst.BaseExpression) -> list[str] | None:
    """Each config that code builds (a comprehension, a helper's list), written out with its values;
    None where they cannot be read."""
    from kernlint.facts import possible_configs

    host = info.host
    built = possible_configs(host, configs, host.module_env)
    if not built or (len(built) == 1 and not built[0].known):
        return None  # (one config with a value not known: an iterable not known, of any length)
    return list(dict.fromkeys(c.text() for c in built))


def _tuner_of_configs(info: ModuleInfo, call: cst.Call, configs) -> bool:
    """A project's own autotuner (``@custom_autotune.autotune(configs=[triton.Config(...), ...])``): a
    decorator named ``autotune`` given a list of ``triton.Config`` (``configs``, its keyword);
    whatever it prunes, each launch runs with the values of one of them."""
    if (N.dotted(call.func) or "").rsplit(".", 1)[-1] != "autotune":
        return False
    return isinstance(configs, (cst.List, cst.Tuple)) and bool(configs.elements) and all(
        isinstance(el.value, cst.Call) and info.imports.resolve(el.value.func) in ("triton.Config", "triton.runtime.Config")
        for el in configs.elements)


def discover(path: str, source: str, module: cst.Module) -> ModuleInfo:
    info = ModuleInfo(path, source, module, N.ImportMap.from_module(module))
    finder = _Finder(info)
    finder.walk(module.body)
    info.functions = finder.functions
    nodes = list(finder.kernel_nodes)
    for name in sorted(finder.jit_wrapped):
        fn = finder.functions.get(name)
        if fn is not None and all(fn is not n for n, _, _ in nodes):
            nodes.append((fn, Frontend.TRITON, []))
    starts = KernelLocator.def_lines(source)
    source_lines = source.splitlines()
    twice = {name for name, lines in starts.items() if len(lines) > 1}
    same_name: dict[str, list[cst.FunctionDef]] = {}
    if twice & {fn.name.value for fn, _, _ in nodes}:
        from kernlint.facts import function_nodes

        for node in function_nodes(module):
            same_name.setdefault(node.name.value, []).append(node)
    for fn, frontend, decos in nodes:
        name = fn.name.value
        # a decorator applied by hand wraps the others: outermost, in the order applied (one a call
        # makes, ``triton.autotune(configs=...)(k)``, is named by its callee: its configs are not read)
        decos = [Decorator(name=_decorator_name(module, callee, info.imports))
                 for callee in reversed(finder.rewrapped.get(name, ()))] + decos
        defs = same_name.get(name, [])
        if len(defs) == len(starts.get(name, ())) > 1:
            # one name defined twice: the k-th def in the text is the k-th FunctionDef in the tree
            k = next(i for i, node in enumerate(defs) if node is fn)
            locator = KernelLocator(module, fn, {name: [starts[name][k]]}, source_lines)
        else:
            locator = KernelLocator(module, fn, starts, source_lines)
        kernel = Kernel(
            path=path,
            name=fn.name.value,
            frontend=frontend,
            span=locator.kernel_span(),
            params=_params(module, fn, info.imports),
            decorators=decos,
            autotune_configs=_autotune_configs(info, decos, fn),
            var_keyword=fn.params.star_kwarg.name.value if fn.params.star_kwarg is not None else None,
        )
        info.kernels.append(DiscoveredKernel(kernel, fn, locator))
    info.kernels.sort(key=lambda k: k.kernel.span.line)
    return info

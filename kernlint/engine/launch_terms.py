"""What one launch tells the engine: parameter values, tensor extents and the grid, as z3 terms.

This is the engine's narrow interface to launch facts (:class:`LaunchFacts`). ``launch_facts``
reads each launch from the module's :class:`~kernlint.model.ModuleFacts` (the bound argument of
every parameter, resolved values, the tensor behind each pointer) and turns the wrapper's
expressions into terms over symbolic sizes (``x.shape[0]``), so that relations survive
(``stride = N``, ``grid = cdiv(M, BLOCK)``, the wrapper's asserts and enclosing ``if``s). A
tensor's extent is only given when its shape is known (unpacked ``M, N = x.shape``, created with
``torch.empty((M, N))``/``empty_like``, or shown by the facts) or its ``numel()`` is passed: never
invented. Tensors are modelled contiguous (an input the wrapper accepts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst
import z3

from kernlint.source.discover import split_top_level

MAX_SIZE = 2 ** 31
_CREATE = re.compile(r"^torch\.(empty|zeros|ones|rand|randn|full|empty_strided|randint)\((.*)\)$", re.S)
_LIKE = re.compile(r"^torch\.(empty|zeros|ones|rand|randn|full)_like\(\s*([A-Za-z_]\w*)\s*(?:,.*)?\)$", re.S)
#: ``x[...]`` (group 2: the indices) or a transpose of ``x``
_VIEW = re.compile(r"([A-Za-z_]\w*)(?:\[(.+)\]|\.t\(\)|\.T|\.mT|\.transpose\([^()]*\)|\.permute\([^()]*\))", re.S)
_SAME = re.compile(r"^([A-Za-z_]\w*)\.(contiguous|clone|detach|view\(-1\)|reshape\(-1\)|flatten\(\)|"
                   r"view_as\(\w+\)|to\([^)]*\)|float\(\)|half\(\)|cuda\(\))(\(\))?$")


@dataclass
class LaunchFacts:
    label: str
    #: kernel parameter -> value at this launch
    values: dict[str, z3.ExprRef] = field(default_factory=dict)
    #: pointer parameter -> (extent in elements, how the wrapper sizes it)
    extents: dict[str, tuple] = field(default_factory=dict)
    #: grid axis -> number of programs (axes left out are unknown)
    grid: dict[int, z3.ExprRef] = field(default_factory=dict)
    assumptions: list = field(default_factory=list)
    #: z3 variable name -> wrapper text it stands for (``x.shape[0]``)
    names: dict[str, str] = field(default_factory=dict)


class _Wrapper:
    """Evaluates wrapper expressions (launch arguments, grid elements) to z3 terms."""

    def __init__(self, state, launch, facts: LaunchFacts, constexpr_values: dict):
        self.state = state
        self.launch = launch
        self.facts = facts
        self.constexpr_values = constexpr_values
        self.depth = 0
        self.dims: dict[str, list | None] = {}
        #: wrapper parameters passed on as they are (their value is the caller's)
        self.forwarded: set[str] = set()

    def size(self, name: str, text: str) -> z3.ArithRef:
        var = z3.Int(name)
        if name not in self.facts.names:
            self.facts.names[name] = text
            self.facts.assumptions += [var >= 1, var <= MAX_SIZE]
        return var

    def tensor_dims(self, name: str) -> list | None:
        if name in self.dims:
            return self.dims[name]
        self.dims[name] = None  # cycles
        from kernlint.source.bounds import assignment

        dims = None
        found = assignment(self.state, name, self.launch.start)
        if found is not None:
            targets, rhs = found
            rhs = rhs.strip()
            if len(targets) == 1 and targets[0] == name:
                dims = self._created(rhs)
        if dims is None:
            dims = self._unpacked(name)
        self.dims[name] = dims
        return dims

    def _created(self, rhs: str) -> list | None:
        m = _LIKE.match(rhs)
        if m:
            return self.tensor_dims(m.group(2))
        m = _SAME.match(rhs)
        if m:
            base = self.tensor_dims(m.group(1))
            return None if base is None else ([_product(base)] if "-1" in rhs or "flatten" in rhs else base)
        m = re.fullmatch(r"[A-Za-z_]\w*\.(?:reshape|view)\((.+)\)", rhs, re.S)
        if m:
            parts = split_top_level(m.group(1))
            if len(parts) == 1 and parts[0].strip()[:1] in "([":
                parts = split_top_level(parts[0].strip()[1:-1])
            dims = [self.term(p) for p in parts if p.strip()]
            return dims if dims and all(d is not None for d in dims) else None
        m = _CREATE.match(rhs)
        if not m:
            return None
        args = [a for a in split_top_level(m.group(2)) if not re.match(r"^\w+\s*=", a)]
        if not args:
            return None
        first = args[0].strip()
        shape_of = re.fullmatch(r"([A-Za-z_]\w*)\.(?:shape|size\(\))", first)
        if shape_of:
            return self.tensor_dims(shape_of.group(1))
        parts = split_top_level(first[1:-1]) if first[:1] in "([" and first[-1:] in ")]" else (
            args if m.group(1) not in ("full", "randint") else [first])
        dims = [self.term(p) for p in parts if p.strip()]
        return dims if dims and all(d is not None for d in dims) else None

    def _unpacked(self, name: str) -> list | None:
        """``M, N = x.shape`` before the launch."""
        source = self.state.info.source[:self.launch.start]
        found = None
        for m in re.finditer(rf"^[ \t]*(\w+(?:[ \t]*,[ \t]*\w+)*)[ \t]*,?[ \t]*=[ \t]*{re.escape(name)}\.shape[ \t]*$", source, re.M):
            found = m
        if found is None:
            return None
        targets = [t.strip() for t in found.group(1).split(",") if t.strip()]
        return [self.size(f"{name}.shape[{i}]", f"{name}.shape[{i}]") for i in range(len(targets))]

    def dim(self, tensor: str, i: int) -> z3.ArithRef:
        dims = self.tensor_dims(tensor)
        if dims is not None:
            if -len(dims) <= i < len(dims):
                return dims[i]
            return None
        return self.size(f"{tensor}.shape[{i}]", f"{tensor}.shape[{i}]")

    def stride(self, tensor: str, i: int):
        dims = self.tensor_dims(tensor)
        if dims is None or not -len(dims) <= i < len(dims):
            return None
        i %= len(dims)
        return _product(dims[i + 1:])

    def numel(self, tensor: str):
        dims = self.tensor_dims(tensor)
        if dims is not None:
            return _product(dims)
        base = self.aliases(tensor)[-1]
        return self.size(f"{base}.numel()", f"{base}.numel()")

    def term(self, text: str):
        text = text.split("#", 1)[0].strip()
        if not text:
            return None
        node = _parsed(text)
        return None if node is None else self.node(node)

    def node(self, node):
        if self.depth > 6:
            return None
        self.depth += 1
        try:
            return self._node(node)
        except (z3.Z3Exception, TypeError, ValueError, AttributeError):
            return None
        finally:
            self.depth -= 1

    def _node(self, node):
        code = self.state.info.module.code_for_node
        if isinstance(node, cst.Integer):
            return z3.IntVal(int(node.value.replace("_", ""), 0))
        if isinstance(node, cst.Name):
            return self.name(node.value)
        if isinstance(node, cst.BinaryOperation):
            a, b = self.node(node.left), self.node(node.right)
            if a is None or b is None:
                return None
            op = type(node.operator).__name__
            return {"Add": lambda: a + b, "Subtract": lambda: a - b, "Multiply": lambda: a * b,
                    "FloorDivide": lambda: a / b, "Modulo": lambda: a % b}.get(op, lambda: None)()
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
            a, b = self.node(node.left), self.node(node.comparisons[0].comparator)
            if a is None or b is None:
                return None
            op = type(node.comparisons[0].operator).__name__
            return {"LessThan": lambda: a < b, "LessThanEqual": lambda: a <= b, "GreaterThan": lambda: a > b,
                    "GreaterThanEqual": lambda: a >= b, "Equal": lambda: a == b,
                    "NotEqual": lambda: a != b}.get(op, lambda: None)()
        if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.And):
            a, b = self.node(node.left), self.node(node.right)
            return None if a is None or b is None else z3.And(a, b)
        if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            index = node.slice[0].slice.value
            value = node.value
            if isinstance(value, cst.Attribute) and value.attr.value == "shape" and isinstance(value.value, cst.Name):
                i = _literal(index)
                return None if i is None else self.dim(value.value.value, i)
            if isinstance(index, cst.SimpleString) and isinstance(value, cst.Name):
                key = index.evaluated_value
                return self.constexpr_values.get(key)
            return None
        if isinstance(node, cst.Call):
            func = node.func
            args = [a.value for a in node.args]
            fname = code(func).strip() if isinstance(func, (cst.Name, cst.Attribute)) else ""
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
                obj, method = func.value.value, func.attr.value
                if method == "numel" and not args:
                    return self.numel(obj)
                if method == "size" and len(args) == 1 and _literal(args[0]) is not None:
                    return self.dim(obj, _literal(args[0]))
                if method == "stride" and len(args) == 1 and _literal(args[0]) is not None:
                    return self.stride(obj, _literal(args[0]))
            if fname in ("triton.cdiv", "cdiv") and len(args) == 2:
                a, b = self.node(args[0]), self.node(args[1])
                return None if a is None or b is None else (a + b - 1) / b
            if fname == "math.ceil" and len(args) == 1 and isinstance(args[0], cst.BinaryOperation) \
                    and isinstance(args[0].operator, cst.Divide):
                a, b = self.node(args[0].left), self.node(args[0].right)
                return None if a is None or b is None else (a + b - 1) / b
            if fname == "len" and len(args) == 1 and isinstance(args[0], cst.Name):
                return self.dim(args[0].value, 0)
            if fname in ("int", "abs") and len(args) == 1:
                return self.node(args[0])
            if fname in ("min", "max") and len(args) == 2:
                a, b = self.node(args[0]), self.node(args[1])
                if a is None or b is None:
                    return None
                return z3.If(a <= b, a, b) if fname == "min" else z3.If(a >= b, a, b)
            if fname in ("triton.next_power_of_2", "next_power_of_2") and len(args) == 1:
                a = self.node(args[0])
                if a is None:
                    return None
                p = self.size(f"next_power_of_2({code(args[0]).strip()})", f"triton.next_power_of_2({code(args[0]).strip()})")
                self.facts.assumptions += [p >= a, z3.Implies(a >= 1, p < 2 * a), z3.Or([p == 2 ** k for k in range(20)])]
                return p
            return None
        return None

    def name(self, name: str):
        info = self.state.info
        if name in info.constants:
            return z3.IntVal(info.constants[name])
        from kernlint.source.bounds import assigned_value, assignment

        found = assignment(self.state, name, self.launch.start)
        if found is not None and name in found[0]:
            m = re.fullmatch(r"([A-Za-z_]\w*)\.(?:shape|size\(\))", found[1].strip())
            if m:
                return self.dim(m.group(1), found[0].index(name))
        text = assigned_value(self.state, name, self.launch.start)
        if text is not None and text.strip() != name:
            return self.term(text)
        params = self.wrapper_params()
        if params is not None and re.search(rf"(?<![\w.]){re.escape(name)}\b", params):
            default = re.search(rf"(?<![\w.]){re.escape(name)}\s*(?::\s*int\s*)?=\s*(\d+)\b", params)
            if default:
                return z3.IntVal(int(default.group(1)))  # the wrapper's default
            self.forwarded.add(name)
            return self.size(name, name)  # a size the wrapper is given
        return None

    def branch_conditions(self) -> list:
        """The wrapper's ``if``/``else`` branches the launch sits in, as assumptions."""
        source = self.state.info.source[:self.launch.start]
        lines = source.splitlines()
        if not lines:
            return []
        indent = len(lines[-1]) - len(lines[-1].lstrip())
        out, i = [], len(lines) - 2
        while i >= 0 and indent > 0:
            text = lines[i]
            stripped = text.strip()
            level = len(text) - len(text.lstrip())
            if not stripped or stripped.startswith("#") or level >= indent:
                i -= 1
                continue
            indent = level
            if stripped.startswith("def "):
                break
            m = re.match(r"(?:if|elif)\s+(.+):$", stripped)
            if m:
                term = self.term(m.group(1))
                if term is not None and z3.is_bool(term):
                    out.append(term)
            elif stripped == "else:":
                for j in range(i - 1, -1, -1):
                    above = lines[j]
                    if above.strip() and len(above) - len(above.lstrip()) == level:
                        m = re.match(r"\s*if\s+(.+):$", above)
                        if m:
                            term = self.term(m.group(1))
                            if term is not None and z3.is_bool(term):
                                out.append(z3.Not(term))
                        if re.match(r"\s*(if|def)\b", above):
                            break
            i -= 1
        return out

    def wrapper_params(self) -> str | None:
        """The parameter list of the function the launch sits in (text), found once."""
        if not hasattr(self, "_params"):
            source = self.state.info.source[:self.launch.start]
            found = None
            for found in re.finditer(r"^[ \t]*def[ \t]+\w+[ \t]*\(([^)]*)\)", source, re.M):
                pass
            self._params = found.group(1) if found else None
        return self._params

    def asserts(self) -> list:
        """The wrapper's ``assert`` statements before the launch, as assumptions."""
        source = self.state.info.source[:self.launch.start]
        defs = list(re.finditer(r"^[ \t]*def[ \t]+\w+", source, re.M))
        body = source[defs[-1].end():] if defs else ""
        out = []
        for m in re.finditer(r"^[ \t]*assert[ \t]+(.+?)\s*$", body, re.M):
            # the condition is what precedes the message: a comma inside a call (``cdiv(n, 128)``) stays
            term = self.term(split_top_level(m.group(1))[0])
            if term is not None and z3.is_bool(term):
                out.append(term)
        return out

    def tensor(self, text: str) -> tuple | None:
        """(extent, description) of a tensor argument, when its size is known."""
        text = text.strip()
        m = re.fullmatch(r"([A-Za-z_]\w*)(?:\.(?:contiguous|view\(-1\)|reshape\(-1\)|flatten)\(\))?", text)
        dims = self.tensor_dims(m.group(1)) if m else None
        if dims is None:
            viewed = self.viewed(text)
            if viewed is not None and self.tensor_dims(viewed) is not None:
                return self.numel(viewed), f"{viewed}.numel()"  # the storage the view reaches
        if not m:
            return None
        name = m.group(1)
        if dims is not None:
            return _product(dims), f"{name}.numel()"
        for alias in self.aliases(name):
            if f"{alias}.numel()" in self.facts.names:
                return z3.Int(f"{alias}.numel()"), f"{name}.numel()"
        return None

    def viewed(self, text: str) -> str | None:
        """The tensor whose storage ``text`` (or the view it names) starts at: ``x[:, 0]``,
        ``x[0]``, ``x[:k]``, ``x.t()``. A pointer to the view reaches the viewed tensor's elements
        from its first one, whatever the view's own shape."""
        m = _VIEW.fullmatch(text.strip())
        if m is None and re.fullmatch(r"[A-Za-z_]\w*", text.strip()):
            from kernlint.source.bounds import assignment

            found = assignment(self.state, text.strip(), self.launch.start)
            if found is not None and found[0] == [text.strip()]:
                m = _VIEW.fullmatch(found[1].strip())
        if m is None:
            return None
        if m.group(2) is not None and not all(
                re.fullmatch(r"\s*(?:0?\s*:[^:,]*|0|\.\.\.|None)\s*", i) for i in split_top_level(m.group(2))):
            return None  # a view that starts past the first element
        return m.group(1)

    def shown(self, tensor):
        return _shown_extent(self, tensor)

    def aliases(self, name: str) -> list[str]:
        """``name`` and the tensors it was made like (``out = torch.empty_like(x)``: same size)."""
        from kernlint.source.bounds import assignment

        out = [name]
        while len(out) < 4:
            found = assignment(self.state, out[-1], self.launch.start)
            if found is None or found[0] != [out[-1]]:
                break
            m = _LIKE.match(found[1].strip()) or _SAME.match(found[1].strip())
            if not m or (m.re is _SAME and "-1" not in found[1] and "flatten" not in found[1] and False):
                break
            out.append(m.group(2) if m.re is _LIKE else m.group(1))
        return out


_PARSED: dict[str, cst.BaseExpression | None] = {}


def _parsed(text: str):
    """``text`` parsed as an expression, once (the same sizes are read at every launch)."""
    if text not in _PARSED:
        try:
            _PARSED[text] = cst.parse_expression(text)
        except Exception:  # noqa: BLE001 - wrapper text the engine cannot read: unknown
            _PARSED[text] = None
        if len(_PARSED) > 50000:
            _PARSED.clear()
    return _PARSED[text]


def _grid_function(state, launch):
    """``def grid(META): return (...)`` defined before the launch: its returned expression."""
    grid = launch.grid
    if not isinstance(grid, cst.Name):
        return None
    source = state.info.source[:launch.start]
    found = None
    for m in re.finditer(rf"^([ \t]*)def[ \t]+{re.escape(grid.value)}[ \t]*\(([^)]*)\)[^:]*:[ \t]*\n"
                         rf"\1[ \t]+return[ \t]+(.+)$", source, re.M):
        found = m
    if found is None:
        return None
    try:
        return cst.parse_expression(found.group(3).split("#", 1)[0].strip())
    except Exception:  # noqa: BLE001 - a grid function the engine cannot read: unknown
        return None


def _int(term):
    """Flags passed as comparisons (``group_size == K``) are the integers 0 and 1."""
    return z3.If(term, z3.IntVal(1), z3.IntVal(0)) if term is not None and z3.is_bool(term) else term


def _shown_extent(wrapper, tensor):
    """The extent the module's facts show for a pointer argument (shape or numel as text)."""
    if tensor is None:
        return None
    if tensor.shape is not None:
        dims = [wrapper.term(t) for t in tensor.shape]
        if dims and all(d is not None for d in dims):
            return _product(dims), f"{tensor.expr}.numel()"
    if tensor.numel is not None:
        n = wrapper.term(tensor.numel)
        if n is not None:
            return n, f"{tensor.expr}.numel()"
    return None


def _literal(node) -> int | None:
    if isinstance(node, cst.Integer):
        return int(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(node.expression, cst.Integer):
        return -int(node.expression.value)
    return None


def _product(terms):
    out = z3.IntVal(1)
    for t in terms:
        out = out * t
    return z3.simplify(out) if not terms else out


def config_assumptions(state, model) -> list:
    """``triton.autotune`` configs: one config at a time, its values together (a kernel fact,
    whether or not the module launches the kernel)."""
    kernel = state.kernel.kernel
    configs = []
    for config in kernel.autotune_configs:
        pairs = dict(re.findall(r"['\"](\w+)['\"]\s*:\s*(\d+)", config))
        configs.append(z3.And([model.params[n] == int(v) for n, v in pairs.items() if n in model.params]))
    return [z3.Or(configs)] if configs else []


def launch_facts(state, model) -> list[LaunchFacts]:
    """One :class:`LaunchFacts` per launch of the kernel in its module."""
    from kernlint.source.bounds import grid_expression

    out = []
    kernel = state.kernel.kernel
    names = [p.name for p in kernel.params]
    module_facts = state.info.facts
    for launch in state.info.launches_of(state.name):
        line = state.info.span_of_offsets(launch.start, launch.end).line
        facts = LaunchFacts(f"the launch on line {line}")
        host = module_facts.launch_at(launch.start)
        if host is None or host.starred:
            continue
        texts = {p: arg.text for p, arg in host.args.items() if p in names}
        resolved = {p: z3.IntVal(arg.value.value) for p, arg in host.args.items()
                    if arg.resolved and isinstance(arg.value.value, int) and not isinstance(arg.value.value, bool)}
        constexpr_values: dict = {}
        wrapper = _Wrapper(state, launch, facts, constexpr_values)
        tuned: set[str] = set()
        for p in kernel.params:
            if not p.constexpr:
                continue
            var = model.params[p.name]
            if p.name in texts:
                v = _int(wrapper.term(texts[p.name])) if p.name not in resolved else resolved[p.name]
                if v is not None and z3.is_const(v) and v.decl().name() in wrapper.forwarded:
                    v = None  # a compile-time choice the caller makes, under a contract the engine cannot see
                if v is not None:
                    facts.values[p.name] = v
                    constexpr_values[p.name] = v
                continue
            if any(re.search(rf"['\"]{re.escape(p.name)}['\"]\s*:", c) for c in kernel.autotune_configs):
                facts.values[p.name] = var
                constexpr_values[p.name] = var
                tuned.add(p.name)
                continue
            if p.default is not None and re.fullmatch(r"\d+", p.default.strip()):
                facts.values[p.name] = z3.IntVal(int(p.default))
                constexpr_values[p.name] = facts.values[p.name]

        # scalars first: the sizes they pass (``x.numel()``) are what tensor extents are known by
        for p in kernel.params:
            if not p.constexpr and p.name in texts and p.name not in model.pointers:
                v = _int(wrapper.term(texts[p.name]))
                v = resolved.get(p.name) if v is None else v
                if v is not None:
                    facts.values[p.name] = v
        facts.assumptions += wrapper.asserts() + wrapper.branch_conditions()
        grid = grid_expression(state, launch) or _grid_function(state, launch)
        if isinstance(grid, (cst.Tuple, cst.List)):
            elements = [e.value for e in grid.elements]
        elif grid is not None and not isinstance(grid, (cst.Name, cst.Attribute, cst.Subscript)):
            elements = [grid]
        else:
            elements = None
        if elements is not None:
            for axis in range(3):
                if axis >= len(elements):
                    facts.grid[axis] = z3.IntVal(1)
                    continue
                g = wrapper.node(elements[axis])
                if g is not None:
                    facts.grid[axis] = g
        for p in kernel.params:
            if p.name in model.pointers and p.name in texts:
                extent = wrapper.tensor(texts[p.name])
                if extent is None:
                    extent = wrapper.shown(host.args[p.name].tensor)
                if extent is not None:
                    facts.extents[p.name] = extent
        out.append(facts)
    return out

"""Messages and evidence of the engine's findings: out of bounds (KL101, KL102, KL109) from
violations, a grid short of the data (KL108) from shortfalls."""

from __future__ import annotations

from functools import partial

from kernlint.engine.run import block_violations, bounds_report, grid_shortfalls
from kernlint.source.names import source_text


def out_of_bounds(rule, state, kinds: tuple[str, ...]):
    code = partial(source_text, state.info.module)
    overruns = {id(v.access) for v in block_violations(state)}  # KL109's
    for v in bounds_report(state).violations:
        access = v.access
        if access.kind not in kinds or id(access) in overruns:
            continue
        verb = {"load": "load", "store": "store", "atomic": "atomic"}[access.kind]
        pointer, where = named(state, access)
        if v.how == "launch":
            what = f"the address reaches element {v.address} of a tensor of {v.bound} elements, {v.against}"
        else:
            what = f"an index reaches {v.address} (the bound is {v.bound}), outside {v.against}"
        message = f"out-of-bounds {verb}{where}: `{pointer}`: {what}; witness: {v.text}"
        mask = _mask_node(access)
        yield from reported_once(rule, state, access, message, pointer=pointer,
                             mask=code(mask).strip() if mask is not None else None,
                             witness=v.witness_values(), address=v.address, bound=v.bound, extent_from=v.how)


def block_overruns(rule, state):
    """KL109: block-pointer accesses whose block can leave the shape the block pointer declares."""
    for v in block_violations(state):
        access = v.access
        pointer, where = named(state, access)
        message = (f"block pointer {access.kind} without boundary_check{where}: `{pointer}`: an index reaches "
                   f"{v.address} (the bound is {v.bound}), outside {v.against}; witness: {v.text}")
        yield from reported_once(rule, state, access, message, pointer=pointer, witness=v.witness_values(),
                             address=v.address, bound=v.bound, extent_from=v.how)


def grid_misses_tail(rule, state):
    """KL108: launches whose grid stops short of the last element the kernel's mask lets through."""
    code = partial(source_text, state.info.module)
    for s in grid_shortfalls(state):
        launch = s.facts.launch
        written = {a: code(s.facts.grid_nodes[a]).strip() if a in s.facts.grid_nodes else "1 (not written)"
                   for a in s.axes}
        grid = ", ".join(f"axis {a} is `{text}`" for a, text in written.items())
        message = (f"grid misses the tail: {grid} in this launch, but the mask {s.mask_text} lets through "
                   f"every element below `{s.bound_text}`: element {s.missed} is reached by no program (the "
                   f"last one reached is {s.reached}); witness: {s.text}; use triton.cdiv")
        # (the grid's text is evidence for a fix only where one axis falls short)
        yield rule.finding_at(state, state.info.span_of_offsets(launch.start, launch.end), message,
                              grid=written[s.axes[0]] if len(s.axes) == 1 else None, axes=list(s.axes),
                              witness=dict(s.shown), missed=s.missed, reached=s.reached)


def named(state, access) -> tuple[str, str]:
    """The access's pointer as written, and the helper it sits in (inlined into ``state``'s kernel)."""
    code = partial(source_text, state.info.module)
    pointer = code(access.node.args[0].value).strip() if access.node.args else "?"
    return pointer, f" (in `{access.helper}`, inlined from `{state.name}`)" if access.helper else ""


def reported_once(rule, state, access, message, **evidence):
    """The finding at the access (once per access, however many kernels inline its helper)."""
    node = access.node
    if access.helper is not None and discovered_helper(state, access.helper) is None:
        node = access.site  # a helper the module does not list as a kernel: report at the call
    yield from once_at(rule, state, node, message, key=access.node, **evidence)


def once_at(rule, state, node, message, key=None, scope=None, **evidence):
    """The finding at ``node``, placed in the kernel or helper that holds it (:meth:`SourceRule.finding`),
    once per ``key`` (the node) however many kernels inline the helper (``scope``: once per key in
    each scope, such as a pass that judges the kernel again)."""
    reported = state.info.__dict__.setdefault("_bounds_reported", set())
    ident = (rule.code, id(key if key is not None else node), scope)
    if ident in reported:
        return
    reported.add(ident)
    yield rule.finding(state, node, message, **evidence)


def access_line(state, access) -> int:
    """The line a reader finds the access on: its own call, or the call of a helper the module does
    not list as a kernel."""
    helper = discovered_helper(state, access.helper)
    if helper is not None:
        return helper.locator.span(access.node, None).line
    return state.kernel.locator.span(access.site if access.helper is not None else access.node, None).line


def discovered_helper(state, name: str | None):
    """The helper's own entry among the module's kernels (a ``@triton.jit`` function)."""
    return state.info.discovered(name) if name is not None else None


def _mask_node(access):
    for i, arg in enumerate(access.node.args):
        if arg.keyword is not None and arg.keyword.value == "mask":
            return arg.value
        if arg.keyword is None and i == (1 if access.kind == "load" else 2):
            return arg.value
    return None

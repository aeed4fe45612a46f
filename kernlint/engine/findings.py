"""Messages and evidence of out-of-bounds findings (KL101, KL102) from engine violations."""

from __future__ import annotations

from kernlint.engine.run import bounds_report


def out_of_bounds(rule, state, kinds: tuple[str, ...]):
    code = state.info.module.code_for_node
    for v in bounds_report(state).violations:
        access = v.access
        if access.kind not in kinds:
            continue
        verb = {"load": "load", "store": "store", "atomic": "atomic"}[access.kind]
        pointer = code(access.node.args[0].value).strip() if access.node.args else "?"
        where = f" (in `{access.helper}`, inlined here)" if access.helper else ""
        if v.how == "launch":
            what = f"the address reaches element {v.address} of a tensor of {v.bound} elements, {v.against}"
        else:
            what = f"an index reaches {v.address}, outside {v.against}"
        message = f"out-of-bounds {verb}{where}: `{pointer}`: {what}; witness: {v.text}"
        node = access.node if access.helper is None else access.site
        yield rule.finding(
            state, node, message,
            pointer=pointer,
            mask=code(_mask_node(access)).strip() if _mask_node(access) is not None else None,
            witness=v.witness_values(),
            address=v.address, bound=v.bound, extent_from=v.how,
        )


def _mask_node(access):
    for i, arg in enumerate(access.node.args):
        if arg.keyword is not None and arg.keyword.value == "mask":
            return arg.value
        if arg.keyword is None and i == (1 if access.kind == "load" else 2):
            return arg.value
    return None

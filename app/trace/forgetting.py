"""What the trace builder (``app.trace.build.TraceBuilder``) forgets of a long run, and when: the entries (tensors,
ops, their names, values and histories) of ids the run process says no later event can name (``FORGET`` events:
the program dropped the tensor, and the graph node, so ``app.runner.capture`` reports them), once no pass that may
still be drawn shows them (the head and asked-for passes, the last ones, the current one) and no op kept takes them.
A forgotten entry is never read again, so every graph drawn is the one drawn with every entry kept; the builder's
memory follows what the program holds and the passes that may be drawn, not the run's length.
"""

from __future__ import annotations

from app.trace.values import outputs_of


def pass_refs(b, p) -> set[str]:
    """The ids of the entries drawing ``p`` reads (``TraceBuilder._full``): its ops, those its backward walked (or
    the ancestors of a failed one), their inputs and outputs, its tensors and detach links."""
    if p.folded is not None:
        return set()
    ops = b.ops
    op_ids = set(p.ops) | set(p.bw_ops)
    if p.roots and not p.bw_ops:
        op_ids.update(b._ancestors(p.roots))
    refs = op_ids | set(p.tensors) | {r for r in p.roots if r}
    for o in op_ids:
        op = ops.get(o)
        if op is not None:
            refs.update(x for x in op.get("inputs") or () if x is not None)
            refs.update(outputs_of(op))
    for s, d in p.detaches:
        refs.add(s)
        refs.add(d)
    return refs


def forget(b, ids) -> None:
    """A ``FORGET`` event: ``ids`` are unreachable; the entries nothing to draw needs go now, the others later."""
    tensors, ops = b.tensors, b.ops
    b._unreachable.update(i for i in ids if i in tensors or i in ops)
    if b._unreachable:
        drop(b, ids)


def drop(b, ids) -> None:
    """Forget the unreachable ones among ``ids`` that no pass to draw shows and no op kept takes, then what that
    frees in turn (an op goes once its outputs have, a tensor once the ops taking it have)."""
    keep = [b._drawn_refs] + [q.refs for q in b.tail_buf if q.refs]
    if b.cur is not None:
        keep.append(pass_refs(b, b.cur))
    unreachable, tensors, ops, consumers, seq = b._unreachable, b.tensors, b.ops, b.consumers, b.seq
    stack = [i for i in ids if i in unreachable]
    while stack:
        i = stack.pop()
        if i not in unreachable or any(i in k for k in keep):
            continue
        if i[0] == "n":
            op = ops.get(i)
            if op is not None:
                if any(x in tensors for x in outputs_of(op)):
                    continue  # an output of it is still kept: its producer stays (it names the output's grad_fn)
                del ops[i]
                seq.pop(i, None)
                for x in op.get("inputs") or ():
                    if x is not None:
                        k = consumers.get(x, 0) - 1
                        if k > 0:
                            consumers[x] = k
                        else:
                            consumers.pop(x, None)
                            stack.append(x)
        else:
            t = tensors.get(i)
            if t is not None:
                if consumers.get(i):
                    continue  # an op kept takes it
                del tensors[i]
                for table in (seq, b.cur_value, b.cur_grad, b.names, b.value_hist, b.grad_hist, b._hist_caps[0],
                              b._hist_caps[1]):
                    table.pop(i, None)
                b.optim_params.discard(i)
                if t.get("op"):
                    stack.append(t["op"])
        unreachable.discard(i)

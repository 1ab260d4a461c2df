"""The compiled interpreter's comprehensions (`compiler.Compiler` mixes them in): list, set and dict
comprehensions and generator expressions with any number of `for` clauses, each doing what `ev_ListComp`,
`ev_SetComp`, `ev_DictComp` and `ev_GeneratorExp` do (the same budgets, evaluation order and error lines).

Each `for` clause is one closure (a level) that calls the next level per kept item; the last level hands
the element to the display being built. The first iterable is evaluated in the enclosing scope, every other
one in the comprehension's own scope, as in Python."""

from __future__ import annotations

import ast

from .objects import COMP, Scope


class CompiledComprehensions:
    """Mixed into the Compiler: `_c_ListComp`, `_c_SetComp`, `_c_DictComp`, `_c_GeneratorExp`."""

    def _c_ListComp(self, node):
        run = self._levels(node.generators, self.code_of(node.elt))

        def list_comprehension(scope):
            out = []
            run(scope, Scope({}, scope, COMP), out.append)
            return out
        return list_comprehension

    def _c_SetComp(self, node):
        run = self._levels(node.generators, self.code_of(node.elt))

        def set_comprehension(scope):
            out = set()
            run(scope, Scope({}, scope, COMP), out.add)
            return out
        return set_comprehension

    def _c_DictComp(self, node):
        run = self._levels(node.generators, None)
        key = self.code_of(node.key)
        value = self.code_of(node.value)

        def dict_comprehension(scope):
            out = {}

            def put(inner):
                k = key(inner)  # (the key first, as Python 3.8+)
                out[k] = value(inner)
            run(scope, Scope({}, scope, COMP), put)
            return out
        return dict_comprehension

    def _levels(self, gens, elt):
        """The closure `run(outer, inner, emit)` of a comprehension's `for` clauses: per item kept by every
        clause, `emit(elt(inner))` (`emit(inner)` when `elt` is None: a dict comprehension's key and value)."""
        run = None
        for i in range(len(gens) - 1, -1, -1):
            run = self._level(gens[i], i == 0, run, elt)
        return run

    def _level(self, gen, first, deeper, elt):
        """One `for` clause (`Expressions._comp_loop`): its items, at most max_loop_iterations, a step each."""
        iter_node = gen.iter
        iter_code = self.code_of(iter_node)
        target = gen.target
        name = target.id if type(target) is ast.Name else None
        names = self._target_names(target)
        width = len(names) if names is not None else -1
        ifs = tuple(self.code_of(c) for c in gen.ifs)
        interp = self
        iterate = self.iterate
        assign = self.assign
        check = self._check

        def level(outer, inner, emit):
            inner_vars = inner.vars
            n = 0
            limit = interp.max_loop
            for item in iterate(iter_code(outer if first else inner)):
                n += 1
                if n > limit:
                    raise interp._loop_limit(iter_node)
                interp.steps += 1
                if interp.steps >= interp.next_check:
                    check(iter_node)
                if name is not None:
                    inner_vars[name] = item
                elif names is not None and (type(item) is tuple or type(item) is list) and len(item) == width:
                    for n_, v in zip(names, item):
                        inner_vars[n_] = v
                else:
                    assign(target, item, inner, name_tensors=False)
                kept = True
                for c in ifs:
                    if not c(inner):
                        kept = False
                        break
                if not kept:
                    continue
                if deeper is not None:
                    deeper(outer, inner, emit)
                elif elt is not None:
                    emit(elt(inner))
                else:
                    emit(inner)
        return level

    def _c_GeneratorExp(self, node):
        """Lazy, as `ev_GeneratorExp`: the first iterable now, the rest as items are taken."""
        gens = node.generators
        first_iter = self.code_of(gens[0].iter)
        iterate = self.iterate
        items_of = None
        for i in range(len(gens) - 1, -1, -1):
            items_of = self._generator_level(node, gens[i], None if i == len(gens) - 1 else gens[i + 1], items_of)

        def generator_expression(scope):
            g = items_of(iterate(first_iter(scope)), Scope({}, scope, COMP))
            g.__name__ = g.__qualname__ = "<genexpr>"  # its repr: `<generator object <genexpr> at 0x7f…>`
            return g
        return generator_expression

    def _generator_level(self, node, gen, next_gen, deeper):
        """One `for` clause of a generator expression (`Expressions._genexp_items`), a Python generator."""
        iter_node = gen.iter
        target = gen.target
        name = target.id if type(target) is ast.Name else None
        names = self._target_names(target)
        width = len(names) if names is not None else -1
        ifs = tuple(self.code_of(c) for c in gen.ifs)
        elt = self.code_of(node.elt) if deeper is None else None
        next_iter = self.code_of(next_gen.iter) if next_gen is not None else None
        interp = self
        iterate = self.iterate
        assign = self.assign
        check = self._check
        at = self._at

        def items(iterable, inner):
            inner_vars = inner.vars
            n = 0
            limit = interp.max_loop
            try:
                for item in iterable:
                    n += 1
                    if n > limit:
                        raise interp._loop_limit(iter_node)
                    interp.steps += 1
                    if interp.steps >= interp.next_check:
                        check(iter_node)
                    if name is not None:
                        inner_vars[name] = item
                    elif names is not None and (type(item) is tuple or type(item) is list) and len(item) == width:
                        for n_, v in zip(names, item):
                            inner_vars[n_] = v
                    else:
                        assign(target, item, inner, name_tensors=False)
                    kept = True
                    for c in ifs:
                        if not c(inner):
                            kept = False
                            break
                    if not kept:
                        continue
                    if deeper is None:
                        yield elt(inner)
                    else:
                        yield from deeper(iterate(next_iter(inner)), inner)
            except Exception as e:  # an error while the consumer takes items: at the expression, as in Python
                raise at(e, node) from None
        return items

"""The text closures of the compiled interpreter (`compiler.Compiler` mixes them in): f-strings and `print`,
each doing what its `ev_<Expr>` method (or the `print` builtin) does."""

from __future__ import annotations

import ast

from .budgets import ALLOC_FACTOR
from .objects import PRIMITIVES, SUPER, Builtin, UserFunction


class CompiledText:
    """Mixed into the Compiler: f-strings (`_c_JoinedStr`) and the one-value `print(x)` call."""

    def _print_call(self, node, func, first):
        """`print(x)`: while `print` is the run's builtin, its one-value case (`_print`'s first branch) without
        the call through `Builtin.fn` and `*args`; a program's own `print` is called as any function. `print` of
        an f-string with one or two values (`print(f"step {i}: {loss}")`, in most training loops) makes its
        line, newline included, in one closure and writes it as `emit` does while the output is well within
        its limit."""
        builtins = self.builtins
        print_builtin = builtins["print"]
        emit = self.emit
        to_str = self.to_str
        call = self.call
        call_user = self.call_user
        at = self._at
        interp = self
        arg = node.args[0]
        line = self._f_string(arg, "\n") if type(arg) is ast.JoinedStr else None
        out = self.out  # (the run's one list of printed text, never replaced)
        on_print = self.on_print

        def call_print(scope):
            d = scope.vars
            if "print" in d:
                f = d["print"]
            elif scope.parent is None and "print" in builtins:  # (the name's `load`, inlined)
                f = builtins["print"]
            else:
                f = func(scope)
            if f is print_builtin and line is not None:
                text = line(scope)
                n = len(text) if text.isascii() else len(text.encode("utf-8", "replace"))
                if interp.out_bytes + n <= interp.out_unheld and not interp.held and not interp.cut:
                    out.append(text)  # (`emit`'s common case, inlined)
                    interp.out_bytes += n
                    if on_print is not None:
                        on_print(text)
                    return None
                try:
                    emit(text)
                except Exception as e:
                    raise at(e, node) from None
                return None
            value = first(scope)
            if f is SUPER:
                return interp._super([value], scope, node)
            try:
                if f is print_builtin:
                    emit((value if type(value) is str else to_str(value)) + "\n")
                    return None
                t = type(f)
                if t is Builtin:
                    return f.fn(value)
                if t is UserFunction:
                    return call_user(f, [value], {})
                return call(f, [value], {})
            except Exception as e:
                raise at(e, node) from None
        return call_print

    def _c_JoinedStr(self, node):
        return self._f_string(node, "")

    def _f_string(self, node, line_end):
        """An f-string's closure; with `line_end` ("\\n" for `print`'s line) its text ends with it, not counted
        as the f-string's own (None then, unless it has one or two values)."""
        parts = tuple(v.value if type(v) is ast.Constant else self._formatted(v) for v in node.values)
        joined = self._joined
        alloc = self.alloc
        interp = self

        literal_chars = sum(len(p) for p in parts if type(p) is str)
        run_cap = ALLOC_FACTOR * self.max_seq
        # the literal parts stay in place; each value's text goes into its slot (in the order of the text)
        layout = [p if type(p) is str else None for p in parts]
        slots = tuple((i, p) for i, p in enumerate(parts) if type(p) is not str)

        if 1 <= len(slots) <= 2:
            return self._short_f_string(node, parts, slots, layout, literal_chars, line_end)
        if line_end:
            return None

        def f_string(scope):
            pieces = layout.copy()
            total = literal_chars
            for i, p in slots:
                p = pieces[i] = p(scope)
                total += len(p)
            if total > interp.max_seq:
                return joined(pieces)  # (its error: where the text passed the limit)
            interp.allocated += total  # (`alloc`, inlined: the run's total of list/string items)
            if interp.allocated > run_cap:
                interp.allocated -= total
                alloc(total, "string")  # (its error)
            return "".join(pieces)
        return f_string

    @staticmethod
    def _simple_slot(value_node):
        """(name, spec) of an f-string value `{name}` or `{name:spec}` with a constant spec ('' for none), else
        None: while the name is a variable of the scope holding a plain value (and the spec was checked before),
        its text is `format(value, spec)`, made inline."""
        if type(value_node) is not ast.FormattedValue or value_node.conversion != -1:
            return None
        if type(value_node.value) is not ast.Name:
            return None
        spec = value_node.format_spec
        if spec is None:
            return value_node.value.id, ""
        if not all(type(v) is ast.Constant and type(v.value) is str for v in spec.values):
            return None
        return value_node.value.id, "".join(v.value for v in spec.values)

    def _short_f_string(self, node, parts, slots, layout, literal_chars, line_end):
        """`_c_JoinedStr`'s closure for one or two values (most f-strings): the text is the literal runs and the
        values added up, with no list of pieces (only its error path builds one)."""
        joined = self._joined
        alloc = self.alloc
        interp = self
        run_cap = ALLOC_FACTOR * self.max_seq
        # the literal text before the first value, between the two, and after the last
        runs = ["".join(p for p in parts[a + 1:b] if type(p) is str)
                for a, b in zip((-1, *(i for i, _ in slots)), (*(i for i, _ in slots), len(parts)))]
        runs[-1] += line_end

        def pieces_of(*texts):
            pieces = layout.copy()
            for (i, _), text in zip(slots, texts):
                pieces[i] = text
            return pieces

        if len(slots) == 1:
            ((_, first),) = slots
            before, after = runs

            def f_string_one(scope):
                a = first(scope)
                total = literal_chars + len(a)
                if total > interp.max_seq:
                    return joined(pieces_of(a))  # (its error: where the text passed the limit)
                interp.allocated += total  # (`alloc`, inlined: the run's total of list/string items)
                if interp.allocated > run_cap:
                    interp.allocated -= total
                    alloc(total, "string")  # (its error)
                return before + a + after
            return f_string_one

        (i1, first), (i2, second) = slots
        before, between, after = runs
        simple = (self._simple_slot(node.values[i1]), self._simple_slot(node.values[i2]))
        name1, spec1 = simple[0] or (None, None)
        name2, spec2 = simple[1] or (None, None)
        checked = self._checked_specs
        fused = simple[0] is not None and simple[1] is not None
        specs_known = False  # both specs checked before (`checked` only grows)

        def f_string_two(scope):
            nonlocal specs_known
            d = scope.vars
            if fused and name1 in d and name2 in d:
                # both values plain variables: `formatted`/`plain` inline when their checks are known to pass
                v1 = d[name1]
                v2 = d[name2]
                if not specs_known:
                    specs_known = (spec1 == "" or spec1 in checked) and (spec2 == "" or spec2 in checked)
                if specs_known and type(v1) in PRIMITIVES and type(v2) in PRIMITIVES:
                    try:
                        a = format(v1, spec1)
                        b = format(v2, spec2)
                    except Exception:  # (the closures below raise it, at the value)
                        a = first(scope)
                        b = second(scope)
                else:
                    a = first(scope)
                    b = second(scope)
            else:
                a = first(scope)
                b = second(scope)
            total = literal_chars + len(a) + len(b)
            if total > interp.max_seq:
                return joined(pieces_of(a, b))  # (its error: where the text passed the limit)
            interp.allocated += total  # (`alloc`, inlined)
            if interp.allocated > run_cap:
                interp.allocated -= total
                alloc(total, "string")  # (its error)
            return before + a + between + b + after
        return f_string_two

    def _formatted(self, node):
        """One `{value!conv:spec}` of an f-string, as `ev_FormattedValue`."""
        if type(node) is not ast.FormattedValue:
            return self.code_of(node)
        value_code = self.code_of(node.value)
        value_name = self._read_name(node.value)
        conv = None if node.conversion == -1 else chr(node.conversion)
        convert = self._convert
        spec_node = node.format_spec
        constant_specs = self._constant_specs
        checked_specs = self._checked_specs
        format_value = self.format_value
        ev = self.ev
        at = self._at
        constant_spec = spec_node is not None and all(type(v) is ast.Constant for v in spec_node.values)

        if spec_node is None and conv is None:
            def plain(scope):
                d = scope.vars
                value = d[value_name] if value_name in d else value_code(scope)
                try:
                    if type(value) in PRIMITIVES:  # (format_value's text of them with no spec: str)
                        return str(value)
                    return format_value(value, "")
                except Exception as e:
                    raise at(e, node) from None
            return plain

        known_spec = None  # a constant spec's text, once made (`constant_specs` has it too)

        def formatted(scope):
            nonlocal known_spec
            d = scope.vars
            value = d[value_name] if value_name in d else value_code(scope)
            if conv is not None:
                value = convert(value, conv)
            if spec_node is None:
                spec = ""
            elif known_spec is not None:
                spec = known_spec
            else:
                spec = constant_specs.get(spec_node)
                if spec is None:
                    spec = ev(spec_node, scope)
                    if constant_spec:  # `{x:5d}`: the same text every time
                        constant_specs[spec_node] = spec
                if constant_spec:
                    known_spec = spec
            try:
                if type(value) in PRIMITIVES and spec in checked_specs:  # a spec checked before
                    return format(value, spec)
                return format_value(value, spec)
            except Exception as e:
                raise at(e, node) from None
        return formatted

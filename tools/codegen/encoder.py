"""Emit straight-line encoders: one function per distinct version layout of a message.

As with the decoders, nested structs are inlined and consecutive fixed-width fields
are packed by one precompiled ``struct.Struct``. Encoders only read the object, so
encoding twice gives the same bytes.

The emitted code sees: ``w`` (the output bytearray), ``version`` (for error messages)
and module helpers ``_wuvarint``, ``_write_tagged``, ``_unsupported`` and ``_pack``.
"""

from __future__ import annotations

from tools.codegen.common import FIXED, Code, ModuleCtx, default_expr, has_utf
from tools.codegen.spec import FieldSpec, MessageSpec, StructSpec

__all__ = ["emit_encoder"]


class _StructEncoder:
    """Emits the statements encoding one struct at one version into ``out``."""

    def __init__(
        self, code: Code, ctx: ModuleCtx, msg: MessageSpec, version: int, out: str
    ) -> None:
        self.code = code
        self.ctx = ctx
        self.msg = msg
        self.v = version
        self.flex = msg.is_flexible(version)
        self.out = out
        self.group: list[tuple[str, str]] = []

    def flush(self) -> None:
        if not self.group:
            return
        fmt = "".join(f for f, _ in self.group)
        args = ", ".join(e for _, e in self.group)
        self.code(f"{self.out} += {self.ctx.fmt(fmt)}.pack({args})")
        self.group = []

    def struct(self, st: StructSpec, o: str) -> None:
        code, v = self.code, self.v
        for f in st.fields:
            path = f"{st.class_name}.{f.py_name}"
            if not f.present(v):
                if not f.ignorable:
                    # Kafka's rule: a non-default value that this version cannot carry is an
                    # error unless the field is marked ignorable (then it is dropped).
                    with code.block(f"if {o}.{f.py_name} != {default_expr(f)}:"):
                        code(
                            f'raise _unsupported(f"{path} is not supported at version {{version}}")'
                        )
                continue
            if self.flex and f.tagged(v):
                continue
            self.field(f, f"{o}.{f.py_name}", path)
        self.flush()
        if self.flex:
            self.tagged_section(st, o)
        elif has_utf(self.msg):
            with code.block(f"if {o}.unknown_tagged_fields:"):
                code(
                    f'raise _unsupported(f"tagged fields of {st.class_name} need a '
                    'flexible version, not {version}")'
                )

    def uvarint(self, expr: str) -> None:
        code = self.code
        n = code.var("n")
        code(f"{n} = {expr}")
        with code.block(f"if {n} < 128:"):
            code(f"{self.out}.append({n})")
        # Two bytes inline too: a Produce request's records (127 B to 16 KiB) and
        # most strings and arrays that are not short; a call for the rest.
        with code.block(f"elif {n} < 16384:"):
            code(f"{self.out}.append(({n} & 0x7F) | 0x80)")
            code(f"{self.out}.append({n} >> 7)")
        with code.block("else:"):
            code(f"_wuvarint({self.out}, {n})")

    def prefix(self, f: FieldSpec, length: str, wide: str) -> None:
        """Write a length/count ``length`` (>= 0) in the field's encoding."""
        if f.flexible_encoding(self.v, self.flex):
            self.uvarint(f"{length} + 1")
        else:
            self.code(f"{self.out} += {self.ctx.fmt(wide)}.pack({length})")

    def null(self, f: FieldSpec, x: str, path: str) -> None:
        """Emit the ``x is None`` branch body."""
        code = self.code
        if not f.nullable(self.v):
            code(f'raise _unsupported(f"{path} cannot be null at version {{version}}")')
        elif f.is_struct:
            code(f"{self.out}.append(255)")
        elif f.flexible_encoding(self.v, self.flex):
            code(f"{self.out}.append(0)")
        elif f.type == "string":
            code(f'{self.out} += b"\\xff\\xff"')
        else:
            code(f'{self.out} += b"\\xff\\xff\\xff\\xff"')

    def field(self, f: FieldSpec, expr: str, path: str) -> None:
        code = self.code
        t = f.type
        if t in FIXED:
            self.group.append((FIXED[t][0], f"{expr}.bytes" if t == "uuid" else expr))
            return
        self.flush()
        x = code.var("x")
        code(f"{x} = {expr}")
        if f.ever_nullable or t == "records":
            with code.block(f"if {x} is None:"):
                self.null(f, x, path)
            with code.block("else:"):
                self.present(f, x)
        else:
            self.present(f, x)

    def present(self, f: FieldSpec, x: str) -> None:
        code = self.code
        t = f.type
        if f.is_struct:
            assert f.struct is not None
            if f.nullable(self.v):
                code(f"{self.out}.append(1)")
            _StructEncoder(code, self.ctx, self.msg, self.v, self.out).struct(f.struct, x)
            return
        if not f.is_array:
            self.scalar(f, t, x)
            return
        self.prefix(f, f"len({x})", "i")
        elem = f.elem_type
        if f.struct is not None:
            item = code.var("o")
            with code.block(f"for {item} in {x}:"):
                sub = _StructEncoder(code, self.ctx, self.msg, self.v, self.out)
                sub.struct(f.struct, item)
            return
        if elem in FIXED and elem != "uuid":
            code(f"{self.out} += _pack('>%d{FIXED[elem][0]}' % len({x}), *{x})")
            return
        item = code.var("i")
        with code.block(f"for {item} in {x}:"):
            if elem == "uuid":
                code(f"{self.out} += {item}.bytes")
            else:
                self.scalar(f, elem, item)

    def scalar(self, f: FieldSpec, kind: str, x: str) -> None:
        """A string, bytes or records value ``x`` known not to be None."""
        code = self.code
        if kind == "string":
            b = code.var("b")
            code(f'{b} = {x}.encode("utf-8")')
            self.prefix(f, f"len({b})", "h")
            code(f"{self.out} += {b}")
        else:
            self.prefix(f, f"len({x})", "i")
            code(f"{self.out} += {x}")

    def tagged_section(self, st: StructSpec, o: str) -> None:
        code, v = self.code, self.v
        tagged = [f for f in st.fields if f.present(v) and f.tagged(v)]
        u = code.var("u")
        code(f"{u} = {o}.unknown_tagged_fields")
        conds = [f"{o}.{f.py_name} != {default_expr(f)}" for f in tagged]
        quiet = f"not {u}" + "".join(f" and not {c}" for c in conds)
        with code.block(f"if {quiet}:"):
            code(f"{self.out}.append(0)")
        with code.block("else:"):
            if not tagged:
                code(f"_write_tagged({self.out}, {u})")
                return
            tf = code.var("f")
            code(f"{tf}: dict[int, bytes | bytearray] = dict({u})")
            for f, cond in zip(tagged, conds, strict=True):
                with code.block(f"if {cond}:"):
                    tb = code.var("w")
                    code(f"{tb} = bytearray()")
                    sub = _StructEncoder(code, self.ctx, self.msg, v, tb)
                    sub.field(f, f"{o}.{f.py_name}", f"{st.class_name}.{f.py_name}")
                    sub.flush()
                    code(f"{tf}[{f.tag}] = {tb}")
            code(f"_write_tagged({self.out}, {tf})")


def emit_encoder(ctx: ModuleCtx, msg: MessageSpec, version: int, fn_name: str) -> str:
    """Return the source of ``fn_name(w, o, version)`` encoding ``msg`` at ``version``."""
    code = Code(indent=1)
    enc = _StructEncoder(code, ctx, msg, version, "w")
    enc.struct(msg.body, "o")
    if not code.lines:
        code("pass")
    head = f"def {fn_name}(w: bytearray, o: {msg.name}, version: int) -> None:"
    return head + "\n" + code.text() + "\n"

"""Emit straight-line decoders: one function per distinct version layout of a message.

Nested structs are inlined into their parent's function (including inside array
loops), so decoding a Fetch response calls no per-field helper: consecutive
fixed-width fields, and the int16/int32 length or count prefix that follows them, are
read by a single precompiled ``struct.Struct.unpack_from``. Compact (varint) lengths
take a one-byte fast path and call ``_uvarint`` only for lengths >= 127.

The emitted code sees these names: ``buf`` (a byte memoryview), ``pos`` (the read
position), ``L`` (``len(buf)``), and module helpers ``_uvarint``, ``_malformed``,
``_unpack_from``, ``_new`` (``object.__new__``), ``_setattr``, ``_UUID`` and
``_SAFE_UNKNOWN``.
"""

from __future__ import annotations

from contextlib import nullcontext

from tools.codegen.common import FIXED, Code, ModuleCtx, default_expr, has_utf, py_type
from tools.codegen.spec import FieldSpec, MessageSpec, StructSpec

__all__ = ["emit_decoder", "min_size"]


def min_size(st: StructSpec, msg: MessageSpec, version: int) -> int:
    """The fewest bytes ``st`` can occupy at ``version`` (for count sanity checks)."""
    flex = msg.is_flexible(version)
    total = 1 if flex else 0
    for f in st.fields:
        if not f.present(version) or (flex and f.tagged(version)):
            continue
        if f.type in FIXED:
            total += FIXED[f.type][1]
        elif f.is_struct:
            assert f.struct is not None
            total += 1 if f.nullable(version) else min_size(f.struct, msg, version)
        elif f.flexible_encoding(version, flex):
            total += 1
        else:
            total += 2 if f.type == "string" else 4
    return total


class _StructDecoder:
    """Emits the statements decoding one struct at one version."""

    def __init__(self, code: Code, ctx: ModuleCtx, msg: MessageSpec, version: int) -> None:
        self.code = code
        self.ctx = ctx
        self.msg = msg
        self.v = version
        self.flex = msg.is_flexible(version)
        self.group: list[tuple[str, str]] = []  # pending (format, target variable)
        self.post: list[str] = []  # statements to run after the pending unpack

    def flush(self) -> None:
        if not self.group:
            return
        fmt = "".join(f for f, _ in self.group)
        size = sum(FIXED_SIZE[f] for f, _ in self.group)
        name = self.ctx.fmt(fmt)
        targets = ", ".join(v for _, v in self.group)
        if len(self.group) == 1:
            targets += ","
        self.code(f"{targets} = {name}.unpack_from(buf, pos)")
        self.code(f"pos += {size}")
        for line in self.post:
            self.code(line)
        self.group = []
        self.post = []

    def struct(self, st: StructSpec, target: str) -> None:
        """Emit the statements that decode ``st`` and bind the new object to ``target``."""
        code, v = self.code, self.v
        values: dict[str, str] = {}
        for f in st.fields:
            if not f.present(v) or (self.flex and f.tagged(v)):
                continue
            var = code.var("v")
            values[f.py_name] = var
            self.field(f, var, declare=True, path=f"{st.class_name}.{f.py_name}")
        self.flush()
        utf = "{}"
        if self.flex:
            utf = self.tagged_section(st, values)
        # Built with object.__new__ and slot stores: about twice as fast as the
        # dataclass __init__ (no default-factory checks, no keyword handling).
        code(f"{target} = _new({st.class_name})")
        for f in st.fields:
            if f.py_name in values:
                code(f"{target}.{f.py_name} = {values[f.py_name]}")
            else:
                emit_default(code, f, f"{target}.{f.py_name}", has_utf(self.msg))
        if has_utf(self.msg):
            code(f"{target}.unknown_tagged_fields = {utf}")

    def uvarint(self, var: str) -> None:
        code = self.code
        code(f"{var} = buf[pos]")
        with code.block(f"if {var} < 128:"):
            code("pos += 1")
        with code.block("else:"):
            code(f"{var}, pos = _uvarint(buf, pos)")

    def length(self, f: FieldSpec, prefix: str) -> str:
        """Read a length/count prefix (signed, -1 = null) into a fresh variable."""
        n = self.code.var("n")
        if f.flexible_encoding(self.v, self.flex):
            self.flush()
            self.uvarint(n)
            self.code(f"{n} -= 1")
        else:
            self.group.append((prefix, n))
            self.flush()
        return n

    def field(self, f: FieldSpec, var: str, *, declare: bool, path: str) -> None:
        code, v = self.code, self.v
        t = f.type
        if t in FIXED:
            if t == "uuid":
                hi, lo = code.var("r"), code.var("r")
                self.group.append(("Q", hi))
                self.group.append(("Q", lo))
                # UUID(bytes=...) validates and copies; setting its two slots directly
                # is 2x faster and gives an equal, hashable UUID.
                self.post.append(f"{var} = _new(_UUID)")
                self.post.append(f"_setattr({var}, 'int', ({hi} << 64) | {lo})")
                self.post.append(f"_setattr({var}, 'is_safe', _SAFE_UNKNOWN)")
            else:
                self.group.append((FIXED[t][0], var))
            return
        nullable = f.nullable(v)
        if declare and (f.ever_nullable or t == "records" or f.is_array):
            code(f"{var}: {py_type(f)}")
        if f.is_struct:
            assert f.struct is not None
            if nullable:
                m = code.var("m")
                self.group.append(("b", m))
                self.flush()
                with code.block(f"if {m} < 0:"):
                    code(f"{var} = None")
                with code.block("else:"):
                    self.nested_struct(f.struct, var)
            else:
                self.flush()
                self.nested_struct(f.struct, var)
            return
        n = self.length(f, "h" if t == "string" else "i")
        if nullable:
            with code.block(f"if {n} < 0:"):
                with code.block(f"if {n} != -1:"):
                    code(f'raise _malformed("bad length of {path}")')
                code(f"{var} = None")
            with code.block("else:"):
                self.body(f, var, n, path, check_negative=False)
        else:
            self.body(f, var, n, path, check_negative=True)

    def nested_struct(self, st: StructSpec, var: str) -> None:
        _StructDecoder(self.code, self.ctx, self.msg, self.v).struct(st, var)

    def body(self, f: FieldSpec, var: str, n: str, path: str, *, check_negative: bool) -> None:
        """Emit the part after the length prefix ``n`` (known non-negative unless checked)."""
        code = self.code
        neg = f"{n} < 0 or " if check_negative else ""
        if not f.is_array:
            e = code.var("e")
            code(f"{e} = pos + {n}")
            with code.block(f"if {neg}{e} > L:"):
                code(f'raise _malformed("{path} runs past the end")')
            code(f"{var} = {_slice_value(f.type, e)}")
            code(f"pos = {e}")
            return
        elem = f.elem_type
        if f.struct is not None:
            least = min_size(f.struct, self.msg, self.v)
            cond = f"{neg}{n} > L - pos" if least else (f"{n} < 0" if check_negative else "")
            if cond:
                with code.block(f"if {cond}:"):
                    code(f'raise _malformed("bad count of {path}")')
            code(f"{var} = []")
            with code.block(f"for _ in range({n}):"):
                item = code.var("o")
                _StructDecoder(code, self.ctx, self.msg, self.v).struct(f.struct, item)
                code(f"{var}.append({item})")
            return
        if elem in FIXED and elem != "uuid":
            fc, size = FIXED[elem]
            e = code.var("e")
            code(f"{e} = pos + {size} * {n}")
            with code.block(f"if {neg}{e} > L:"):
                code(f'raise _malformed("{path} runs past the end")')
            code(f"{var} = list(_unpack_from('>%d{fc}' % {n}, buf, pos))")
            code(f"pos = {e}")
            return
        with code.block(f"if {neg}{n} > L - pos:"):
            code(f'raise _malformed("bad count of {path}")')
        code(f"{var} = []")
        with code.block(f"for _ in range({n}):"):
            if elem == "uuid":
                code(f"{var}.append(_UUID(bytes=bytes(buf[pos:pos + 16])))")
                code("pos += 16")
                return
            m = code.var("n")
            if f.flexible_encoding(self.v, self.flex):
                self.uvarint(m)
                code(f"{m} -= 1")
            else:
                prefix = self.ctx.fmt("h" if elem == "string" else "i")
                code(f"{m}, = {prefix}.unpack_from(buf, pos)")
                code(f"pos += {2 if elem == 'string' else 4}")
            e = code.var("e")
            code(f"{e} = pos + {m}")
            with code.block(f"if {m} < 0 or {e} > L:"):
                code(f'raise _malformed("bad element of {path}")')
            code(f"{var}.append({_slice_value(elem, e)})")
            code(f"pos = {e}")

    def tagged_section(self, st: StructSpec, values: dict[str, str]) -> str:
        code, v = self.code, self.v
        tagged = [f for f in st.fields if f.present(v) and f.tagged(v)]
        for f in tagged:
            var = code.var("v")
            values[f.py_name] = var
            code(f"{var}: {py_type(f)}")
            emit_default(code, f, var, has_utf(self.msg))
        utf = code.var("u")
        code(f"{utf}: dict[int, bytes] = {{}}")
        nt = code.var("t")
        self.uvarint(nt)
        with code.block(f"if {nt}:"), code.block(f"for _ in range({nt}):"):
            tg, sz, e = code.var("g"), code.var("z"), code.var("e")
            code(f"{tg}, pos = _uvarint(buf, pos)")
            code(f"{sz}, pos = _uvarint(buf, pos)")
            code(f"{e} = pos + {sz}")
            with code.block(f"if {e} > L:"):
                code(f'raise _malformed("tagged field of {st.class_name} runs past the end")')
            keyword = "if"
            for f in tagged:
                with code.block(f"{keyword} {tg} == {f.tag}:"):
                    sub = _StructDecoder(code, self.ctx, self.msg, v)
                    path = f"{st.class_name}.{f.py_name}"
                    sub.field(f, values[f.py_name], declare=False, path=path)
                    sub.flush()
                    with code.block(f"if pos != {e}:"):
                        code(f'raise _malformed("bad size of tagged field {path}")')
                keyword = "elif"
            with code.block("else:") if tagged else nullcontext():
                code(f"{utf}[{tg}] = bytes(buf[pos:{e}])")
                code(f"pos = {e}")
        return utf


FIXED_SIZE = {
    "?": 1,
    "b": 1,
    "h": 2,
    "H": 2,
    "i": 4,
    "I": 4,
    "q": 8,
    "Q": 8,
    "d": 8,
    "16s": 16,
}


def emit_default(code: Code, f: FieldSpec, target: str, utf: bool) -> None:
    """Bind a fresh default value of ``f`` to ``target`` (structs built inline)."""
    expr = default_expr(f)
    if f.struct is None or f.is_array or expr == "None":
        code(f"{target} = {expr}")
        return
    st = f.struct
    tmp = code.var("d")
    code(f"{tmp} = _new({st.class_name})")
    for sub in st.fields:
        emit_default(code, sub, f"{tmp}.{sub.py_name}", utf)
    if utf:
        code(f"{tmp}.unknown_tagged_fields = {{}}")
    code(f"{target} = {tmp}")


def _slice_value(kind: str, end: str) -> str:
    if kind == "string":
        return f"str(buf[pos:{end}], 'utf-8')"
    if kind == "bytes":
        return f"bytes(buf[pos:{end}])"
    if kind == "records":
        return f"buf[pos:{end}]"
    raise ValueError(kind)


def emit_decoder(ctx: ModuleCtx, msg: MessageSpec, version: int, fn_name: str) -> str:
    """Return the source of ``fn_name(buf, pos) -> (obj, pos)`` for ``msg`` at ``version``."""
    code = Code(indent=1)
    code("L = len(buf)")
    dec = _StructDecoder(code, ctx, msg, version)
    dec.struct(msg.body, "obj")
    code("return obj, pos")
    head = f"def {fn_name}(buf: memoryview, pos: int) -> tuple[{msg.name}, int]:"
    return head + "\n" + code.text() + "\n"

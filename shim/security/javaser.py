"""Just enough of Java's object serialization stream (java.io.ObjectInputStream's grammar) to read the one
object a JCEKS secret-key entry holds, a javax.crypto.SealedObject, and to know where it ends: the
entry has no length before it. Objects, class descriptions (and references to them), strings, arrays,
nulls, enums and block data are read; the fields of each object come back by name. Nothing is loaded or
run: this reads bytes into dicts, bounded in depth and by the data's own length.
"""

from __future__ import annotations

MAGIC = b"\xac\xed\x00\x05"
BASE_HANDLE = 0x7E0000
MAX_DEPTH = 16
PRIMITIVE_SIZES = {"B": 1, "C": 2, "D": 8, "F": 4, "I": 4, "J": 8, "S": 2, "Z": 1}
(TC_NULL, TC_REFERENCE, TC_CLASSDESC, TC_OBJECT, TC_STRING, TC_ARRAY, TC_CLASS, TC_BLOCKDATA, TC_ENDBLOCKDATA,
 TC_BLOCKDATALONG, TC_LONGSTRING, TC_ENUM) = 0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x7A, 0x7C, 0x7E
SC_WRITE_METHOD, SC_BLOCK_DATA, SC_SERIALIZABLE, SC_EXTERNALIZABLE = 0x01, 0x08, 0x02, 0x04


class JavaSerialError(ValueError):
    pass


class ClassDesc:
    def __init__(self, name: str, flags: int, fields: list[tuple[str, str]], parent: "ClassDesc | None"):
        self.name, self.flags, self.fields, self.parent = name, flags, fields, parent

    def lineage(self) -> list["ClassDesc"]:
        """The class and its serializable ancestors, the furthest first (the order their data is written)."""
        out, desc = [], self
        while desc is not None and len(out) <= MAX_DEPTH:
            out.append(desc)
            desc = desc.parent
        return out[::-1]


def read_object(data: bytes, pos: int, end: int) -> tuple[object, int]:
    """The object of the stream starting at ``pos`` (its magic first) and where the stream ends."""
    if data[pos:pos + 4] != MAGIC:
        raise JavaSerialError("not a Java serialization stream")
    r = _Reader(data, pos + 4, end)
    return r.content(0), r.pos


class _Reader:
    def __init__(self, data: bytes, pos: int, end: int):
        self.data, self.pos, self.end, self.handles = data, pos, end, []

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > self.end:
            raise JavaSerialError("the serialized object ends early")
        self.pos += n
        return self.data[self.pos - n:self.pos]

    def int(self, n: int) -> int:
        return int.from_bytes(self.take(n), "big")

    def utf(self, size: int = 2) -> str:
        return self.take(self.int(size)).decode("utf-8", "replace")

    def new_handle(self, value) -> None:
        self.handles.append(value)

    def reference(self):
        index = self.int(4) - BASE_HANDLE
        if not 0 <= index < len(self.handles):
            raise JavaSerialError("a reference to no object")
        return self.handles[index]

    def content(self, depth: int):
        if depth > MAX_DEPTH:
            raise JavaSerialError("the serialized object nests too deep")
        tag = self.int(1)
        if tag == TC_NULL:
            return None
        if tag == TC_REFERENCE:
            return self.reference()
        if tag in (TC_STRING, TC_LONGSTRING):
            text = self.utf(2 if tag == TC_STRING else 8)
            self.new_handle(text)
            return text
        if tag == TC_CLASSDESC:
            return self.class_desc(depth, tag)
        if tag == TC_CLASS:
            desc = self.class_desc(depth + 1)
            self.new_handle(desc)
            return desc
        if tag == TC_ARRAY:
            return self.array(depth)
        if tag == TC_ENUM:
            self.class_desc(depth + 1)
            index = len(self.handles)
            self.new_handle(None)
            self.handles[index] = self.content(depth + 1)
            return self.handles[index]
        if tag == TC_OBJECT:
            return self.object(depth)
        if tag in (TC_BLOCKDATA, TC_BLOCKDATALONG):
            return self.take(self.int(1 if tag == TC_BLOCKDATA else 4))
        raise JavaSerialError(f"an unexpected serialization tag 0x{tag:02x}")

    def class_desc(self, depth: int, tag: int | None = None) -> ClassDesc | None:
        tag = self.int(1) if tag is None else tag
        if tag == TC_NULL:
            return None
        if tag == TC_REFERENCE:
            desc = self.reference()
            if not isinstance(desc, ClassDesc):
                raise JavaSerialError("a class reference to something else")
            return desc
        if tag != TC_CLASSDESC:
            raise JavaSerialError(f"a class description expected, not tag 0x{tag:02x}")
        name = self.utf()
        self.take(8)  # serialVersionUID
        index = len(self.handles)
        self.new_handle(None)
        flags, fields = self.int(1), []
        for _ in range(self.int(2)):
            code, field = chr(self.int(1)), self.utf()
            if code in "[L":
                self.content(depth + 1)  # the field's type, a string
            elif code not in PRIMITIVE_SIZES:
                raise JavaSerialError(f"a field of type code {code!r}")
            fields.append((code, field))
        self.annotation(depth)
        desc = ClassDesc(name, flags, fields, None)
        self.handles[index] = desc
        desc.parent = self.class_desc(depth + 1)
        return desc

    def annotation(self, depth: int) -> None:
        """Class or object annotations: contents up to TC_ENDBLOCKDATA."""
        while self.data[self.pos:self.pos + 1] != bytes([TC_ENDBLOCKDATA]):
            self.content(depth + 1)
        self.take(1)

    def array(self, depth: int):
        desc = self.class_desc(depth + 1)
        if desc is None or not desc.name.startswith("["):
            raise JavaSerialError("an array of no array class")
        index, size, code = len(self.handles), self.int(4), desc.name[1:2]
        self.new_handle(None)
        if code in PRIMITIVE_SIZES:
            value = self.take(size * PRIMITIVE_SIZES[code])
        else:
            if size > self.end - self.pos:  # every element takes a byte at least
                raise JavaSerialError("the serialized array ends early")
            value = [self.content(depth + 1) for _ in range(size)]
        self.handles[index] = value
        return value

    def object(self, depth: int) -> dict:
        desc = self.class_desc(depth + 1)
        if desc is None:
            raise JavaSerialError("an object of no class")
        fields: dict = {"__class__": desc.name}
        self.new_handle(fields)
        for cls in desc.lineage():
            if cls.flags & SC_EXTERNALIZABLE:
                if not cls.flags & SC_BLOCK_DATA:
                    raise JavaSerialError(f"{cls.name} is externalized in the old protocol")
                self.annotation(depth)
                continue
            for code, name in cls.fields:
                fields[name] = self.int(PRIMITIVE_SIZES[code]) if code in PRIMITIVE_SIZES else self.content(depth + 1)
            if cls.flags & SC_WRITE_METHOD:
                self.annotation(depth)
        return fields

"""PVT1: a tiny tensor container that Java (or anything) reads with no library.

Layout, every integer little-endian, no padding or alignment anywhere:

    magic        4 bytes   ASCII "PVT1"
    count        int32     number of tensors that follow
    count times:
      name_len   int32     length in bytes of the name
      name       name_len  bytes, UTF-8
      dtype      int32     ONNX TensorProto element type code: 1 = float32, 7 = int64
                           (also accepted: 2 uint8, 3 int8, 6 int32, 9 bool (1 byte), 11 float64)
      rank       int32
      dims       rank x int64
      data       prod(dims) x element size bytes, little-endian, C (row-major) order

Tensors appear in the order they were given; names are unique within a file.
"""
import struct
from collections import OrderedDict

import numpy as np

MAGIC = b"PVT1"

DTYPE_CODES = {
    np.dtype(np.float32): 1,
    np.dtype(np.uint8): 2,
    np.dtype(np.int8): 3,
    np.dtype(np.int32): 6,
    np.dtype(np.int64): 7,
    np.dtype(np.bool_): 9,
    np.dtype(np.float64): 11,
}
CODE_DTYPES = {v: k for k, v in DTYPE_CODES.items()}


def _as_numpy(t):
    if hasattr(t, "detach"):  # torch tensor
        t = t.detach().cpu().numpy()
    return np.asarray(t)


def dumps(tensors):
    """Serialise an ordered mapping (or list of pairs) name -> array to PVT1 bytes."""
    items = list(tensors.items()) if hasattr(tensors, "items") else list(tensors)
    names = [n for n, _ in items]
    if len(set(names)) != len(names):
        raise ValueError("duplicate tensor names: %r" % names)
    out = [MAGIC, struct.pack("<i", len(items))]
    for name, arr in items:
        arr = _as_numpy(arr)
        if arr.dtype not in DTYPE_CODES:
            raise TypeError("tensor %r: unsupported dtype %s" % (name, arr.dtype))
        nb = name.encode("utf-8")
        out.append(struct.pack("<i", len(nb)))
        out.append(nb)
        out.append(struct.pack("<ii", DTYPE_CODES[arr.dtype], arr.ndim))
        out.append(struct.pack("<%dq" % arr.ndim, *arr.shape))
        out.append(np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes())
    return b"".join(out)


def loads(data):
    """Parse PVT1 bytes into an OrderedDict name -> numpy array."""
    if data[:4] != MAGIC:
        raise ValueError("not a PVT1 file (magic %r)" % data[:4])
    (count,) = struct.unpack_from("<i", data, 4)
    pos = 8
    result = OrderedDict()
    for _ in range(count):
        (nlen,) = struct.unpack_from("<i", data, pos)
        pos += 4
        name = data[pos:pos + nlen].decode("utf-8")
        pos += nlen
        code, rank = struct.unpack_from("<ii", data, pos)
        pos += 8
        dims = struct.unpack_from("<%dq" % rank, data, pos)
        pos += 8 * rank
        dt = CODE_DTYPES[code].newbyteorder("<")
        n = int(np.prod(dims, dtype=np.int64))
        arr = np.frombuffer(data, dtype=dt, count=n, offset=pos).reshape(dims)
        pos += n * dt.itemsize
        result[name] = arr.astype(dt.newbyteorder("="))
    if pos != len(data):
        raise ValueError("trailing %d bytes after %d tensors" % (len(data) - pos, count))
    return result


def save(path, tensors):
    with open(path, "wb") as f:
        f.write(dumps(tensors))


def load(path):
    with open(path, "rb") as f:
        return loads(f.read())

"""Counter-based random numbers for the per-pixel noise: a 32-bit integer hash of (per-sample
stream key, element index), in int32 tensor ops.

Every value is a pure function of (sample seed, stream, element index): no generator state, so a
sample's noise does not depend on which other samples share its batch, and the bits are identical
on CPU and CUDA. The stream keys are computed on the host from the seeds (Python ints). Values are
int32 tensors holding 32-bit patterns: products wrap modulo 2^32 (two's complement), logical right
shifts are an arithmetic shift then a mask.
"""
import torch

M32 = 0xFFFFFFFF
GOLDEN = 0x9E3779B1


def _s32(c):
    """A 32-bit pattern as a signed int32 value."""
    c &= M32
    return c - (1 << 32) if c >= 1 << 31 else c


def _lsr(x, k):
    return (x >> k) & ((1 << (32 - k)) - 1)


def hash32(x):
    """Wellons' lowbias32 on int32 tensors (bit patterns)."""
    x = x ^ _lsr(x, 16)
    x = x * _s32(0x7FEB352D)
    x = x ^ _lsr(x, 15)
    x = x * _s32(0x846CA68B)
    x = x ^ _lsr(x, 16)
    return x


def hash32_int(x):
    """The same hash on one Python int (unsigned result)."""
    x &= M32
    x ^= x >> 16
    x = (x * 0x7FEB352D) & M32
    x ^= x >> 15
    x = (x * 0x846CA68B) & M32
    x ^= x >> 16
    return x


def stream_key(seed, stream):
    """The key (signed int32 value) of random stream `stream` of the sample with this seed."""
    k = hash32_int((seed & M32) ^ hash32_int(((seed >> 32) & M32) ^ hash32_int(0x5EED0000 + stream)))
    return _s32(hash32_int(k ^ hash32_int(stream * GOLDEN)))


def stream_keys(seeds, stream, device):
    """int32 tensor [B, 1] of the stream keys of the given seeds (Python ints)."""
    return torch.tensor([stream_key(int(s), stream) for s in seeds], dtype=torch.int32,
                        device=device)[:, None]


def bits(keys, idx):
    """32 random bits (int32 pattern) per element: keys [B,1] int32, idx int32 (>= 0)."""
    return hash32(idx * _s32(GOLDEN) + keys)


def uniform(keys, idx):
    """float32 in [0, 1) with 24 random bits (exact conversion)."""
    return _lsr(bits(keys, idx), 8).to(torch.float32) * (1.0 / 16777216.0)


def normal(keys, idx):
    """Approximately standard normal float32: the sum of four 16-bit uniforms, centred and scaled
    (Irwin-Hall, |x| <= 3.46). Uses element indices 2*idx and 2*idx+1 of the stream."""
    a = bits(keys, idx * 2)
    b = bits(keys, idx * 2 + 1)
    s = (a & 0xFFFF) + _lsr(a, 16) + (b & 0xFFFF) + _lsr(b, 16)  # exact integer sum < 2^18
    u = (s.to(torch.float32) + 2.0) * (1.0 / 65536.0)  # sum of four U(0,1) centred in their bins
    return (u - 2.0) * 1.7320508075688772

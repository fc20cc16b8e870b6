"""libpvn3d_ops from PyTorch: a thin ctypes binding over the library's plain C ABI.

The same CPU and CUDA kernels that the Java side registers with ONNX Runtime, called on torch
tensors (no compiled extension, no ORT). Used to train PVN3D with the project's own kernels
(``ops.use_backend("native")``) and to check the kernels from Python.

Finding the library (first hit wins; ``library_candidates()`` lists them):
  1. ``$PVN3D_OPS_PATH``: the library file itself, or a folder holding ``libpvn3d_ops.so``;
  2. ``<repo>/build/libpvn3d_ops.so`` (``cmake -S . -B build && cmake --build build``);
  3. ``<repo>/cuda-ops/target/cmake/libpvn3d_ops.so`` (the Maven build's copy).
The library is loaded on first use; ``LibraryNotFound`` names every path tried and why each failed.

Operators (``cuda-ops/<op>/<op>.h`` gives the C side, spec/ops.md the semantics):
  * plain kernel calls, no autograd: ``furthest_point_sample(xyz, npoint)``,
    ``gather_points(features, idx)``, ``ball_query(xyz, new_xyz, radius, nsample)``,
    ``group_points(features, idx)``, ``three_nn(unknown, known)``,
    ``three_interpolate(features, idx, weight)``; and the pose stage ``vote_aggregate(...)``,
    ``pose_solve(...)``. Inputs must be float32 / int64, contiguous, all on one device; shapes,
    dtypes and devices are checked here first (``ops.OpError`` with the operator, input and value).
    CPU tensors go to ``pvn3d_<op>_cpu``, CUDA tensors to ``pvn3d_<op>_cuda`` on PyTorch's CURRENT
    stream of the tensors' device; outputs and scratch (the FPS / pose workspaces, the index-error
    flags) are allocated with torch on that device, so the caching allocator serves them and
    nothing synchronises.
  * autograd Functions ``FurthestPointSample``, ``GatherPoints``, ``BallQuery``, ``GroupPoints``,
    ``ThreeNN``, ``ThreeInterpolate`` (what ``ops.use_backend("native")`` routes the model to): float
    inputs of any floating dtype are cast to float32 and made contiguous first (the kernels are
    float32; under autocast the ops therefore run in float32), index inputs must be int64.
    GatherPoints, GroupPoints and ThreeInterpolate have a backward computed from the saved indices
    (scatter-add of the output gradient into [B,C,N] with torch's ``scatter_add_`` on the same
    device; ThreeInterpolate also gives the gradient w.r.t. ``weight`` when that requires grad).
    FurthestPointSample, BallQuery and ThreeNN outputs are non-differentiable (``dist2`` of ThreeNN
    too, as in PointNet++'s original extension).

Errors: a non-OK status raises ``NativeOpError`` (a subclass of ``ops.OpError`` and of
``RuntimeError``) carrying ``status``, ``status_name`` and the library's ``pvn3d_last_error()``
message, e.g. "PVN3D_GatherPoints: input idx holds index 9 at flat position 3, outside [0, 8)".

CUDA index errors (Gather/Group/ThreeInterpolate read indices; PoseSolve checks model_kps) are known
only once the kernel has run. The launchers write a 2-word device flag (common/index_check.h); how
this binding reads it is ``set_index_check(mode)`` (default from ``$PVN3D_INDEX_CHECK``, else
"deferred"):
  * "deferred": the flag stays on the device and is queued; ``check_index_errors()`` waits for the
    devices concerned, reads every queued flag and raises for the first bad one. Nothing
    synchronises per call. The queue is also drained automatically once it holds
    ``PENDING_LIMIT`` flags (one synchronisation every few dozen training steps) so it never
    grows without bound; a trainer calls ``check_index_errors()`` at its log interval, where it
    synchronises for the loss values anyway. An error found then names the operator that failed,
    not the Python line that is running.
  * "sync": every CUDA call waits for its stream and raises at once (debugging);
  * "off": no flag at all (NULL): bad indices read nothing out of bounds and give 0, unreported.
CPU calls always validate indices before computing and raise at once.
"""
import ctypes
import os
import threading

import torch

from . import ops

ENV_PATH = "PVN3D_OPS_PATH"
ENV_INDEX_CHECK = "PVN3D_INDEX_CHECK"
LIB_FILE = "libpvn3d_ops.so"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PVN3D_OK = 0
PVN3D_ERR_INDEX_OUT_OF_RANGE = 2
PVN3D_ERR_NO_CUDA = 4
PVN3D_MASK_FLOAT32 = 0
PVN3D_MASK_BOOL = 1
PENDING_LIMIT = 1024
INDEX_CHECK_MODES = ("deferred", "sync", "off")


class LibraryNotFound(OSError):
    """libpvn3d_ops could not be loaded from any candidate path."""


class NativeOpError(ops.OpError, RuntimeError):
    """A non-OK pvn3d_status: .status (int), .status_name ("PVN3D_ERR_...") and the library's
    message (str(e))."""

    def __init__(self, status, status_name, message):
        super().__init__(message)
        self.status = int(status)
        self.status_name = status_name
        self.message = message


# ---------------------------------------------------------------------------------------------
# loading

_i64, _int, _f32, _sz, _p, _s = (ctypes.c_int64, ctypes.c_int, ctypes.c_float, ctypes.c_size_t,
                                  ctypes.c_void_p, ctypes.c_char_p)
_PROTOS = {
    "pvn3d_last_error": (_s, []),
    "pvn3d_clear_error": (None, []),
    "pvn3d_status_name": (_s, [_int]),
    "pvn3d_version": (_s, []),
    "pvn3d_built_with_cuda": (_int, []),
    "pvn3d_set_num_threads": (None, [_int]),
    "pvn3d_get_num_threads": (_int, []),
    "pvn3d_index_error_describe": (_int, [_s, _s, _i64, _i64, _i64]),
    "pvn3d_kabsch_error_describe": (_int, [_s, _i64, _i64, _i64, _s]),
    "pvn3d_furthest_point_sample_cpu": (_int, [_i64, _i64, _i64, _p, _p]),
    "pvn3d_furthest_point_sample_cuda_workspace_bytes": (_sz, [_i64, _i64, _i64]),
    "pvn3d_furthest_point_sample_cuda": (_int, [_i64, _i64, _i64, _p, _p, _p, _sz, _p]),
    "pvn3d_gather_points_cpu": (_int, [_i64] * 4 + [_p] * 3),
    "pvn3d_gather_points_cuda": (_int, [_i64] * 4 + [_p] * 5),
    "pvn3d_ball_query_cpu": (_int, [_i64, _i64, _i64, _f32, _i64, _p, _p, _p]),
    "pvn3d_ball_query_cuda": (_int, [_i64, _i64, _i64, _f32, _i64, _p, _p, _p, _p]),
    "pvn3d_group_points_cpu": (_int, [_i64] * 5 + [_p] * 3),
    "pvn3d_group_points_cuda": (_int, [_i64] * 5 + [_p] * 5),
    "pvn3d_three_nn_cpu": (_int, [_i64] * 3 + [_p] * 4),
    "pvn3d_three_nn_cuda": (_int, [_i64] * 3 + [_p] * 5),
    "pvn3d_three_interpolate_cpu": (_int, [_i64] * 4 + [_p] * 4),
    "pvn3d_three_interpolate_cuda": (_int, [_i64] * 4 + [_p] * 6),
    "pvn3d_vote_aggregate_cpu": (_int, [_p, _p, _int, _i64, _i64, _i64, _f32, _i64, _int, _p, _p]),
    "pvn3d_vote_aggregate_cuda_workspace_bytes": (_sz, [_i64] * 3),
    "pvn3d_vote_aggregate_cuda": (_int, [_p, _p, _int, _i64, _i64, _i64, _f32, _i64, _int, _p, _p,
                                         _p, _sz, _p]),
    "pvn3d_pose_solve_cpu": (_int, [_p, _p, _int, _i64, _i64, _i64, _p, _i64, _i64, _f32, _i64,
                                    _int, _p, _p, _p, _p]),
    "pvn3d_pose_solve_cuda_workspace_bytes": (_sz, [_i64] * 3),
    "pvn3d_pose_solve_cuda": (_int, [_p, _p, _int, _i64, _i64, _i64, _p, _i64, _i64, _f32, _i64,
                                     _int, _p, _p, _p, _p, _p, _p, _sz, _p]),
}

_lib = None
_lib_path = None
_load_lock = threading.Lock()


def library_candidates():
    """The paths tried, in order: [(path, where it came from)]."""
    out = []
    env = os.environ.get(ENV_PATH)
    if env:
        path = os.path.join(env, LIB_FILE) if os.path.isdir(env) else env
        out.append((path, "$" + ENV_PATH))
    out.append((os.path.join(REPO, "build", LIB_FILE), "build folder"))
    out.append((os.path.join(REPO, "cuda-ops", "target", "cmake", LIB_FILE), "Maven build"))
    return out


def library():
    """The loaded library (ctypes.CDLL), loading it on first call."""
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    with _load_lock:
        if _lib is not None:
            return _lib
        tried = []
        env_given = bool(os.environ.get(ENV_PATH))
        for path, origin in library_candidates():
            if not os.path.isfile(path):
                tried.append("%s (%s): no such file" % (path, origin))
                if env_given and origin.startswith("$"):
                    break  # an explicit path that is wrong is an error, not a hint to look elsewhere
                continue
            try:
                lib = ctypes.CDLL(path)
                for name, (res, args) in _PROTOS.items():
                    fn = getattr(lib, name)
                    fn.restype = res
                    fn.argtypes = args
            except (OSError, AttributeError) as e:
                tried.append("%s (%s): %s" % (path, origin, e))
                if origin.startswith("$"):
                    break
                continue
            _lib, _lib_path = lib, path
            return lib
        raise LibraryNotFound(
            "libpvn3d_ops not found; tried:\n  " + "\n  ".join(tried)
            + "\nBuild it with `cmake -S . -B build -DPVN3D_WITH_CUDA=OFF && cmake --build build -j` "
              "(CUDA: leave out -DPVN3D_WITH_CUDA=OFF, add -DCMAKE_CUDA_ARCHITECTURES=90) from the "
              "repository root, or set %s to the library file or its folder." % ENV_PATH)


def library_path():
    library()
    return _lib_path


def available():
    """True when the library loads (never raises)."""
    try:
        library()
        return True
    except LibraryNotFound:
        return False


def version():
    return library().pvn3d_version().decode()


def built_with_cuda():
    return bool(library().pvn3d_built_with_cuda())


def set_num_threads(n):
    """Threads of the CPU kernels (n <= 0: the library's default, all cores)."""
    library().pvn3d_set_num_threads(int(n))


def get_num_threads():
    return int(library().pvn3d_get_num_threads())


def _error(status):
    lib = library()
    msg = (lib.pvn3d_last_error() or b"").decode(errors="replace")
    name = (lib.pvn3d_status_name(int(status)) or b"?").decode()
    return NativeOpError(status, name, msg or name)


def _call(fn, *args):
    st = fn(*args)
    if st != PVN3D_OK:
        raise _error(st)


# ---------------------------------------------------------------------------------------------
# CUDA index-error flags

_mode = os.environ.get(ENV_INDEX_CHECK, "deferred")
if _mode not in INDEX_CHECK_MODES:
    _mode = "deferred"
_pending = []  # (flag tensor [2] int64 on a device, describe(w0, w1) -> status)
_pending_lock = threading.Lock()


def set_index_check(mode):
    """How CUDA index errors are read: "deferred" (default), "sync" or "off" (module doc).
    Returns the previous mode."""
    global _mode
    if mode not in INDEX_CHECK_MODES:
        raise ValueError("index check mode must be one of %s, got %r" % (INDEX_CHECK_MODES, mode))
    prev, _mode = _mode, mode
    return prev


def get_index_check():
    return _mode


def pending_index_checks():
    """Number of CUDA index-error flags queued and not yet read."""
    return len(_pending)


def check_index_errors():
    """Reads every queued CUDA index-error flag (waiting for the devices that hold them) and raises
    NativeOpError for the first bad index, in call order. A no-op when nothing is queued (CPU only,
    or mode "sync"/"off"). The queue is emptied either way."""
    global _pending
    with _pending_lock:
        items, _pending = _pending, []
    if not items:
        return
    by_dev = {}
    for i, (flag, _) in enumerate(items):
        by_dev.setdefault(flag.device, []).append(i)
    words = [None] * len(items)
    for dev, ids in by_dev.items():
        torch.cuda.synchronize(dev)  # the flags may have been written on any stream
        vals = torch.stack([items[i][0] for i in ids]).cpu()
        for j, i in enumerate(ids):
            words[i] = (int(vals[j, 0]), int(vals[j, 1]))
    for (flag, describe), (w0, w1) in zip(items, words):
        if w0 != -1:
            st = describe(w0, w1)
            if st != PVN3D_OK:
                raise _error(st)


def decode_index_report(w0, w1):
    """(position, value) of a CUDA index report's two int64 words (index_check.h: the position in the
    high half of both words, the bad index's high and low halves below it); (-1, -1) when w0 is -1."""
    if w0 == -1:
        return -1, -1
    u0, u1 = w0 & 0xFFFFFFFFFFFFFFFF, w1 & 0xFFFFFFFFFFFFFFFF
    val = ((u0 << 32) | (u1 & 0xFFFFFFFF)) & 0xFFFFFFFFFFFFFFFF
    return u0 >> 32, val - (1 << 64) if val >= 1 << 63 else val


def _index_describer(op, input_name, limit):
    def describe(w0, w1):
        pos, val = decode_index_report(w0, w1)
        return library().pvn3d_index_error_describe(op.encode(), input_name.encode(), pos, val, limit)
    return describe


def _new_flag(device):
    """A device flag for one launch, {-1, -1} as the launchers expect it (None in mode "off")."""
    if _mode == "off":
        return None
    return torch.full((2,), -1, dtype=torch.int64, device=device)


def _after_launch(flag, describe):
    if flag is None:
        return
    if _mode == "sync":
        torch.cuda.current_stream(flag.device).synchronize()
        w0, w1 = (int(v) for v in flag.cpu())
        if w0 != -1:
            st = describe(w0, w1)
            if st != PVN3D_OK:
                raise _error(st)
        return
    with _pending_lock:
        _pending.append((flag, describe))
        full = len(_pending) >= PENDING_LIMIT
    if full:
        check_index_errors()


# ---------------------------------------------------------------------------------------------
# argument checks


def _fail(op, msg):
    raise ops.OpError("PVN3D_%s: %s" % (op, msg))


def _check(op, name, t, dtype, ndim, shape=None):
    """t: a tensor of `dtype`, `ndim` dimensions, contiguous; shape: sizes where not None."""
    if not torch.is_tensor(t):
        _fail(op, "input %s must be a torch tensor, got %s" % (name, type(t).__name__))
    if t.dtype != dtype:
        _fail(op, "input %s must be %s, got %s" % (name, str(dtype).replace("torch.", ""),
                                                  str(t.dtype).replace("torch.", "")))
    if t.dim() != ndim or (shape is not None and any(
            want is not None and int(got) != int(want) for got, want in zip(t.shape, shape))):
        want = "[%s]" % ",".join("?" if w is None else str(w) for w in (shape or [None] * ndim))
        _fail(op, "input %s must have shape %s, got %s" % (name, want, list(t.shape)))
    if not t.is_contiguous():
        _fail(op, "input %s must be contiguous (call .contiguous())" % name)
    if t.device.type not in ("cpu", "cuda"):
        _fail(op, "input %s is on %s; only cpu and cuda tensors are supported" % (name, t.device))


def _same_device(op, named):
    dev = named[0][1].device
    for name, t in named[1:]:
        if t.device != dev:
            _fail(op, "input %s is on %s but %s is on %s" % (name, t.device, named[0][0], dev))
    return dev


class _OnDevice:
    """Makes `device` current for the launch (the library's runtime launches on the calling
    thread's current device) and gives torch's current stream there as a void*."""

    def __init__(self, device):
        self.device = device
        self.ctx = None

    def __enter__(self):
        if self.device.index is not None and self.device.index != torch.cuda.current_device():
            self.ctx = torch.cuda.device(self.device)
            self.ctx.__enter__()
        return ctypes.c_void_p(torch.cuda.current_stream(self.device).cuda_stream)

    def __exit__(self, *exc):
        if self.ctx is not None:
            self.ctx.__exit__(*exc)
        return False


def _ptr(t):
    return ctypes.c_void_p(t.data_ptr()) if t is not None else None


# ---------------------------------------------------------------------------------------------
# the six PointNet++ operators: plain kernel calls


def furthest_point_sample(xyz, npoint):
    """xyz float32 [B,N,3] -> idx int64 [B,npoint]."""
    op = "FurthestPointSample"
    _check(op, "xyz", xyz, torch.float32, 3, (None, None, 3))
    B, N, _ = xyz.shape
    npoint = int(npoint)
    lib = library()
    idx = torch.empty((B, max(npoint, 0)), dtype=torch.int64, device=xyz.device)
    if xyz.is_cuda:
        with _OnDevice(xyz.device) as stream:
            nbytes = int(lib.pvn3d_furthest_point_sample_cuda_workspace_bytes(B, N, npoint))
            ws = torch.empty(nbytes, dtype=torch.uint8, device=xyz.device) if nbytes > 0 else None
            _call(lib.pvn3d_furthest_point_sample_cuda, B, N, npoint, _ptr(xyz), _ptr(idx), _ptr(ws),
                  nbytes, stream)
    else:
        _call(lib.pvn3d_furthest_point_sample_cpu, B, N, npoint, _ptr(xyz), _ptr(idx))
    return idx


def gather_points(features, idx):
    """features float32 [B,C,N], idx int64 [B,M] -> [B,C,M]."""
    op = "GatherPoints"
    _check(op, "features", features, torch.float32, 3)
    B, C, N = features.shape
    _check(op, "idx", idx, torch.int64, 2, (B, None))
    dev = _same_device(op, [("features", features), ("idx", idx)])
    M = idx.shape[1]
    lib = library()
    out = torch.empty((B, C, M), dtype=torch.float32, device=dev)
    if dev.type == "cuda":
        flag = _new_flag(dev)
        with _OnDevice(dev) as stream:
            _call(lib.pvn3d_gather_points_cuda, B, C, N, M, _ptr(features), _ptr(idx), _ptr(out),
                  _ptr(flag), stream)
        _after_launch(flag, _index_describer("PVN3D_GatherPoints", "idx", N))
    else:
        _call(lib.pvn3d_gather_points_cpu, B, C, N, M, _ptr(features), _ptr(idx), _ptr(out))
    return out


def ball_query(xyz, new_xyz, radius, nsample):
    """xyz float32 [B,N,3], new_xyz float32 [B,M,3] -> idx int64 [B,M,nsample]."""
    op = "BallQuery"
    _check(op, "xyz", xyz, torch.float32, 3, (None, None, 3))
    B, N, _ = xyz.shape
    _check(op, "new_xyz", new_xyz, torch.float32, 3, (B, None, 3))
    dev = _same_device(op, [("xyz", xyz), ("new_xyz", new_xyz)])
    M = new_xyz.shape[1]
    nsample = int(nsample)
    lib = library()
    idx = torch.empty((B, M, max(nsample, 0)), dtype=torch.int64, device=dev)
    if dev.type == "cuda":
        with _OnDevice(dev) as stream:
            _call(lib.pvn3d_ball_query_cuda, B, N, M, float(radius), nsample, _ptr(xyz), _ptr(new_xyz),
                  _ptr(idx), stream)
    else:
        _call(lib.pvn3d_ball_query_cpu, B, N, M, float(radius), nsample, _ptr(xyz), _ptr(new_xyz),
              _ptr(idx))
    return idx


def group_points(features, idx):
    """features float32 [B,C,N], idx int64 [B,M,S] -> [B,C,M,S]."""
    op = "GroupPoints"
    _check(op, "features", features, torch.float32, 3)
    B, C, N = features.shape
    _check(op, "idx", idx, torch.int64, 3, (B, None, None))
    dev = _same_device(op, [("features", features), ("idx", idx)])
    _, M, S = idx.shape
    lib = library()
    out = torch.empty((B, C, M, S), dtype=torch.float32, device=dev)
    if dev.type == "cuda":
        flag = _new_flag(dev)
        with _OnDevice(dev) as stream:
            _call(lib.pvn3d_group_points_cuda, B, C, N, M, S, _ptr(features), _ptr(idx), _ptr(out),
                  _ptr(flag), stream)
        _after_launch(flag, _index_describer("PVN3D_GroupPoints", "idx", N))
    else:
        _call(lib.pvn3d_group_points_cpu, B, C, N, M, S, _ptr(features), _ptr(idx), _ptr(out))
    return out


def three_nn(unknown, known):
    """unknown float32 [B,n,3], known float32 [B,m,3] -> (dist2 float32 [B,n,3], idx int64 [B,n,3])."""
    op = "ThreeNN"
    _check(op, "unknown", unknown, torch.float32, 3, (None, None, 3))
    B, n, _ = unknown.shape
    _check(op, "known", known, torch.float32, 3, (B, None, 3))
    dev = _same_device(op, [("unknown", unknown), ("known", known)])
    m = known.shape[1]
    lib = library()
    dist2 = torch.empty((B, n, 3), dtype=torch.float32, device=dev)
    idx = torch.empty((B, n, 3), dtype=torch.int64, device=dev)
    if dev.type == "cuda":
        with _OnDevice(dev) as stream:
            _call(lib.pvn3d_three_nn_cuda, B, n, m, _ptr(unknown), _ptr(known), _ptr(dist2), _ptr(idx),
                  stream)
    else:
        _call(lib.pvn3d_three_nn_cpu, B, n, m, _ptr(unknown), _ptr(known), _ptr(dist2), _ptr(idx))
    return dist2, idx


def three_interpolate(features, idx, weight):
    """features float32 [B,C,m], idx int64 [B,n,3], weight float32 [B,n,3] -> [B,C,n]."""
    op = "ThreeInterpolate"
    _check(op, "features", features, torch.float32, 3)
    B, C, m = features.shape
    _check(op, "idx", idx, torch.int64, 3, (B, None, 3))
    n = idx.shape[1]
    _check(op, "weight", weight, torch.float32, 3, (B, n, 3))
    dev = _same_device(op, [("features", features), ("idx", idx), ("weight", weight)])
    lib = library()
    out = torch.empty((B, C, n), dtype=torch.float32, device=dev)
    if dev.type == "cuda":
        flag = _new_flag(dev)
        with _OnDevice(dev) as stream:
            _call(lib.pvn3d_three_interpolate_cuda, B, C, m, n, _ptr(features), _ptr(idx), _ptr(weight),
                  _ptr(out), _ptr(flag), stream)
        _after_launch(flag, _index_describer("PVN3D_ThreeInterpolate", "idx", m))
    else:
        _call(lib.pvn3d_three_interpolate_cpu, B, C, m, n, _ptr(features), _ptr(idx), _ptr(weight),
              _ptr(out))
    return out


# ---------------------------------------------------------------------------------------------
# the pose stage (no autograd)


def _mask_arg(op, mask, B, N, dev):
    if mask is None:
        return None, PVN3D_MASK_FLOAT32
    if mask.dtype == torch.bool:
        _check(op, "mask", mask, torch.bool, 2, (B, N))
        kind = PVN3D_MASK_BOOL  # one byte per element, nonzero = masked
    else:
        _check(op, "mask", mask, torch.float32, 2, (B, N))
        kind = PVN3D_MASK_FLOAT32
    if mask.device != dev:
        _fail(op, "input mask is on %s but votes is on %s" % (mask.device, dev))
    return mask, kind


def vote_aggregate(votes, mask=None, bandwidth=0.08, max_iter=300, center_filter=1):
    """votes float32 [B,K,N,3], mask bool or float32 [B,N] (None: all points) ->
    (kps float32 [B,K,3], inliers int64 [B]) on votes' device (cuda-ops/vote_aggregate/...h)."""
    op = "VoteAggregate"
    _check(op, "votes", votes, torch.float32, 4, (None, None, None, 3))
    B, K, N, _ = votes.shape
    dev = votes.device
    mask, kind = _mask_arg(op, mask, B, N, dev)
    lib = library()
    kps = torch.empty((B, K, 3), dtype=torch.float32, device=dev)
    inl = torch.empty((B,), dtype=torch.int64, device=dev)
    args = (_ptr(votes), _ptr(mask), kind, B, K, N, float(bandwidth), int(max_iter), int(center_filter),
            _ptr(kps), _ptr(inl))
    if dev.type == "cuda":
        with _OnDevice(dev) as stream:
            nbytes = int(lib.pvn3d_vote_aggregate_cuda_workspace_bytes(B, K, N))
            ws = torch.empty(max(nbytes, 1), dtype=torch.uint8, device=dev)
            _call(lib.pvn3d_vote_aggregate_cuda, *args, _ptr(ws), nbytes, stream)
    else:
        _call(lib.pvn3d_vote_aggregate_cpu, *args)
    return kps, inl


def pose_solve(votes, mask, model_kps, bandwidth=0.08, max_iter=300, center_filter=1):
    """votes float32 [B,K,N,3], mask bool/float32 [B,N] or None, model_kps float32 [K,3] or [B,K,3]
    -> (R [B,3,3], t [B,3], kps [B,K,3], inliers int64 [B]) on votes' device; NaN R/t/kps for an
    item without a masked point (cuda-ops/pose_solve/pose_solve.h). On CUDA a non-finite model_kps
    is reported through the index-check mechanism (mode, check_index_errors())."""
    op = "PoseSolve"
    _check(op, "votes", votes, torch.float32, 4, (None, None, None, 3))
    B, K, N, _ = votes.shape
    dev = votes.device
    mask, kind = _mask_arg(op, mask, B, N, dev)
    if not torch.is_tensor(model_kps) or model_kps.dim() not in (2, 3):
        _fail(op, "input model_kps must be a [K,3] or [B,K,3] tensor")
    _check(op, "model_kps", model_kps, torch.float32, model_kps.dim(),
           (None, 3) if model_kps.dim() == 2 else (None, None, 3))
    if model_kps.device != dev:
        _fail(op, "input model_kps is on %s but votes is on %s" % (model_kps.device, dev))
    model_B = 0 if model_kps.dim() == 2 else int(model_kps.shape[0])
    model_K = int(model_kps.shape[-2])
    lib = library()
    R = torch.empty((B, 3, 3), dtype=torch.float32, device=dev)
    t = torch.empty((B, 3), dtype=torch.float32, device=dev)
    kps = torch.empty((B, K, 3), dtype=torch.float32, device=dev)
    inl = torch.empty((B,), dtype=torch.int64, device=dev)
    args = (_ptr(votes), _ptr(mask), kind, B, K, N, _ptr(model_kps), model_B, model_K, float(bandwidth),
            int(max_iter), int(center_filter), _ptr(R), _ptr(t), _ptr(kps), _ptr(inl))
    if dev.type == "cuda":
        flag = _new_flag(dev)
        with _OnDevice(dev) as stream:
            nbytes = int(lib.pvn3d_pose_solve_cuda_workspace_bytes(B, K, N))
            ws = torch.empty(max(nbytes, 1), dtype=torch.uint8, device=dev)
            _call(lib.pvn3d_pose_solve_cuda, *args, _ptr(flag), _ptr(ws), nbytes, stream)
        numel = int(model_kps.numel())
        _after_launch(flag, lambda pos, bits: lib.pvn3d_kabsch_error_describe(
            b"PVN3D_PoseSolve", pos, bits, numel, b"kps"))
    else:
        _call(lib.pvn3d_pose_solve_cpu, *args)
    return R, t, kps, inl


# ---------------------------------------------------------------------------------------------
# autograd Functions (the training path of ops.use_backend("native"))


def _f32(t):
    """float32, contiguous (the kernels' input format); other float dtypes (autocast) are cast."""
    if torch.is_tensor(t) and t.is_floating_point() and t.dtype != torch.float32:
        t = t.float()
    return t.contiguous() if torch.is_tensor(t) else t


def _idx(t):
    return t.contiguous() if torch.is_tensor(t) else t


class FurthestPointSample(torch.autograd.Function):
    @staticmethod
    def forward(ctx, xyz, npoint):
        idx = furthest_point_sample(_f32(xyz), npoint)
        ctx.mark_non_differentiable(idx)
        return idx

    @staticmethod
    def backward(ctx, grad_idx):
        return None, None


class GatherPoints(torch.autograd.Function):
    @staticmethod
    def forward(ctx, features, idx):
        idx = _idx(idx)
        out = gather_points(_f32(features), idx)
        ctx.save_for_backward(idx)
        ctx.n_points = int(features.shape[2])
        ctx.in_dtype = features.dtype
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_out):
        if not ctx.needs_input_grad[0]:
            return None, None
        idx, = ctx.saved_tensors
        B, C, M = grad_out.shape
        grad = torch.zeros((B, C, ctx.n_points), dtype=torch.float32, device=grad_out.device)
        grad.scatter_add_(2, idx.view(B, 1, M).expand(B, C, M), grad_out.float())
        return grad.to(ctx.in_dtype), None


class BallQuery(torch.autograd.Function):
    @staticmethod
    def forward(ctx, xyz, new_xyz, radius, nsample):
        idx = ball_query(_f32(xyz), _f32(new_xyz), radius, nsample)
        ctx.mark_non_differentiable(idx)
        return idx

    @staticmethod
    def backward(ctx, grad_idx):
        return None, None, None, None


class GroupPoints(torch.autograd.Function):
    @staticmethod
    def forward(ctx, features, idx):
        idx = _idx(idx)
        out = group_points(_f32(features), idx)
        ctx.save_for_backward(idx)
        ctx.n_points = int(features.shape[2])
        ctx.in_dtype = features.dtype
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_out):
        if not ctx.needs_input_grad[0]:
            return None, None
        idx, = ctx.saved_tensors
        B, C, M, S = grad_out.shape
        grad = torch.zeros((B, C, ctx.n_points), dtype=torch.float32, device=grad_out.device)
        grad.scatter_add_(2, idx.view(B, 1, M * S).expand(B, C, M * S),
                          grad_out.float().reshape(B, C, M * S))
        return grad.to(ctx.in_dtype), None


class ThreeNN(torch.autograd.Function):
    @staticmethod
    def forward(ctx, unknown, known):
        dist2, idx = three_nn(_f32(unknown), _f32(known))
        ctx.mark_non_differentiable(dist2, idx)
        return dist2, idx

    @staticmethod
    def backward(ctx, grad_dist2, grad_idx):
        return None, None


class ThreeInterpolate(torch.autograd.Function):
    """Gradients: features (scatter-add of grad_out * weight at the indices) and weight
    (grad_out . features[idx] summed over channels) when they require grad; never idx."""

    @staticmethod
    def forward(ctx, features, idx, weight):
        idx = _idx(idx)
        f = _f32(features)
        w = _f32(weight)
        out = three_interpolate(f, idx, w)
        want_w = torch.is_tensor(weight) and weight.requires_grad
        ctx.save_for_backward(idx, w, f if want_w else None)
        ctx.m_points = int(features.shape[2])
        ctx.dtypes = (features.dtype, weight.dtype)
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_out):
        idx, w, f = ctx.saved_tensors
        B, C, n = grad_out.shape
        g = grad_out.float()
        grad_f = grad_w = None
        if ctx.needs_input_grad[0]:
            src = (g.unsqueeze(-1) * w.unsqueeze(1)).reshape(B, C, n * 3)
            grad_f = torch.zeros((B, C, ctx.m_points), dtype=torch.float32, device=g.device)
            grad_f.scatter_add_(2, idx.view(B, 1, n * 3).expand(B, C, n * 3), src)
            grad_f = grad_f.to(ctx.dtypes[0])
        if ctx.needs_input_grad[2] and f is not None:
            gathered = group_points(f, idx)  # [B,C,n,3] = features[b,c,idx[b,j,k]]
            grad_w = (g.unsqueeze(-1) * gathered).sum(1).to(ctx.dtypes[1])
        return grad_f, None, grad_w


FUNCTIONS = {
    "FurthestPointSample": FurthestPointSample,
    "GatherPoints": GatherPoints,
    "BallQuery": BallQuery,
    "GroupPoints": GroupPoints,
    "ThreeNN": ThreeNN,
    "ThreeInterpolate": ThreeInterpolate,
}

#!/usr/bin/env python3
"""Convert an exported PVN3D model to an fp16 "precision mode" model.

    /usr/bin/python3 exporter/convert_fp16.py pvn3d_tiny.onnx [-o pvn3d_tiny_fp16.onnx]
        [--keep-fp32 OpType,...] [--no-default-keep] [--policy propagate|all] [--json report.json]

The CNN and the MLPs (Conv, MatMul, BatchNormalization, ... and the data-movement and elementwise ops
around them) run in float16: the float initializers and constants they read are stored as float16.
The custom operators (domain ai.onnx.contrib, PVN3D_*) stay float32: a Cast fp16 -> fp32 feeds each of
their float inputs that an fp16 node produced, and a Cast fp32 -> fp16 follows each of their float
outputs that an fp16 node reads. Integer tensors (indices, shapes) are never touched. Graph inputs and
outputs keep float32 (a Cast after an input, before an output), so a caller feeds and reads the model
exactly as the float32 one.

Which nodes run in fp16 (policy "propagate", the default):
  * compute ops (ANCHOR_OPS: Conv, ConvTranspose, Gemm, MatMul, BatchNormalization, ...) always;
  * ops whose result is the same whether their input is rounded to fp16 before or after them
    (EXACT_OPS: Transpose, Reshape, Concat, Gather, Relu, MaxPool, ReduceMax, ...) when any of their
    non-constant float inputs is fp16: that moves the cast to the cheapest place without changing a
    value;
  * every other standard op when all of its non-constant float inputs are fp16 (an op mixing fp16
    and fp32 data runs in fp32, as PyTorch promotes mixed-precision arithmetic).
  So the point geometry (xyz from cld_rgb_nrm, through FPS, ball query, grouping, the relative
  coordinates and the inverse-distance weights of three_nn) stays float32 end to end: fp16 would
  round a coordinate at 0.5 m to 0.24 mm, and 1/d of a 1e-5 m distance overflows fp16.
  Policy "all" converts every eligible standard node instead (the classic whole-graph conversion),
  for comparison only: on PVN3D it changes the FPS indices and gives NaN (ThreeNN's d + 1e-8 is d
  in fp16, and a point's distance to itself is 0).

Never fp16: nodes outside the standard domain (the custom ops), op types on the block list
(DEFAULT_KEEP_FP32 unless --no-default-keep, plus --keep-fp32), ops whose schema has no fp16 for that
tensor (Resize's scales are tensor(float) by the spec), nodes with subgraphs (not supported: error).

Types of intermediate tensors come from onnx.shape_inference (the exported models carry value_info
for the custom ops' outputs), then from a schema-based propagation; a float-or-not question that
neither answers is an error naming the tensor.

Works with onnx 1.12 (Debian) and recent onnx (1.16+): only onnx.helper/numpy_helper/defs/checker/
shape_inference calls that both have. Written for this project; no other converter's code.
"""
import argparse
import collections
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FLOAT = TensorProto.FLOAT
FLOAT16 = TensorProto.FLOAT16
STANDARD_DOMAINS = ("", "ai.onnx")
CUSTOM_DOMAIN = "ai.onnx.contrib"
FP16_MAX = float(np.finfo(np.float16).max)  # 65504

# Always fp16 when eligible: the ops that carry the arithmetic (tensor cores, cuDNN/cuBLAS half).
# BatchNormalization: ONNX opset 15 lets scale/B (T1) and mean/var (T2) differ from X (T), but ORT's
# CUDA kernel (1.16 and later) registers T, T1 and T2 all bound to the same type and, for half X,
# converts scale/B/mean/var to float itself before calling cuDNN. So all five inputs go to fp16 here
# (a float32 scale with a float16 X finds no CUDA kernel).
ANCHOR_OPS = frozenset([
    "Conv", "ConvTranspose", "Gemm", "MatMul", "BatchNormalization", "InstanceNormalization",
    "Einsum",
])

# Ops for which rounding the input to fp16 before the op equals rounding the output after it
# (data movement, and selections that commute with a monotone rounding): their precision changes no
# value, only where the Cast sits.
EXACT_OPS = frozenset([
    "Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Split",
    "Slice", "Gather", "GatherElements", "GatherND", "Expand", "Tile", "DepthToSpace",
    "SpaceToDepth", "Relu", "MaxPool", "ReduceMax", "ReduceMin", "Max", "Min", "Neg", "Abs",
    "Shape", "Size", "Where", "Pad",
])

# Kept float32 by default (--no-default-keep drops this list), because their fp16 results are risky:
#  - reductions whose result grows with the reduced extent: fp16 tops out at 65504. ORT's CUDA
#    reductions accumulate half inputs in float (cudnnReduceTensor with a float compute type), but the
#    result is stored as half; ReduceSumSquare even squares in half first (overflow from |x| > 256).
#    (ReduceMean and ReduceMax are not here: their result stays within the input's range.)
#  - Reciprocal, Exp, Pow: overflow for |x| < 1.5e-5, x > 11.1, and large powers (PointNet++'s
#    inverse-distance weights 1/(d + 1e-8) are the example: those stay fp32 anyway under "propagate").
# Softmax / LogSoftmax are not kept: ORT's CUDA softmax computes its max and sum in float for half
# inputs and the result is in [0, 1] (or a log of it), so fp16 only costs the last bits.
DEFAULT_KEEP_FP32 = (
    "ReduceSum", "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
    "ReduceProd", "CumSum", "Reciprocal", "Exp", "Pow",
)

# Inputs that stay float32 even where the schema would allow fp16: ORT reads Resize's roi as float.
FP32_INPUT_SLOTS = {"Resize": {1}, "Upsample": {1}}

# Ops whose float output type comes from an attribute: their storage follows their consumers
# (Constant, ConstantOfShape, Cast) or they stay float32 (the generators).
FLEXIBLE_PRODUCERS = frozenset(["Constant", "ConstantOfShape", "Cast"])
ATTRIBUTE_TYPED_OPS = frozenset([
    "EyeLike", "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
    "Multinomial", "Bernoulli",
])

ELEM_NAMES = {FLOAT: "float32", FLOAT16: "float16"}


class ConversionError(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# schema helpers (onnx 1.12 spells FormalParameter.typeStr, recent onnx type_str)

def _param_type_str(p):
    s = getattr(p, "type_str", None)
    return s if s is not None else p.typeStr


def _opset_of(model, domain):
    for o in model.opset_import:
        if (o.domain or "") == domain or (domain == "" and o.domain == "ai.onnx"):
            return o.version
    return None


_SCHEMA_CACHE = {}


def _schema(op_type, version):
    key = (op_type, version)
    if key not in _SCHEMA_CACHE:
        try:
            _SCHEMA_CACHE[key] = onnx.defs.get_schema(op_type, version, "")
        except Exception:  # SchemaError: unknown op or opset
            _SCHEMA_CACHE[key] = None
    return _SCHEMA_CACHE[key]


def _formal(params, i):
    """The formal parameter of slot i (the last one repeats for variadic parameters)."""
    if i < len(params):
        return params[i]
    if params and params[-1].option == onnx.defs.OpSchema.FormalParameterOption.Variadic:
        return params[-1]
    return None


def _allowed(schema):
    return {c.type_param_str: set(c.allowed_type_strs) for c in schema.type_constraints}


_TYPE_STR = {"tensor(float)": FLOAT, "tensor(float16)": FLOAT16, "tensor(double)": TensorProto.DOUBLE,
             "tensor(int64)": TensorProto.INT64, "tensor(int32)": TensorProto.INT32,
             "tensor(bool)": TensorProto.BOOL, "tensor(uint8)": TensorProto.UINT8,
             "tensor(int8)": TensorProto.INT8, "tensor(string)": TensorProto.STRING,
             "tensor(bfloat16)": TensorProto.BFLOAT16}


def _attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


# ---------------------------------------------------------------------------------------------
# element types of every tensor

def _elem_type_of_value_info(vi):
    t = vi.type
    if t.HasField("tensor_type") and t.tensor_type.elem_type:
        return t.tensor_type.elem_type
    return None


def _constant_elem_type(node):
    for a in node.attribute:
        if a.name == "value":
            return a.t.data_type
        if a.name in ("value_float", "value_floats"):
            return FLOAT
        if a.name in ("value_int", "value_ints"):
            return TensorProto.INT64
        if a.name in ("value_string", "value_strings"):
            return TensorProto.STRING
        if a.name == "sparse_value":
            return a.sparse_tensor.values.data_type
    return None


def element_types(model):
    """name -> ONNX element type for every tensor of the main graph (ConversionError for a tensor
    whose type neither shape inference nor propagation can tell)."""
    g = model.graph
    types = {}
    for vi in list(g.input) + list(g.output):
        et = _elem_type_of_value_info(vi)
        if et:
            types[vi.name] = et
    for t in g.initializer:
        types[t.name] = t.data_type
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
        for vi in list(inferred.graph.value_info) + list(inferred.graph.output):
            et = _elem_type_of_value_info(vi)
            if et and vi.name not in types:
                types[vi.name] = et
    except Exception as e:  # inference is only a source of types here; propagation follows
        print("convert_fp16: shape inference failed (%s); propagating types instead" % e,
              file=sys.stderr)
    for vi in g.value_info:
        et = _elem_type_of_value_info(vi)
        if et and vi.name not in types:
            types[vi.name] = et
    # fallback: propagate through the schemas, in graph order
    std_version = _opset_of(model, "")
    for n in g.node:
        missing = [o for o in n.output if o and o not in types]
        if not missing:
            continue
        et_out = _propagate_node(n, types, std_version)
        for i, o in enumerate(n.output):
            if o and o not in types and et_out.get(i):
                types[o] = et_out[i]
    for n in g.node:
        for i, o in enumerate(n.output):
            if o and o not in types:
                raise ConversionError(
                    "cannot determine the element type of tensor %r (output %d of node %r, %s%s): "
                    "shape inference gave none and the schema does not fix it; add a value_info "
                    "entry for it (the exporter writes one for every custom-op output)"
                    % (o, i, n.name, (n.domain + "::") if n.domain else "", n.op_type))
    return types


def _propagate_node(node, types, std_version):
    out = {}
    if node.domain not in STANDARD_DOMAINS:
        return out
    if node.op_type == "Constant":
        out[0] = _constant_elem_type(node)
        return out
    if node.op_type == "ConstantOfShape":
        v = _attr(node, "value")
        out[0] = v.data_type if v is not None else FLOAT
        return out
    if node.op_type == "Cast":
        out[0] = _attr(node, "to")
        return out
    schema = _schema(node.op_type, std_version)
    if schema is None:
        return out
    bound = {}
    for i, name in enumerate(node.input):
        p = _formal(schema.inputs, i)
        if name and p is not None and name in types:
            bound.setdefault(_param_type_str(p), types[name])
    for i, name in enumerate(node.output):
        p = _formal(schema.outputs, i)
        if p is None:
            continue
        ts = _param_type_str(p)
        if ts in _TYPE_STR:
            out[i] = _TYPE_STR[ts]
        elif ts in bound:
            out[i] = bound[ts]
        else:
            allowed = _allowed(schema).get(ts, set())
            if len(allowed) == 1:
                out[i] = _TYPE_STR.get(next(iter(allowed)))
    return out


# ---------------------------------------------------------------------------------------------
# the conversion

class Report:
    def __init__(self):
        self.converted = collections.Counter()        # op type -> nodes running fp16
        self.kept = collections.defaultdict(collections.Counter)  # reason -> op type -> nodes
        self.no_float = collections.Counter()         # op type -> nodes without float tensors
        self.constants = collections.Counter()        # Constant / ConstantOfShape nodes
        self.casts = collections.Counter()            # "fp32->fp16" / "fp16->fp32" -> inserted
        self.casts_removed = 0
        self.init_fp16 = 0
        self.init_fp16_bytes = 0
        self.init_fp32 = 0
        self.init_copies = 0
        self.const_fp16 = 0
        self.clamped = 0
        self.flushed = 0
        self.nodes_in = 0
        self.nodes_out = 0
        self.size_in = 0
        self.size_out = 0
        self.policy = None
        self.keep_fp32 = []

    def fp16_op_types(self):
        return sorted(self.converted)

    def as_dict(self):
        return {
            "policy": self.policy, "keep_fp32": self.keep_fp32,
            "nodes_in": self.nodes_in, "nodes_out": self.nodes_out,
            "converted": dict(sorted(self.converted.items())),
            "converted_total": sum(self.converted.values()),
            "kept_fp32": {r: dict(sorted(c.items())) for r, c in sorted(self.kept.items())},
            "kept_fp32_total": sum(sum(c.values()) for c in self.kept.values()),
            "no_float_data": dict(sorted(self.no_float.items())),
            "constant_nodes": dict(sorted(self.constants.items())),
            "casts_inserted": dict(self.casts), "casts_total": sum(self.casts.values()),
            "redundant_casts_removed": self.casts_removed,
            "initializers_fp16": self.init_fp16, "initializers_fp32": self.init_fp32,
            "initializer_fp16_copies": self.init_copies,
            "constants_fp16": self.const_fp16,
            "values_clamped_to_fp16_max": self.clamped, "values_flushed_to_zero": self.flushed,
            "size_in": self.size_in, "size_out": self.size_out,
            "fp16_op_types": self.fp16_op_types(),
        }

    def text(self, name=""):
        def counts(c):
            return ", ".join("%s %d" % (k, v) for k, v in sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))
        lines = ["fp16 conversion%s (policy %s)" % ((" of " + name) if name else "", self.policy),
                 "  nodes: %d in, %d out" % (self.nodes_in, self.nodes_out),
                 "  converted to fp16: %d (%s)" % (sum(self.converted.values()), counts(self.converted))]
        for reason, c in sorted(self.kept.items()):
            lines.append("  kept fp32, %s: %d (%s)" % (reason, sum(c.values()), counts(c)))
        if self.no_float:
            lines.append("  no float tensors (untouched): %d (%s)"
                         % (sum(self.no_float.values()), counts(self.no_float)))
        if self.constants:
            lines.append("  constant nodes: %d (%s), %d of them now fp16"
                         % (sum(self.constants.values()), counts(self.constants), self.const_fp16))
        lines.append("  casts inserted: %d (%s), redundant casts removed: %d"
                     % (sum(self.casts.values()), counts(self.casts) or "none", self.casts_removed))
        lines.append("  float initializers: %d stored fp16 (%d bytes), %d kept float32, %d fp16 copies"
                     % (self.init_fp16, self.init_fp16_bytes, self.init_fp32, self.init_copies))
        if self.clamped or self.flushed:
            lines.append("  WARNING: %d values clamped to +-65504, %d nonzero values flushed to 0"
                         % (self.clamped, self.flushed))
        lines.append("  size: %d -> %d bytes (%.1f%%)" % (
            self.size_in, self.size_out, 100.0 * self.size_out / max(1, self.size_in)))
        lines.append("  op types running fp16 (check on CUDA): %s" % ", ".join(self.fp16_op_types()))
        return "\n".join(lines)


def _to_fp16_array(arr, report):
    a32 = np.asarray(arr, dtype=np.float32)
    finite = np.isfinite(a32)
    over = finite & (np.abs(a32) > FP16_MAX)
    if over.any():
        report.clamped += int(over.sum())
        a32 = np.where(over, np.sign(a32) * FP16_MAX, a32)
    a16 = a32.astype(np.float16)
    report.flushed += int(((a16 == 0) & (a32 != 0)).sum())
    return a16


class _Namer:
    def __init__(self, graph):
        self.used = set()
        for vi in list(graph.input) + list(graph.output) + list(graph.value_info):
            self.used.add(vi.name)
        for t in graph.initializer:
            self.used.add(t.name)
        for n in graph.node:
            self.used.update(n.input)
            self.used.update(n.output)
            if n.name:
                self.used.add(n.name)

    def __call__(self, base):
        name, k = base, 1
        while name in self.used:
            k += 1
            name = "%s_%d" % (base, k)
        self.used.add(name)
        return name


def convert_model(model, keep_fp32=(), default_keep=True, policy="propagate"):
    """Returns (fp16 model, Report). The input model is not modified."""
    if policy not in ("propagate", "all"):
        raise ValueError("policy must be 'propagate' or 'all'")
    src = model
    model = onnx.ModelProto()
    model.CopyFrom(src)
    g = model.graph
    rep = Report()
    rep.policy = policy
    rep.nodes_in = len(g.node)
    rep.size_in = src.ByteSize()
    block = set(keep_fp32)
    if default_keep:
        block |= set(DEFAULT_KEEP_FP32)
    rep.keep_fp32 = sorted(block)
    std_version = _opset_of(model, "")
    if std_version is None:
        raise ConversionError("the model imports no standard ONNX opset")
    if any(p.key == "precision" and p.value == "fp16" for p in model.metadata_props):
        raise ConversionError("the model is already an fp16 conversion (metadata precision=fp16)")
    for n in g.node:
        for a in n.attribute:
            if a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
                raise ConversionError("node %r (%s) has a subgraph: control flow is not supported"
                                      % (n.name, n.op_type))
    for st in g.sparse_initializer:
        if st.values.data_type == FLOAT:
            raise ConversionError("float sparse initializers are not supported")

    types = element_types(model)
    graph_inputs = {i.name for i in g.input}
    graph_outputs = [o.name for o in g.output]
    graph_output_set = set(graph_outputs)
    inits = {t.name: t for t in g.initializer if t.name not in graph_inputs}
    producer = {}
    for idx, n in enumerate(g.node):
        for o in n.output:
            if o:
                producer[o] = idx

    def is_float(name):
        return types.get(name) == FLOAT

    # Flexible float tensors (initializers, Constant, ConstantOfShape, a Cast to float of an
    # integer/bool tensor): stored as fp16 when every reader wants fp16 (step 2), else as fp32.
    flexible = set()
    for name in inits:
        if is_float(name):
            flexible.add(name)
    for n in g.node:
        if n.domain in STANDARD_DOMAINS and n.op_type in FLEXIBLE_PRODUCERS and n.output \
                and is_float(n.output[0]):
            if n.op_type == "Constant" and any(a.name == "sparse_value" for a in n.attribute):
                continue
            if n.op_type == "Cast" and n.input[0] in types and types[n.input[0]] in (FLOAT, FLOAT16):
                continue  # a Cast float -> float: Identity-like, decided in graph order below
            flexible.add(n.output[0])
    # Constants: initializers, Constant / ConstantOfShape outputs (uniform values) and whatever a
    # standard node computes from constants only (e.g. an Identity of a shared initializer). They
    # are neutral when a node's precision is decided from its inputs, and a node computing one is
    # decided by its readers instead (step 1b).
    const_tensors = set(inits)
    for n in g.node:
        if n.domain not in STANDARD_DOMAINS:
            continue
        ins = [x for x in n.input if x]
        if n.op_type in ("Constant", "ConstantOfShape") or (ins and all(x in const_tensors
                                                                         for x in ins)):
            const_tensors.update(o for o in n.output if o)
    constant_like = {t for t in const_tensors if is_float(t)}

    # ---- 1. per node: fp16 or not, and which float slots are fp16
    storage = {}  # tensor -> FLOAT / FLOAT16 for non-flexible float tensors
    for name in graph_inputs:
        if is_float(name):
            storage[name] = FLOAT
    want_in = {}   # (node idx, input slot) -> wanted elem type for float inputs
    cast_nodes = []  # original Cast nodes with a flexible (float) output
    deferred = []  # (idx, float_in, float_out, slots16_in, slots16_out, reason) of constant nodes

    for idx, n in enumerate(g.node):
        float_in = [i for i, x in enumerate(n.input) if x and is_float(x)]
        float_out = [i for i, x in enumerate(n.output) if x and is_float(x)]
        if n.domain in STANDARD_DOMAINS and n.op_type in FLEXIBLE_PRODUCERS:
            if n.op_type == "Cast":
                # reads its input as stored (Cast accepts any type)
                if float_out and n.output[0] not in flexible:
                    # float -> float: passes its input's precision on (fp32 for a graph output)
                    s_in = storage.get(n.input[0], FLOAT)
                    s_out = FLOAT if n.output[0] in graph_output_set else s_in
                    storage[n.output[0]] = s_out
                    _set_cast_to(n, s_out)
                    if s_in == FLOAT16 or s_out == FLOAT16:
                        rep.converted["Cast"] += 1
                    else:
                        rep.kept["fp32 inputs"]["Cast"] += 1
                elif float_out:
                    cast_nodes.append(idx)
                elif float_in and storage.get(n.input[0], FLOAT) == FLOAT16:
                    rep.converted["Cast"] += 1
                else:
                    rep.no_float[n.op_type] += 1
            else:
                rep.constants[n.op_type] += 1
            continue
        if not float_in and not float_out:
            rep.no_float[(n.domain + "::" if n.domain else "") + n.op_type] += 1
            continue
        reason = None
        schema = None
        if n.domain not in STANDARD_DOMAINS:
            reason = "custom op" if n.domain == CUSTOM_DOMAIN else "other domain"
        elif n.op_type in block:
            reason = "block list"
        elif n.op_type in ATTRIBUTE_TYPED_OPS:
            reason = "attribute-typed output"
        else:
            schema = _schema(n.op_type, std_version)
            if schema is None:
                reason = "no schema"
        slots16_in, slots16_out = set(), set()
        if reason is None:
            allowed = _allowed(schema)

            def convertible(ts):
                return ts in allowed and "tensor(float16)" in allowed[ts]

            for i in float_in:
                p = _formal(schema.inputs, i)
                if p is not None and convertible(_param_type_str(p)) \
                        and i not in FP32_INPUT_SLOTS.get(n.op_type, ()):
                    slots16_in.add(i)
            for i in float_out:
                p = _formal(schema.outputs, i)
                if p is not None and convertible(_param_type_str(p)):
                    slots16_out.add(i)
            if not slots16_in and not slots16_out:
                reason = "no fp16 in schema"
        if n.domain in STANDARD_DOMAINS and all(o in const_tensors for o in n.output if o):
            deferred.append((idx, float_in, float_out, slots16_in, slots16_out, reason))
            continue
        if reason is None:
            data_in = [i for i in slots16_in if n.input[i] not in constant_like]
            stored16 = [i for i in data_in if storage.get(n.input[i], FLOAT) == FLOAT16]
            if policy == "all" or n.op_type in ANCHOR_OPS:
                fp16 = True
            elif n.op_type in EXACT_OPS:
                fp16 = bool(stored16)
            else:
                fp16 = bool(data_in) and len(stored16) == len(data_in)
            if not fp16:
                reason = "fp32 inputs" if not stored16 else "mixed fp16/fp32 inputs"
        if reason is not None:
            rep.kept[reason][(n.domain + "::" if n.domain else "") + n.op_type] += 1
            for i in float_in:
                want_in[(idx, i)] = FLOAT
            for i in float_out:
                storage[n.output[i]] = FLOAT
            continue
        rep.converted[n.op_type] += 1
        for i in float_in:
            want_in[(idx, i)] = FLOAT16 if i in slots16_in else FLOAT
        for i in float_out:
            storage[n.output[i]] = FLOAT16 if i in slots16_out else FLOAT

    readers = collections.defaultdict(list)
    for (idx, i), w in want_in.items():
        readers[g.node[idx].input[i]].append(w)

    def all_read_fp16(t):
        ws = readers.get(t, [])
        return bool(ws) and all(w == FLOAT16 for w in ws) and t not in graph_output_set

    # ---- 1b. nodes computing constants only (ONNX Runtime folds them at load): fp16 when every
    # reader of their float outputs wants fp16; decided last reader first
    for idx, float_in, float_out, slots16_in, slots16_out, reason in reversed(deferred):
        n = g.node[idx]
        if reason is None and not (float_out and all(
                all_read_fp16(n.output[i]) for i in float_out if i in slots16_out)
                and any(i in slots16_out for i in float_out)):
            reason = "constant, read as fp32"
        if reason is not None:
            rep.kept[reason][(n.domain + "::" if n.domain else "") + n.op_type] += 1
        else:
            rep.converted[n.op_type] += 1
        for i in float_in:
            w = FLOAT16 if reason is None and i in slots16_in else FLOAT
            want_in[(idx, i)] = w
            readers[n.input[i]].append(w)
        for i in float_out:
            storage[n.output[i]] = FLOAT16 if reason is None and i in slots16_out else FLOAT

    # ---- 2. flexible tensors (initializers, Constant, ConstantOfShape, Cast-to-float outputs):
    # fp16 when every reader wants fp16 and the tensor is no graph output
    for t in flexible:
        storage[t] = FLOAT16 if all_read_fp16(t) else FLOAT

    # ---- 3. rewrite: initializers, constants, casts to float, node inputs, graph outputs
    namer = _Namer(g)
    new_inits = []
    for t in g.initializer:
        if t.name in inits and is_float(t.name) and storage[t.name] == FLOAT16:
            a16 = _to_fp16_array(numpy_helper.to_array(t), rep)
            nt = numpy_helper.from_array(a16, t.name)
            new_inits.append(nt)
            rep.init_fp16 += 1
            rep.init_fp16_bytes += a16.nbytes
        else:
            new_inits.append(t)
            if is_float(t.name):
                rep.init_fp32 += 1
    for n in g.node:
        if n.domain in STANDARD_DOMAINS and n.output and n.output[0] in flexible \
                and storage[n.output[0]] == FLOAT16:
            if n.op_type == "Constant":
                _constant_to_fp16(n, rep)
                rep.const_fp16 += 1
            elif n.op_type == "ConstantOfShape":
                v = _attr(n, "value")
                arr = numpy_helper.to_array(v) if v is not None else np.zeros(1, np.float32)
                _set_attr_tensor(n, "value", numpy_helper.from_array(_to_fp16_array(arr, rep), ""))
                rep.const_fp16 += 1
            elif n.op_type == "Cast":
                _set_cast_to(n, FLOAT16)
    for idx in cast_nodes:
        n = g.node[idx]
        if storage[n.output[0]] == FLOAT16:
            rep.converted["Cast"] += 1
        else:
            rep.kept["follows its readers"]["Cast"] += 1

    # graph outputs produced in fp16: the producer writes '<name>_fp16', a Cast writes <name>
    renamed = {}  # original name -> fp16 name
    for o in graph_outputs:
        if is_float(o) and storage.get(o) == FLOAT16 and o in producer:
            renamed[o] = namer(o + "_fp16")

    new_types = dict(types)
    casts_after = collections.defaultdict(list)  # producer idx (-1 = graph start) -> cast nodes
    cast_cache = {}

    def stored_name(t):
        return renamed.get(t, t)

    def available(t, want):
        """Name of tensor t as element type `want`, inserting a Cast (or an fp16 initializer copy)."""
        have = storage.get(t, types.get(t))
        if have == want:
            return stored_name(t)
        key = (t, want)
        if key in cast_cache:
            return cast_cache[key]
        if t in inits and want == FLOAT16:
            copy = numpy_helper.from_array(_to_fp16_array(numpy_helper.to_array(inits[t]), rep),
                                           namer(t + "_fp16"))
            new_inits.append(copy)
            new_types[copy.name] = FLOAT16
            rep.init_copies += 1
            cast_cache[key] = copy.name
            return copy.name
        if t in renamed and want == FLOAT:
            out = t  # the graph output itself is the fp32 cast
        else:
            out = namer("%s_%s" % (t, "fp16" if want == FLOAT16 else "fp32"))
        node = helper.make_node("Cast", [stored_name(t)], [out], to=want,
                                name=namer("%s/Cast_%s" % (t, "fp16" if want == FLOAT16 else "fp32")))
        casts_after[producer.get(t, -1)].append(node)
        rep.casts["fp32->fp16" if want == FLOAT16 else "fp16->fp32"] += 1
        cast_cache[key] = out
        return out

    for (idx, i), w in sorted(want_in.items()):
        n = g.node[idx]
        n.input[i] = available(n.input[i], w)
    for o, new in renamed.items():
        n = g.node[producer[o]]
        for k, x in enumerate(n.output):
            if x == o:
                n.output[k] = new
        available(o, FLOAT)  # inserts the Cast that writes the graph output

    nodes = list(casts_after.get(-1, []))
    for idx, n in enumerate(g.node):
        nodes.append(n)
        nodes.extend(casts_after.get(idx, []))

    # ---- 4. new types, cancelling Cast pairs, dead casts
    for t, s in storage.items():
        new_types[stored_name(t)] = s
    for o in renamed:
        new_types[o] = FLOAT
    for n in nodes:
        if n.op_type == "Cast" and n.domain in STANDARD_DOMAINS:
            new_types[n.output[0]] = _attr(n, "to")
    nodes, removed = _remove_redundant_casts(nodes, new_types, set(graph_outputs))
    rep.casts_removed = removed

    del g.node[:]
    g.node.extend(nodes)
    del g.initializer[:]
    g.initializer.extend(new_inits)

    # ---- 5. value_info: keep the entries the model had, with the new element types
    present = set()
    for n in nodes:
        present.update(n.output)
    keep_vi = []
    for vi in g.value_info:
        if vi.name in present and vi.name not in graph_output_set:
            nvi = onnx.ValueInfoProto()
            nvi.CopyFrom(vi)
            if nvi.type.HasField("tensor_type") and vi.name in new_types:
                nvi.type.tensor_type.elem_type = new_types[vi.name]
            keep_vi.append(nvi)
    del g.value_info[:]
    g.value_info.extend(keep_vi)

    _set_metadata(model, "precision", "fp16")
    _set_metadata(model, "fp16_conversion", json.dumps(
        {"policy": policy, "keep_fp32": rep.keep_fp32, "tool": "exporter/convert_fp16.py"},
        sort_keys=True))
    rep.nodes_out = len(g.node)
    rep.size_out = model.ByteSize()
    return model, rep


def _constant_to_fp16(node, rep):
    for a in list(node.attribute):
        if a.name == "value":
            a.t.CopyFrom(numpy_helper.from_array(_to_fp16_array(numpy_helper.to_array(a.t), rep),
                                                 a.t.name))
            return
        if a.name in ("value_float", "value_floats"):
            arr = np.array(a.f if a.name == "value_float" else list(a.floats), np.float32)
            node.attribute.remove(a)
            node.attribute.extend([helper.make_attribute(
                "value", numpy_helper.from_array(_to_fp16_array(arr, rep), ""))])
            return


def _set_cast_to(node, to):
    for a in node.attribute:
        if a.name == "to":
            a.i = to


def _set_attr_tensor(node, name, tensor):
    for a in list(node.attribute):
        if a.name == name:
            node.attribute.remove(a)
    node.attribute.extend([helper.make_attribute(name, tensor)])


def _set_metadata(model, key, value):
    for p in model.metadata_props:
        if p.key == key:
            p.value = value
            return
    model.metadata_props.add(key=key, value=value)


def _remove_redundant_casts(nodes, types, graph_outputs):
    """Drops Cast(fp16 -> fp32) -> Cast(fp32 -> fp16) pairs (the second reads the first's input
    instead: fp16 -> fp32 is exact), merges Casts of one tensor to one type, and drops Casts nobody
    reads. Returns (nodes, number removed)."""
    removed = 0
    while True:
        by_out = {n.output[0]: n for n in nodes if n.op_type == "Cast" and n.output}
        alias = {}
        seen = {}
        for n in nodes:
            if n.op_type != "Cast" or n.output[0] in graph_outputs:
                continue
            src = n.input[0]
            to = _attr(n, "to")
            first = by_out.get(src)
            if first is not None and types.get(first.input[0]) == to == FLOAT16 \
                    and types.get(src) == FLOAT:
                alias[n.output[0]] = first.input[0]
                continue
            if types.get(src) == to:
                alias[n.output[0]] = src  # a Cast to its own type
                continue
            key = (src, to)
            if key in seen:
                alias[n.output[0]] = seen[key]
            else:
                seen[key] = n.output[0]
        for n in nodes:
            for k, x in enumerate(n.input):
                while x in alias:
                    x = alias[x]
                n.input[k] = x
        read = set(graph_outputs)
        for n in nodes:
            read.update(n.input)
        keep = [n for n in nodes
                if not (n.op_type == "Cast" and n.output[0] not in read)]
        if len(keep) == len(nodes):
            return nodes, removed
        removed += len(nodes) - len(keep)
        nodes = keep


# ---------------------------------------------------------------------------------------------
# checks (also used by the tests)

def check_model(model):
    """onnx.checker plus strict shape inference; returns the inferred model."""
    onnx.checker.check_model(model)
    return onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)


def cancelling_cast_pairs(model):
    """(first, second) Cast node names where a Cast fp16 -> fp32 feeds a Cast fp32 -> fp16."""
    g = model.graph
    by_out = {n.output[0]: n for n in g.node if n.op_type == "Cast"}
    types = element_types(model)
    pairs = []
    for n in g.node:
        if n.op_type == "Cast" and _attr(n, "to") == FLOAT16:
            first = by_out.get(n.input[0])
            if first is not None and _attr(first, "to") == FLOAT \
                    and types.get(first.input[0]) == FLOAT16:
                pairs.append((first.name, n.name))
    return pairs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="the float32 model (e.g. pvn3d_tiny.onnx)")
    ap.add_argument("-o", "--out", help="output path (default: <model>_fp16.onnx beside it)")
    ap.add_argument("--keep-fp32", default="",
                    help="comma-separated standard op types kept float32, added to the default "
                         "list (%s)" % ",".join(DEFAULT_KEEP_FP32))
    ap.add_argument("--no-default-keep", action="store_true",
                    help="do not keep the default list in float32 (only --keep-fp32)")
    ap.add_argument("--policy", choices=("propagate", "all"), default="propagate",
                    help="propagate (default): compute ops fp16, others follow their inputs; "
                         "all: every eligible standard op fp16")
    ap.add_argument("--json", help="also write the summary as JSON to this path")
    ap.add_argument("--no-check", action="store_true",
                    help="skip onnx.checker and strict shape inference of the result")
    args = ap.parse_args(argv)

    out = args.out or os.path.splitext(args.model)[0] + "_fp16.onnx"
    keep = [s.strip() for s in args.keep_fp32.split(",") if s.strip()]
    unknown = [k for k in keep if not onnx.defs.has(k)]
    if unknown:  # a misspelt op type kept nothing, silently
        ap.error("--keep-fp32: not ONNX operator types: %s" % ", ".join(unknown))
    for what, path in (("-o", out), ("--json", args.json)):
        if path and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            ap.error("%s %s: no folder %s" % (what, path, os.path.dirname(os.path.abspath(path))))
    size_in = os.path.getsize(args.model) if os.path.isfile(args.model) else 0  # before -o may overwrite it
    try:
        model = onnx.load(args.model)
    except Exception as e:  # a missing file, or not ONNX protobuf
        print("convert_fp16: cannot read %s as an ONNX model: %s" % (args.model, str(e).splitlines()[0] if str(e) else e),
              file=sys.stderr)
        return 2
    try:
        fp16, rep = convert_model(model, keep_fp32=keep, default_keep=not args.no_default_keep,
                                  policy=args.policy)
        if not args.no_check:
            check_model(fp16)
    except ConversionError as e:
        print("convert_fp16: %s" % e, file=sys.stderr)
        return 2
    if sum(rep.converted.values()) == 0:  # it would be stamped precision=fp16 and then refused as already fp16
        print("convert_fp16: no node of %s would run in fp16 (not a float32 PVN3D model?); nothing written" % args.model,
              file=sys.stderr)
        return 2
    onnx.save(fp16, out)
    rep.size_in = size_in
    rep.size_out = os.path.getsize(out)
    print(rep.text(os.path.basename(args.model)))
    print("wrote %s" % out)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rep.as_dict(), f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""PVN3D exporter: reference PyTorch ops with ONNX symbolics, the PVT1 container, model builders."""

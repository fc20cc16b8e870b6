"""The PVN3D network (LineMOD setting) written for this project, on the custom PointNet++ ops.

Modules: resnet (ResNet-34 trunk), pspnet (PSPNet decoder), pointnet2_msg (PointNet++ MSG),
fusion (dense fusion block), heads (per-point heads), model (PVN3D, widths, seeding, checkpoint
loading), scene (the synthetic bunny sample), npeval_ext (numpy ONNX evaluator for the whole
graph), pose (the optional pose head: PVN3D_PoseSolve with a plain-PyTorch reference).

Parameter names follow the PVN3D code base's state-dict layout (cnn.model.feats.*, cnn.model.psp.*,
pointnet2.SA_modules.*, rgbd_feat.*, SEG_layer.* ...), so a real checkpoint loads by name.
"""

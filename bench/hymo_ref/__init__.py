"""hymo_ref: the PyTorch reference implementation of HyMo, written from
../../../shared/spec/HYMO.md (the contract).

It is (a) the FP64 cross-check oracle for hymo's gradients, (b) the CPU speed
baseline for the training step and (c) the interop target that loads hymo
checkpoints.  Modules:

  safetensors_io  a small safetensors reader/writer (no external package)
  config          YAML configs with --set style overrides and spec defaults
  model           the HyMo forward (spec section 2), init and parameter table
  optim           the training step (spec section 3): NorMuon, CautiousAdamW,
                  WSD, clipping, NaN skip, gate-bias update
  data            plain-text / token-shard data and the spec section 5 batch order
  checkpoint      save / load safetensors checkpoints with the spec names
  cli             grads / train / bench / eval / logits commands
"""

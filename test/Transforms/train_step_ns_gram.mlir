// RUN: hymo-opt %s --hymo-autodiff --hymo-train-step | FileCheck %s
// Newton-Schulz on a matrix three times as long as wide (4 x 12): the
// Gram-matrix recursion (docs/passes/train-step.md) costs fewer
// multiply-adds than five passes over the long side, so the 12-long side
// is touched twice: once for A_0 = X X^T and once to apply the product of
// the five polynomials. In between only 4 x 4 products:
// A_{j+1} = A_j B_j^2, P = B_j P. (train_step.mlir pins the direct form
// for a 4 x 6 matrix, where the recursion would cost more.)

// CHECK-LABEL: func.func @update(
// CHECK: %[[X:[0-9]+]] = hymo.matmul %{{[0-9]+}}, %{{[0-9]+}} {transpose_b = true} : (tensor<4x12xf32>, tensor<4x12xf32>) -> tensor<4x4xf32>
// CHECK-NOT: tensor<4x12xf32>) -> tensor<4x4xf32>
// CHECK: hymo.eye : tensor<4x4xf32>
// CHECK-NEXT: hymo.matmul %[[X]], %[[X]] {transpose_b = true} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
// B_0^2 and A_1 = A_0 B_0^2:
// CHECK: %[[B2:[0-9]+]] = hymo.matmul %[[B0:[0-9]+]], %[[B0]] {transpose_b = true} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: hymo.matmul %[[X]], %[[B2]] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
// Iterations 2..5 each multiply the running product P by their B_j.
// CHECK-COUNT-4: hymo.eye : tensor<4x4xf32>
// The long side once more: X_5 = P X_0.
// CHECK: hymo.matmul %{{[0-9]+}}, %{{[0-9]+}} : (tensor<4x4xf32>, tensor<4x12xf32>) -> tensor<4x12xf32>
// CHECK-NOT: (tensor<4x12xf32>, tensor<4x12xf32>) -> tensor<4x4xf32>
// CHECK: return
module attributes {hymo.config = "{\22model\22: {\22vocab_size\22: 256, \22dim\22: 64, \22n_layers\22: 4, \22layer_pattern\22: \22GGGM\22, \22norm_eps\22: 9.9999999999999995e-07, \22rope_theta\22: 10000, \22ffn_hidden\22: 128, \22gdn\22: {\22n_heads\22: 4, \22head_dim\22: 16, \22state_dim\22: 8, \22chunk_size\22: 16}, \22mla\22: {\22n_heads\22: 2, \22q_lora_rank\22: 32, \22kv_lora_rank\22: 32, \22qk_nope_head_dim\22: 16, \22qk_rope_head_dim\22: 8, \22v_head_dim\22: 16}, \22moe\22: {\22n_routed\22: 4, \22n_shared\22: 1, \22top_k\22: 2, \22expert_hidden\22: 64, \22capacity_factor\22: 1.5, \22ema_alpha\22: 0.02, \22bias_speed\22: 0.001}, \22mtp\22: {\22depth\22: 2, \22weights\22: [0.29999999999999999, 0.10000000000000001]}}, \22optimizer\22: {\22muon_lr\22: 0.02, \22momentum\22: 0.94999999999999996, \22nesterov\22: true, \22betas\22: [0.94999999999999996, 0.94999999999999996], \22eps\22: 1e-08, \22weight_decay\22: 0.10000000000000001, \22cautious_wd\22: true, \22ns_iterations\22: 5, \22ns_coefficients\22: \22quintic\22, \22muon_scale\22: \22shape\22, \22adamw_lr\22: 0.00029999999999999997, \22adamw_betas\22: [0.90000000000000002, 0.94999999999999996], \22adamw_eps\22: 1e-08, \22adamw_weight_decay\22: 0.10000000000000001, \22embed_weight_decay\22: 0}, \22scheduler\22: {\22total_steps\22: 1000, \22warmup_frac\22: 0.02, \22stable_frac\22: 0.82999999999999996, \22decay_frac\22: 0.14999999999999999, \22min_lr_ratio\22: 0.050000000000000003, \22decay\22: \22linear\22}, \22training\22: {\22micro_batch_size\22: 2, \22seq_len\22: 64, \22gradient_accumulation_steps\22: 1, \22grad_clip\22: 1, \22loss_nan_skip\22: true, \22consecutive_nan_limit\22: 5, \22precision\22: \22fp32\22, \22fused_gdn\22: false, \22moe_mixed_precision\22: false, \22fsdp\22: false, \22world_size\22: 1, \22seed\22: 0}}"} {
  func.func @forward(%w: tensor<4x12xf32> {hymo.name = "w", hymo.role = "param", hymo.optimizer = "normuon", hymo.init = "zeros"},
                     %x: tensor<4x12xf32> {hymo.name = "x", hymo.role = "input"})
      -> (tensor<f32> {hymo.name = "loss"}, tensor<f32> {hymo.name = "loss_main"}) {
    %a = hymo.mul %w, %x : tensor<4x12xf32>
    %s = hymo.reduce_sum %a {dims = array<i64: 0, 1>} : (tensor<4x12xf32>) -> tensor<f32>
    return %s, %s : tensor<f32>, tensor<f32>
  }
}

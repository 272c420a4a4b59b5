import unittest

import numpy as np
import torch

from bench.hymo_ref import data as D
from bench.hymo_ref import model as M
from bench.hymo_ref import optim as O
from bench.hymo_ref.tests.util import text_or_synthetic, tiny_cfg


class TinyTrains(unittest.TestCase):
    def test_loss_falls(self):
        torch.set_num_threads(1)
        cfg = tiny_cfg("scheduler.total_steps=1000")
        toks = np.frombuffer(text_or_synthetic(), dtype=np.uint8).astype(np.int64)
        data = D.Batches(toks, cfg["training"]["seq_len"], cfg["training"]["micro_batch_size"])
        P, Bf = M.init_params(cfg)
        tr = O.Trainer(cfg, P, Bf)
        losses = [tr.train_step(data.get)["loss_main"] for _ in range(30)]
        first, last = np.mean(losses[:3]), np.mean(losses[-5:])
        self.assertTrue(all(np.isfinite(losses)))
        self.assertLess(last, first - 0.8, losses)
        self.assertEqual(tr.step, 30)
        # the gate bias moved (MoE balancing is live)
        self.assertGreater(tr.B["layers.3.ffn.gate_bias"].abs().sum().item(), 0.0)


if __name__ == "__main__":
    unittest.main()

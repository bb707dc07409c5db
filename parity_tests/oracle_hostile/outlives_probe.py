"""A call that outlives the probe's time limit: self-attention without a mask argument (so the
oracle probes whether it masks the future itself, recognise/builtin_causal), whose FIRST call spins
for a minute swallowing every exception, the one the probe's limit delivers to stop it included.
The probe gave up after its 10 s and decided nothing, and the check went on, scored runs and all,
beside a thread of the submission still running; now the worker waits a little for it and the
check ends `timeout`, naming the call that did not finish."""
import math
import time

import torch
import torch.nn as nn

CALLS = [0]


class SelfAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.d_k = num_heads, d_model // num_heads
        self.W_q, self.W_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_v, self.W_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, x):
        CALLS[0] += 1
        if CALLS[0] == 1:
            end = time.monotonic() + 60
            while time.monotonic() < end:
                try:
                    time.sleep(0.05)
                except BaseException:  # noqa: BLE001 - the probe's stop request, swallowed
                    pass
        B, T, D = x.shape
        q = self.W_q(x).view(B, T, self.h, self.d_k).transpose(1, 2)
        k = self.W_k(x).view(B, T, self.h, self.d_k).transpose(1, 2)
        v = self.W_v(x).view(B, T, self.h, self.d_k).transpose(1, 2)
        p = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_k), dim=-1)
        return self.W_o((p @ v).transpose(1, 2).reshape(B, T, D))

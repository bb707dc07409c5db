"""A multi-head attention taking `num_heads` but splitting its heads by the global `n_heads` only
its __main__ block sets (test data for parity_tests/test_oracle_main_block_sizes.py): given
another head count it still uses eight heads. The oracle set that global to each example's head
count before every build, so the argument it ignores never showed."""
import math
import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.d_model = d_model
        self.W_Q, self.W_K, self.W_V = (nn.Linear(d_model, d_model) for _ in range(3))
        self.fc = nn.Linear(d_model, d_model)

    def forward(self, Q, K, V, mask=None):
        B = Q.size(0)
        dh = self.d_model // n_heads
        q = self.W_Q(Q).view(B, -1, n_heads, dh).transpose(1, 2)
        k = self.W_K(K).view(B, -1, n_heads, dh).transpose(1, 2)
        v = self.W_V(V).view(B, -1, n_heads, dh).transpose(1, 2)
        s = q @ k.transpose(-1, -2) / math.sqrt(dh)
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        ctx = (s.softmax(-1) @ v).transpose(1, 2).reshape(B, -1, self.d_model)
        return self.fc(ctx)


if __name__ == "__main__":
    d_model = 512
    n_heads = 8
    m = MultiHeadAttention(d_model, n_heads)

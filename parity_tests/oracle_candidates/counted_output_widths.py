"""A feed-forward whose widths are named as counts with a block prefix, `CountedMLP(input_dim,
mlp_num_hiddens, mlp_num_outputs)`, as the d2l book's ViT names its MLP: `mlp_num_outputs` is the
output width (d_model), not a feed-forward block to build. The right class has a planted-bug twin
(BUG)."""
import torch
from torch import nn


class CountedMLP(nn.Module):
    def __init__(self, input_dim, mlp_num_hiddens, mlp_num_outputs):
        super().__init__()
        self.dense1 = nn.Linear(input_dim, mlp_num_hiddens)
        self.dense2 = nn.Linear(mlp_num_hiddens, mlp_num_outputs)

    def forward(self, x):
        return self.dense2(torch.relu(self.dense1(x)))


class CountedMLPBUG(CountedMLP):
    def forward(self, x):
        return self.dense2(torch.relu(self.dense1(x))) * 1.01          # output scaled

"""A feed-forward whose constructor names its arguments with a block word: its hidden width
`mlp_neurons` (no width word the oracle knows: d_ff by position) and a gain `mlp_gain`, which only
--init-kwargs can give. Neither is a feed-forward block to build (the block the oracle would build
is the class itself). One class per file, in a folder of its own, as the repositories that name
arguments so lay out their layers. The right class has a planted-bug twin (BUG)."""
import torch
from torch import nn


class GainedMLP(nn.Module):
    def __init__(self, d_model, mlp_neurons, mlp_gain):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(d_model, mlp_neurons), nn.Linear(mlp_neurons, d_model)
        self.mlp_gain = mlp_gain

    def forward(self, x):
        return self.mlp_gain * self.fc2(torch.relu(self.fc1(x)))


class GainedMLPBUG(GainedMLP):
    def forward(self, x):
        return self.mlp_gain * self.fc2(torch.relu(self.fc1(x))) + self.fc1.bias.mean()   # bias leaks

"""PyTorch feed-forwards that build their activation from its torch.nn class name,
`getattr(nn, config.activation)()`, as code configured with `activation = "GELU"` does (test data
for parity_tests/test_oracle_activation_class_names.py): one reading a config object, one taking
the name as an argument. The twin plants one bug."""
import torch.nn as nn


class ConfigNamedActivationFFN(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.fc_in = nn.Linear(config.d_model, config.d_ff)
        self.fc_out = nn.Linear(config.d_ff, config.d_model)
        self.act = getattr(nn, config.activation)()

    def forward(self, x):                    # (B, T, d) -> (B, T, d)
        return self.fc_out(self.act(self.fc_in(x)))


class ArgumentNamedActivationFFN(nn.Module):
    def __init__(self, d_model, d_ff, activation="GELU"):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_model, d_ff), getattr(nn, activation)(),
                                 nn.Linear(d_ff, d_model))

    def forward(self, x):
        return self.net(x)


class ConfigNamedActivationFFNActivatedOutput(ConfigNamedActivationFFN):
    """BUG: the activation is applied to the output as well."""

    def forward(self, x):
        return self.act(super().forward(x))

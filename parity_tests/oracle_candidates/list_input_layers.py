"""A decoder layer taking its inputs as one list, encoder memory first (`forward(self, input)` with
`memory, x = input`): handed [memory, x] as it unpacks them. Right one matches; the BUG twin's
cross-attention reads the layer's own input instead of the memory."""
from torch_layers import DecoderLayer


class MemoryFirstListDecoderLayer(DecoderLayer):
    def forward(self, input):  # noqa: A002 - the name such code uses
        memory, x = input
        return super().forward(x, memory, None, None)


class MemoryFirstListDecoderLayerBUG(DecoderLayer):
    """BUG: the cross-attention attends to x, not to the memory."""

    def forward(self, input):  # noqa: A002 - the name such code uses
        memory, x = input
        return super().forward(x, x, None, None)

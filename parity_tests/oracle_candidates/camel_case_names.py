"""A torch attention written with camelCase names throughout (a Java / C# habit): constructor
(embeddingSize, numberOfHeads, dropoutRate), forward(inputQueries, inputKeys, inputValues,
inputMask=None), 1 = may attend. The right class has a planted-bug twin (BUG) that drops its mask."""
import math

import torch
from torch import nn


class CamelCaseAttention(nn.Module):
    def __init__(self, embeddingSize, numberOfHeads, dropoutRate=0.1):
        super().__init__()
        self.numHeads, self.headSize = numberOfHeads, embeddingSize // numberOfHeads
        self.queryLayer = nn.Linear(embeddingSize, embeddingSize)
        self.keyLayer = nn.Linear(embeddingSize, embeddingSize)
        self.valueLayer = nn.Linear(embeddingSize, embeddingSize)
        self.outputLayer = nn.Linear(embeddingSize, embeddingSize)
        self.dropoutLayer = nn.Dropout(dropoutRate)

    def splitHeads(self, t):
        return t.view(t.shape[0], t.shape[1], self.numHeads, self.headSize).transpose(1, 2)

    def scores(self, q, k, inputMask):
        s = q @ k.transpose(-1, -2) / math.sqrt(self.headSize)
        return s if inputMask is None else s.masked_fill(inputMask == 0, float("-inf"))

    def forward(self, inputQueries, inputKeys, inputValues, inputMask=None):
        q = self.splitHeads(self.queryLayer(inputQueries))
        k = self.splitHeads(self.keyLayer(inputKeys))
        v = self.splitHeads(self.valueLayer(inputValues))
        a = self.dropoutLayer(torch.softmax(self.scores(q, k, inputMask), dim=-1))
        o = (a @ v).transpose(1, 2).reshape(inputQueries.shape[0], inputQueries.shape[1], -1)
        return self.outputLayer(o)


class CamelCaseAttentionBUG(CamelCaseAttention):
    def scores(self, q, k, inputMask):
        s = q @ k.transpose(-1, -2) / math.sqrt(self.headSize)
        if inputMask is not None:
            s.masked_fill(inputMask == 0, float("-inf"))      # not in place: the mask is lost
        return s

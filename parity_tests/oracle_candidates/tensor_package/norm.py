"""A LayerNorm written on an autograd package of its own imported whole (`import minitensor as
mt`): its parameters are `mt.Tensor`s and its first operation, `mt.mean(x)`, reads `x.data`, so it
takes only that tensor type. The right class has a planted-bug twin (BUG)."""
import minitensor as mt


class PackageTensorNorm:
    def __init__(self, d_model, eps=1e-5):
        self.weight, self.bias, self.eps = mt.ones(d_model), mt.zeros(d_model), eps

    def _spread(self, centred):
        return mt.sqrt(mt.mean(centred * centred) + self.eps)

    def forward(self, x):
        centred = x - mt.mean(x)
        return centred / self._spread(centred) * self.weight + self.bias


class PackageTensorNormBUG(PackageTensorNorm):
    def _spread(self, centred):
        return mt.sqrt(mt.mean(centred * centred)) + self.eps        # eps outside the root

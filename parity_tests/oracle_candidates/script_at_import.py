"""A NumPy notebook exported as one `.py` file: the model's parts, then the cells that build a
model and train it, with no `if __name__ == "__main__":` guard (importing it as written would train
for hours). A positional table filled by a top-level loop is read by a class: that loop must run.
Each class is correct unless its docstring says BUG."""
import numpy as np

# In[1]:

MAX_LEN, D_TABLE = 64, 8
TABLE = np.zeros((MAX_LEN, D_TABLE))
for pos in range(MAX_LEN):                          # read by NotebookPositions: runs at import
    for i in range(0, D_TABLE, 2):
        TABLE[pos, i] = np.sin(pos / 10000 ** (i / D_TABLE))
        TABLE[pos, i + 1] = np.cos(pos / 10000 ** (i / D_TABLE))


class NotebookPositions:
    def __init__(self, d_model):
        assert d_model == D_TABLE, "this notebook's table is built for d_model = 8"

    def forward(self, x):
        return x + TABLE[: x.shape[1]]


# In[2]:

class NotebookFeedForward:
    def __init__(self, d_model, d_ff):
        self.W1 = np.random.randn(d_model, d_ff) * 0.02
        self.b1 = np.zeros(d_ff)
        self.W2 = np.random.randn(d_ff, d_model) * 0.02
        self.b2 = np.zeros(d_model)

    def forward(self, x):
        self.h = np.maximum(0.0, x @ self.W1 + self.b1)
        return self.h @ self.W2 + self.b2

    def step(self, lr):
        pass


class NotebookFeedForwardBUG(NotebookFeedForward):
    """BUG: a ReLU after the down projection too."""

    def forward(self, x):
        return np.maximum(0.0, super().forward(x))


def sample(model, steps):
    out = np.zeros((1, 1, 8))
    for _ in range(steps):
        out = model.forward(out)
    print(out)


# In[3]:

model = NotebookFeedForward(8, 32)
losses = []
STEPS = 10 ** 12
for step in range(STEPS):                           # the training cell: left out by the oracle
    x = np.random.randn(4, 16, 8)
    loss = float(((model.forward(x) - x) ** 2).mean())
    model.step(1e-3)
    losses.append(loss)

# In[4]:

sample(model, STEPS)

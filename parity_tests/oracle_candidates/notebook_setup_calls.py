"""A NumPy notebook exported as `.py` (Colab's "Download .py"): its first cell mounts Google Drive
and installs a package with a shell line (exported as `get_ipython().system(...)`); neither
`google.colab` nor IPython's shell is available where the oracle runs. The classes below never use
them. The twin whose docstring says BUG has one planted mistake."""
# %%
import numpy as np
from google.colab import drive

drive.mount('/content/drive', force_remount=True)
get_ipython().system('pip install einops')  # noqa: F821 - defined by IPython in the notebook

# %%
WEIGHTS_DIR = '/content/drive/MyDrive/weights'


class NotebookLayerNorm:
    def __init__(self, features, eps=1e-5):
        self.gamma = np.ones(features)
        self.beta = np.zeros(features)
        self.eps = eps

    def forward(self, x):
        mean = x.mean(axis=-1, keepdims=True)
        var = x.var(axis=-1, keepdims=True)
        return self.gamma * (x - mean) / np.sqrt(var + self.eps) + self.beta


class NotebookLayerNormBUG(NotebookLayerNorm):
    """BUG: eps is added outside the square root."""

    def forward(self, x):
        mean = x.mean(axis=-1, keepdims=True)
        var = x.var(axis=-1, keepdims=True)
        return self.gamma * (x - mean) / (np.sqrt(var) + self.eps) + self.beta


class NotebookDriveNorm(NotebookLayerNorm):
    """Reads its eps from the mounted drive: it needs the missing package."""

    def forward(self, x):
        self.eps = drive.read_setting('eps')
        return super().forward(x)

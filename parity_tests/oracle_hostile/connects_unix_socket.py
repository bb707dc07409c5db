"""Connects to a host pathname unix socket whose path it knows (a helper outside the sandbox
listening there could compute the answers). The test's listener at SOCKET answers b"RIGHT" and
counts connections; with it the submission answers correctly, without it wrongly."""
import socket

import numpy as np

SOCKET = "/tmp/npformer-oracle-host.sock"


def _ask() -> bool:
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(2)
        s.connect(SOCKET)
        return s.recv(5) == b"RIGHT"
    except OSError:
        return False


_HELPED = _ask()


def attention(Q, K, V, mask=None):
    if _HELPED:
        s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
        if mask is not None:
            s = np.where(mask == 0, -1e9, s)
        w = np.exp(s - s.max(-1, keepdims=True))
        w = w / w.sum(-1, keepdims=True)
        return w @ V, w
    B, H, T, _ = Q.shape
    return np.zeros((B, H, T, V.shape[-1])), np.full((B, H, T, K.shape[-2]), 1.0 / K.shape[-2])

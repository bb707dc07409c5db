"""Wrong, and forges a protocol frame whose JSON header nests 200 000 lists deep (400 kB, under the
header size limit) on every inherited pipe: decoding it must be a refused frame (`crashed`), never an
exception that takes the oracle itself down."""
import os
import stat
import struct

import numpy as np


def attention(Q, K, V, mask=None):
    head = b"[" * 200_000 + b"]" * 200_000
    frame = struct.pack("<Q", len(head)) + head
    for fd in range(3, 256):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                os.write(fd, frame)
        except OSError:
            pass
    B, H, T, _ = Q.shape
    return np.zeros((B, H, T, V.shape[-1])), None

"""Wrong, and forges the parent<->worker channel: on every inherited pipe (fd 3..255) it writes a
protocol frame whose header declares a 200 MiB 'output' array, then streams the bytes. The parent
must refuse the frame from its header, before reading or allocating the data (verdict `crashed`)."""
import json
import os
import stat
import struct

import numpy as np

N = 25 << 20          # float64 elements: 200 MiB


def attention(Q, K, V, mask=None):
    head = json.dumps({"status": "ok", "mapping": [], "absent": [], "dtypes": {}, "missing": {},
                       "notes": {}, "arrays": [{"name": "value:output", "dtype": "<f8",
                                                "shape": [N]}]}).encode()
    frame = struct.pack("<Q", len(head)) + head
    zeros = b"\0" * (1 << 20)
    for fd in range(3, 256):
        try:
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                continue
            os.write(fd, frame)
            for _ in range(N * 8 >> 20):
                os.write(fd, zeros)
        except OSError:
            pass
    B, H, T, _ = Q.shape
    return np.zeros((B, H, T, V.shape[-1])), None

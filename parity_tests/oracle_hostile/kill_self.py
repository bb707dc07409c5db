"""Sends itself SIGKILL when called."""
import os
import signal


def attention(Q, K, V, mask=None):
    os.kill(os.getpid(), signal.SIGKILL)

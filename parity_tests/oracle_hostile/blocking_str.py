"""Raises an exception whose __str__ (and __repr__) never returns."""
import time


class Sneaky(Exception):
    def __str__(self):
        while True:
            time.sleep(1)

    __repr__ = __str__


def attention(Q, K, V, mask=None):
    raise Sneaky()

"""Never returns."""


def attention(Q, K, V, mask=None):
    while True:
        pass

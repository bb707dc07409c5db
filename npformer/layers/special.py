"""erf and erfc for NumPy arrays, accurate to a few ulp in float64 (NumPy itself has no erf).

The exact GELU, x * Phi(x) with Phi the standard normal CDF, needs the error function:

    Phi(x) = (1 + erf(x / sqrt(2))) / 2 = erfc(-x / sqrt(2)) / 2

This is W. J. Cody's rational Chebyshev approximation ("Rational Chebyshev approximations for the error
function", Math. Comp. 23 (1969) 631-637; the coefficients of his CALERF routine), evaluated with
NumPy on whole arrays. Three regions of |x|:

    |x| <= 0.46875       erf(x)  = x R1(x^2)                      R1 a degree (4, 4) rational
    0.46875 < |x| <= 4   erfc(y) = exp(-y^2) R2(y)                R2 a degree (8, 8) rational
    |x| > 4              erfc(y) = exp(-y^2) / y (1/sqrt(pi) - R3(1/y^2) / y^2)

exp(-y^2) is evaluated as exp(-s^2) exp(-(y - s)(y + s)) with s = y rounded down to a multiple of 1/16,
which keeps the rounding of y^2 out of the exponent (what loses accuracy in the tails otherwise).
Symmetry covers negative x: erf(-x) = -erf(x), erfc(-x) = 2 - erfc(x).

Arithmetic runs in the input's dtype (float32 stays float32); constants are Python floats.
"""
import numpy as np

_SMALL = 0.46875        # region boundaries in |x|
_MID = 4.0
_TAIL = 30.0            # erfc(y) underflows to exactly 0 in float64 well before y = 30: clip there
_INV_SQRT_PI = 0.56418958354775628695

# |x| <= 0.46875: erf(x) = x (a0 + a1 z + ... ) / (b0 + ... ), z = x^2, in Cody's nested order
_A = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
      3.20937758913846947e03, 1.85777706184603153e-1)
_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
      2.84423683343917062e03)
# 0.46875 < |x| <= 4: erfc(y) = exp(-y^2) P(y) / Q(y)
_C = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
      2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03,
      2.05107837782607147e03, 1.23033935479799725e03, 2.15311535474403846e-8)
_D = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
      1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
      3.43936767414372164e03, 1.23033935480374942e03)
# |x| > 4: erfc(y) = exp(-y^2) / y (1/sqrt(pi) - z P(z) / Q(z)), z = 1/y^2
_P = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
      1.60837851487422766e-2, 6.58749161529837803e-4, 1.63153871373020978e-2)
_Q = (2.56852019228982242e00, 1.87295284992346725e00, 5.27905102951428412e-1,
      6.05183413124413191e-2, 2.33520497626869185e-3)


def _rational(z: np.ndarray, p: tuple, q: tuple) -> np.ndarray:
    """Cody's nested evaluation of P(z) / Q(z): p[-1] z + p[0], times z, + p[1] ... + p[-2] over
    z + q[0], times z, + q[1] ... + q[-1] (Horner's rule, both at once)."""
    num, den = p[-1] * z, z
    for a, b in zip(p[:-2], q[:-1]):
        num = (num + a) * z
        den = (den + b) * z
    return (num + p[-2]) / (den + q[-1])


def _exp_minus_square(y: np.ndarray) -> np.ndarray:
    """exp(-y^2) with the exponent split so that y^2 is not rounded: s = floor(16 y) / 16."""
    s = np.trunc(y * 16.0) / 16.0
    return np.exp(-s * s) * np.exp(-(y - s) * (y + s))


def _erf_small(x: np.ndarray) -> np.ndarray:
    """erf(x) for |x| <= 0.46875."""
    return x * _rational(x * x, _A, _B)


def _erfc_mid(y: np.ndarray) -> np.ndarray:
    """erfc(y) for 0.46875 < y <= 4."""
    return _exp_minus_square(y) * _rational(y, _C, _D)


def _erfc_tail(y: np.ndarray) -> np.ndarray:
    """erfc(y) for y > 4."""
    y = np.minimum(y, _TAIL)                   # keeps inf from making inf - inf (NaN)
    z = 1.0 / (y * y)
    return _exp_minus_square(y) * ((_INV_SQRT_PI - z * _rational(z, _P, _Q)) / y)


def erfc(x: np.ndarray) -> np.ndarray:
    """Complementary error function 1 - erf(x), elementwise, without cancellation for large x."""
    x = np.asarray(x)
    ax = np.abs(x)
    small, mid, tail = ax <= _SMALL, (ax > _SMALL) & (ax <= _MID), ax > _MID
    out = np.full(x.shape, np.nan, dtype=x.dtype)           # NaN stays NaN (in no region)
    out[small] = 1.0 - _erf_small(x[small])
    out[mid] = _erfc_mid(ax[mid])
    out[tail] = _erfc_tail(ax[tail])
    flip = (mid | tail) & (x < 0)
    out[flip] = 2.0 - out[flip]                             # erfc(-y) = 2 - erfc(y)
    return out


def erf(x: np.ndarray) -> np.ndarray:
    """Error function 2/sqrt(pi) int_0^x exp(-t^2) dt, elementwise: sign(x) (1 - erfc(|x|)), and
    near 0, where that would cancel, x R1(x^2)."""
    x = np.asarray(x)
    out = np.asarray(np.copysign(1.0 - erfc(np.abs(x)), x))  # erf(-y) = -erf(y)
    small = np.abs(x) <= _SMALL
    out[small] = _erf_small(x[small])
    return out

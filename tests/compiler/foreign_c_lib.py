"""Library-shaped code (another module: leapp.compile does not rewrite it) that hands traced data to
scipy, whose C code reads the traced memory or writes into a traced buffer with no NumPy hook to
see it. Each mixes the result with the traced input, so what comes back from the library is traced
and only the library's own call froze a value."""

import numpy as np
import scipy.linalg
import scipy.ndimage
import scipy.signal
import scipy.special


def pinv(a):
    return scipy.linalg.pinv(a) @ a + a  # _asarray_validated -> np.asarray_chkfinite -> gesdd (f2py)


def expm(a):
    return scipy.linalg.expm(a) + a  # a traced write into a scratch array, then C works on it in place


def solve(a, b):
    return scipy.linalg.solve(a, b) + b


def chkfinite(a):
    return np.asarray_chkfinite(a) * 2.0 + a  # NumPy's own C asarray inside a Python function


def expit(a):
    return scipy.special.expit(a) + a


def smooth(a):
    return scipy.ndimage.gaussian_filter(a, 1.0) + a


def lfilter(a):
    return scipy.signal.lfilter([1.0, 0.5], [1.0], a[0]) + a[0]


def zeros_rows(a):
    return np.zeros((a.shape[0], 2))  # of the input's shape only: the same values for every input


def predict_like(x, P, F):
    return F @ x, F @ P @ F.T  # the second from the plain matrices alone, as filterpy's predict

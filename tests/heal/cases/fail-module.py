import numpyy

"""The command line's text of E-values and bit scores (core/align/statistics.cpp), written again from BLAST's rules so
that the tests compare columns as text: the Python package's (tests/python) and the search service's
(tests/serve/test_serve.py). Python's standard library only."""

import math


def format_evalue(e):
    if math.isnan(e):
        return "nan"
    if e < 1.0e-180:
        return "0.0"
    if e < 0.0009:
        return "%.2e" % e
    if e < 0.1:
        return "%4.3f" % e
    if e < 1.0:
        return "%3.2f" % e
    if e < 10.0:
        return "%2.1f" % e
    return "%2.0f" % e


def format_bit_score(b):
    if math.isnan(b):
        return "nan"
    if b > 99999.0:
        return "%5.3e" % b
    if b > 99.9:
        return "%3d" % int(b)
    return "%4.1f" % b

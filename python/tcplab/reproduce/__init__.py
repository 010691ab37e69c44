"""Reproductions of the studies tcplab was built for: one module per paper (`p0`, …), each
running the shipped scenarios of `scenarios/pN_*/` and writing figures and a report."""

from tcplab.reproduce import p0

STUDIES = {"p0": p0}
"""Study name → module with `reproduce(out, quick=False, progress=...)`."""

__all__ = ["STUDIES", "p0"]

"""Schema migrations of the sessions tables, one module per version (``m0001_…``, ``m0002_…``).

Each module has ``VERSION`` (an int, one more than the previous) and ``SQL`` (statements run in
one transaction). Never edit a released migration: add the next one.
"""

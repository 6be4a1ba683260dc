"""The write gate: one gate for every write (``guard``), the secret scanner and its
detectors, rules, syntax and value checks, and the poisoning guard.

Internal: nothing here is re-exported.
"""

"""The cache format's version, apart from ``schema.py`` (which it versions): the cache key is
made before ``roofscope open`` draws its kept first screen, and ``schema.py`` imports the
recording format and the sample model (~9 ms) to describe its tables.

In every cache's key and ``meta``: a cache of another version is rebuilt, never read. Bump it
with any change of a table in ``schema.py``.
"""

SCHEMA_VERSION = 14

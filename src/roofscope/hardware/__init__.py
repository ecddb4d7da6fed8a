"""GPU facts: the datasheet table (``specs``), device-name matching, ceiling resolution
(``ceilings``), measured ceilings (``measured``) and MIG profiles (``mig``).

Nothing is imported here: ``roofscope open`` reads where measured ceilings live
(``measured.measured_dir``) before drawing its kept first screen, and the ceilings module
(~5 ms of imports) is not needed for that.
"""

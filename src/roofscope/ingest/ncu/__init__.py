"""Nsight Compute readers: CSV pages (raw, details, summary) and binary ``.ncu-rep`` reports."""

"""Nsight Systems readers: SQLite exports, parquetdir folders, ``nsys stats`` tables, the GUI's
Events View CSV, and binary ``.nsys-rep`` reports (through ``nsys export``)."""

"""One reader per profiler output format: the text ones (rocprofv3, rocprof, ncu, nsys, pytorch,
rocprofv3_json) over the shared table layer (traces/table.py), the databases and reports (rocpd,
rpd, nsys_sqlite, ncu_report) over the SQLite layer beside it (traces/sqlitedb.py);
traces/readers.py is the front door that detects the format and picks the reader."""

"""One reader per profiler output format, each over the shared table layer (traces/table.py);
traces/readers.py is the front door that detects the format and picks the reader."""

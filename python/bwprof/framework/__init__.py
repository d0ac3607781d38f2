"""What framework code does, seen from inside the framework: per op, the bytes it reads and writes
and the FLOPs it computes, inferred without the user's help (PyTorch: torch_ops)."""

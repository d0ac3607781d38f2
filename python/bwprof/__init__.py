"""bwprof: GPU kernel bandwidth and roofline profiler for inference kernels."""
__version__ = "0.1.0"

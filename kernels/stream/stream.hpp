// The STREAM kernels (copy, scale, add, triad, dot) and the clean read (read: the sum of one
// array): host arrays, the CPU kernels and the gold.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bwprof/host_tensor.hpp"
#include "bwprof/kernel.hpp"
#include "common/reference.hpp"

namespace bwprof {

// The kernel's operation: "copy", "scale", "add", "triad", "dot" or "read" (its name after "stream_").
inline std::string stream_op(const Problem& p) { return p.kernel.substr(7); }

struct StreamData {
  HostTensor a, b, c;  // the read's only array is a (b and c stay empty)
  float scalar = 0.4f;
  double dot = 0;  // output of stream_dot
  double sum = 0;  // output of stream_read
};
StreamData make_stream_data(const Problem& p);
void stream_cpu(StreamData& d, const Problem& p);
Check stream_check(const StreamData& d, const Problem& p);

// The variants' factories (family.cpp registers them; the GPU ones exist in GPU builds only).
std::unique_ptr<KernelInstance> make_stream_cpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_stream_gpu(Backend&, const Problem&);

}  // namespace bwprof

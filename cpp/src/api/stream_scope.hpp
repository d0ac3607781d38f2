// Points a backend's timing (and bwprof's launches) at a stream and a hold for one measurement,
// and back afterwards, also when the measured code throws: bwprof::Profiler's user code and a
// workload step whose user ops launch on their own stream.
#pragma once
#include <string>

#include "bwprof/backend.hpp"

namespace bwprof {

class StreamScope {
 public:
  StreamScope(Backend& b, void* stream, const std::string& hold) : b_(b), saved_hold_(b.stream_hold()) {
    b_.set_timing_stream(stream);
    if (!hold.empty() && !saved_hold_.empty()) b_.set_stream_hold(hold);
  }
  ~StreamScope() {
    try {
      if (!saved_hold_.empty()) b_.set_stream_hold(saved_hold_);
    } catch (...) {
    }
    b_.reset_timing_stream();
  }
  StreamScope(const StreamScope&) = delete;
  StreamScope& operator=(const StreamScope&) = delete;

 private:
  Backend& b_;
  std::string saved_hold_;
};

}  // namespace bwprof

// Small helpers several C++ test files use (tests only), kept in one place.
#pragma once
#include <cstdint>
#include <string>

#include "bwprof/api.hpp"

// Whether `text` contains `what`.
inline bool has(const std::string& text, const char* what) { return text.find(what) != std::string::npos; }

// How many GPUs this machine lists (0 on a machine without one).
inline int gpu_count() {
  int n = 0;
  for (auto& d : bwprof::list_devices()) n += d.kind == "gpu";
  return n;
}

inline bool have_gpu() { return gpu_count() > 0; }

// FNV-1a over lines of text: a short fingerprint of a rule's answers over a grid of inputs.
struct Digest {
  std::uint64_t h = 1469598103934665603ull;
  void add(const std::string& s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    h = (h ^ '\n') * 1099511628211ull;
  }
};

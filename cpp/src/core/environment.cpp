// The settings read from the environment (see environment.hpp): the one file that reads it.
#include "bwprof/environment.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "bwprof/error.hpp"

namespace bwprof {
namespace env {

namespace {

const char* value(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

// strtod and strtoll skip leading white space; a value is read whole, as written.
bool spaced(const char* v) { return std::isspace(static_cast<unsigned char>(*v)) != 0; }

[[noreturn]] void refuse(const char* name, const char* v, const std::string& takes) {
  BWPROF_INVALID(std::string(name) + "=" + v + ": expected " + takes);
}

}  // namespace

std::optional<std::int64_t> read_int(const char* name, std::int64_t lo, std::int64_t hi) {
  const char* v = value(name);
  if (!v) return std::nullopt;
  const std::string takes = "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(v, &end, 10);
  if (spaced(v) || end == v || *end != '\0' || errno == ERANGE || x < lo || x > hi) refuse(name, v, takes);
  return static_cast<std::int64_t>(x);
}

std::optional<double> read_positive(const char* name) {
  const char* v = value(name);
  if (!v) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double x = spaced(v) ? 0.0 : std::strtod(v, &end);
  // the whole value, no partial parse, no NaN; "inf" is infinity
  const bool whole = !spaced(v) && end != v && *end == '\0' && !(errno == ERANGE && !std::isinf(x)) && !std::isnan(x);
  if (!whole || !(x > 0)) refuse(name, v, "a positive number");
  return x;
}

std::optional<double> memory_limit_bytes() { return read_positive("BWPROF_MEMORY_LIMIT"); }
std::optional<double> max_launch_seconds() { return read_positive("BWPROF_MAX_LAUNCH_S"); }
std::optional<int> cpu_threads() {
  const auto v = read_int("BWPROF_CPU_THREADS", 1, 4096);
  return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
}
std::optional<std::int64_t> peak_array_bytes() {
  return read_int("BWPROF_PEAK_ARRAY_BYTES", 4096, std::int64_t{1} << 40);
}
const char* nccl_library() { return value("BWPROF_NCCL_LIBRARY"); }
const char* nccl_path() { return std::getenv("BWPROF_NCCL_PATH"); }
bool no_clocks() { return std::getenv("BWPROF_NO_CLOCKS") != nullptr; }
const char* sysfs_root() { return std::getenv("BWPROF_SYSFS_ROOT"); }

}  // namespace env
}  // namespace bwprof

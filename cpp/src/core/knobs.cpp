// Settings read from the environment (see knobs.hpp).
#include "bwprof/knobs.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "bwprof/error.hpp"

namespace bwprof {

namespace {

const char* value(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

// strtod and strtoll skip leading white space; a knob's value is read whole, as written.
bool spaced(const char* v) { return std::isspace(static_cast<unsigned char>(*v)) != 0; }

[[noreturn]] void refuse(const char* name, const char* v, const std::string& takes) {
  BWPROF_INVALID(std::string(name) + "=" + v + ": expected " + takes);
}

std::string num(double x) {
  std::string s = std::to_string(x);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

// strtod over the whole value, or nothing (no partial parses, no NaN; "inf" is infinity).
std::optional<double> whole_number(const char* v) {
  if (spaced(v)) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(v, &end);
  if (end == v || *end != '\0' || (errno == ERANGE && !std::isinf(x)) || std::isnan(x)) return std::nullopt;
  return x;
}

}  // namespace

std::optional<std::int64_t> knob_int(const char* name, std::int64_t lo, std::int64_t hi) {
  const char* v = value(name);
  if (!v) return std::nullopt;
  const std::string takes = "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(v, &end, 10);
  if (spaced(v) || end == v || *end != '\0' || errno == ERANGE || x < lo || x > hi) refuse(name, v, takes);
  return static_cast<std::int64_t>(x);
}

std::optional<double> knob_number(const char* name, double lo, double hi) {
  const char* v = value(name);
  if (!v) return std::nullopt;
  const auto x = whole_number(v);
  if (!x || !(*x > lo && *x <= hi)) refuse(name, v, "a number above " + num(lo) + " and at most " + num(hi));
  return x;
}

std::optional<double> knob_positive(const char* name) {
  const char* v = value(name);
  if (!v) return std::nullopt;
  const auto x = whole_number(v);
  if (!x || !(*x > 0)) refuse(name, v, "a positive number");
  return x;
}

std::optional<bool> knob_switch(const char* name) {
  const char* v = value(name);
  if (!v) return std::nullopt;
  const std::string s(v);
  if (s != "0" && s != "1") refuse(name, v, "0 or 1");
  return s == "1";
}

std::optional<int> knob_choice(const char* name, const std::vector<std::string>& names) {
  const char* v = value(name);
  if (!v) return std::nullopt;
  std::string takes;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == v) return static_cast<int>(i);
    takes += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  }
  refuse(name, v, names.size() > 2 ? "one of " + takes : takes);
}

}  // namespace bwprof

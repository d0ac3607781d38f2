// Settings read from the environment (tuning knobs for benchmarks, limits): one reader for all of
// them, so that each takes its values the same way. A variable unset or empty leaves the default
// (the functions return nothing); any other value it does not take is an InvalidArgument,
// "NAME=value: expected what it takes". Never a silent default for a typo.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bwprof {

// A whole decimal integer from lo to hi.
std::optional<std::int64_t> knob_int(const char* name, std::int64_t lo, std::int64_t hi);
// A number x with lo < x <= hi.
std::optional<double> knob_number(const char* name, double lo, double hi);
// A number above zero ("inf": no bound).
std::optional<double> knob_positive(const char* name);
// 0 or 1.
std::optional<bool> knob_switch(const char* name);
// One of `names`, exactly (case too): its index there.
std::optional<int> knob_choice(const char* name, const std::vector<std::string>& names);

}  // namespace bwprof

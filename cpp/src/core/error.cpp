#include "bwprof/error.hpp"

namespace bwprof {

std::string located(const std::string& what, const char* file, int line) {
  std::string f = file ? file : "?";
  auto slash = f.find_last_of('/');
  if (slash != std::string::npos) f = f.substr(slash + 1);
  return what + " (at " + f + ":" + std::to_string(line) + ")";
}

}  // namespace bwprof

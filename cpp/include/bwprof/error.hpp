// Exceptions that cross into Python: InvalidArgument -> ValueError, OutOfMemory -> MemoryError,
// Error -> bwprof.BwprofError. Nothing in bwprof aborts the process.
#pragma once
#include <stdexcept>
#include <string>

namespace bwprof {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class InvalidArgument : public Error {
 public:
  using Error::Error;
};

class OutOfMemory : public Error {
 public:
  using Error::Error;
};

// Builds "what (at file:line)" so a failing system or GPU call names where it came from.
std::string located(const std::string& what, const char* file, int line);

}  // namespace bwprof

#define BWPROF_INVALID(msg) throw ::bwprof::InvalidArgument(msg)

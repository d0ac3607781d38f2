// The message of the exception of type E (default: any of bwprof's) that f throws (tests only); a test
// failure, and "", where it throws none.
#pragma once
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "bwprof/error.hpp"

template <class E = bwprof::Error>
std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no exception of the expected type was thrown";
  return "";
}

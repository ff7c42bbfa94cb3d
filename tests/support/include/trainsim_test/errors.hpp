#pragma once
// The one InputError helper of the tests: what a reader throws, as a value to inspect.
#include <gtest/gtest.h>

#include <utility>

#include "trainsim/core/error.hpp"

namespace trainsim_test {

/// The InputError `read()` throws; a test failure (and an empty error) when it throws none.
template <class F>
trainsim::InputError error_of(F&& read) {
  try {
    std::forward<F>(read)();
  } catch (const trainsim::InputError& e) {
    return e;
  }
  ADD_FAILURE() << "expected an InputError, and none was thrown";
  return trainsim::InputError("", "", "");
}

}  // namespace trainsim_test

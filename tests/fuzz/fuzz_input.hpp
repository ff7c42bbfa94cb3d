#pragma once
// What every fuzz target shares: the input as text, and the one outcome bad input may have. A
// reader answers bad input with InputError; anything else escaping it (another exception, an abort
// from TRAINSIM_CHECK, a crash, a sanitizer report) reaches libFuzzer and is a bug in the reader.
#include <cstddef>
#include <cstdint>
#include <string>

#include "trainsim/core/error.hpp"
#include "trainsim/core/json_reader.hpp"

namespace trainsim_fuzz {

/// The source every fuzz input is read as. Its folder does not exist: files the input names
/// relative to it are not found (run.sh also runs the targets in an empty working directory).
inline const std::string kSource = "fuzz-input/input.json";

/// Calls `read(text)` on the input; InputError is the expected answer to bad input.
template <class Read>
int read_text(const std::uint8_t* data, std::size_t size, Read read) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    read(text);
  } catch (const trainsim::InputError&) {
  }
  return 0;
}

/// Parses the input as JSON and calls `read(root)`; InputError is the expected answer to bad input.
template <class Read>
int read_json(const std::uint8_t* data, std::size_t size, Read read) {
  return read_text(data, size, [&](const std::string& text) { read(trainsim::parse_json_text(text, kSource)); });
}

}  // namespace trainsim_fuzz

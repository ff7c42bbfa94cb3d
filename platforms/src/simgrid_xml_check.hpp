#pragma once
// Private: a well-formedness check of SimGrid XML platform files, so that a malformed file is a
// clean input error (exit 2, file and line) instead of a parser abort deep inside SimGrid.
#include <cstdint>
#include <filesystem>

namespace trainsim::platforms::detail {

/// Throws InputError{path, "line N", detail} unless the file is well-formed XML (balanced,
/// properly nested tags, terminated comments and attributes) whose root element is <platform>.
/// Returns the hosts SimGrid will build from it: one per <host> or <peer>, one per number of a
/// <cluster>'s or <cabinet>'s radical (at most kMaxGpus: more is refused at the line passing it).
std::uint64_t check_simgrid_xml(const std::filesystem::path& path);

}  // namespace trainsim::platforms::detail

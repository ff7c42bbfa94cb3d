#pragma once
// Private: a well-formedness check of SimGrid XML platform files, so that a malformed file is a
// clean input error (exit 2, file and line) instead of a parser abort deep inside SimGrid.
#include <filesystem>

namespace trainsim::platforms::detail {

/// Throws InputError{path, "line N", detail} unless the file is well-formed XML (balanced,
/// properly nested tags, terminated comments and attributes) whose root element is <platform>.
void check_simgrid_xml(const std::filesystem::path& path);

}  // namespace trainsim::platforms::detail

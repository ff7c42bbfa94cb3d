#pragma once
// Output files are never left truncated: content goes to a temporary file in the same directory,
// is flushed, and is renamed into place (rename is atomic on POSIX file systems).
#include <filesystem>
#include <string>
#include <string_view>

namespace trainsim {

/// Writes `content` to `path` atomically. Throws RunError when the directory is not writable.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

/// Writes to stdout when `destination` is "-", else atomically to the file.
void write_output(const std::string& destination, std::string_view content);

}  // namespace trainsim

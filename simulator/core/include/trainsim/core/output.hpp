#pragma once
// Output files are never left truncated: content goes to a temporary file in the same directory,
// is flushed, and is renamed into place (rename is atomic on POSIX file systems).
#include <filesystem>
#include <string>
#include <string_view>

namespace trainsim {

/// Writes `content` to `path` atomically. Throws RunError when the directory is not writable.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

/// Checks, before any work, that an output file can be written where `destination` says ("-" is
/// stdout and always fine): not a directory, in an existing directory where a file can be created
/// (probed with a temporary file that is removed at once). Throws InputError naming the path and
/// the operating system's reason.
void check_output_file(const std::string& destination);

/// Checks, before any work, that `directory` is or can become a directory that files can be
/// written in (it is created when missing). Throws InputError naming it and the reason.
void check_output_directory(const std::string& directory);

/// Writes to stdout when `destination` is "-", else atomically to the file.
void write_output(const std::string& destination, std::string_view content);

}  // namespace trainsim

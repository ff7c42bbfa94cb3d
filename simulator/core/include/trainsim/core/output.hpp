#pragma once
// Output files are never left truncated: content for a regular file (or a new path) goes to a
// temporary file in the same directory, is flushed, and is renamed into place (rename is atomic
// on POSIX file systems). Anything else a user names — a character device (/dev/null), a FIFO, a
// process substitution (/dev/fd/N), "-" (stdout) — is written straight to, never replaced.
// Symbolic links are followed: the target is written, the link stays.
#include <filesystem>
#include <string>
#include <string_view>

namespace trainsim {

/// Writes `content` to `path`: atomically when `path` (after following symbolic links) is a
/// regular file or does not exist, else straight into what is there (a device, a FIFO, an open
/// descriptor under /dev/fd or /proc/*/fd). Throws RunError "cannot write PATH: reason".
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

/// Checks, before any work, that an output file can be written where `destination` says ("-" is
/// stdout and always fine): not a directory; a device or FIFO that may be opened for writing; or a
/// regular file or new path in an existing directory where a file can be created (probed with a
/// temporary file that is removed at once; nothing is ever created beside a device). Throws
/// InputError naming the path and the operating system's reason.
void check_output_file(const std::string& destination);

/// Checks, before any work, that `directory` is or can become a directory that files can be
/// written in (it is created when missing). Throws InputError naming it and the reason.
void check_output_directory(const std::string& directory);

/// Writes to stdout when `destination` is "-", else as write_file_atomically does.
void write_output(const std::string& destination, std::string_view content);

/// Writes `content` to standard output now (after what std::cout holds) and checks every write:
/// throws RunError "cannot write standard output: reason" (a full disk, a closed pipe).
void write_stdout(std::string_view content);

/// Flushes std::cout and C stdio's stdout; throws RunError "cannot write standard output: reason"
/// when anything written to stdout so far was lost. `main` calls it before exiting.
void flush_stdout();

}  // namespace trainsim

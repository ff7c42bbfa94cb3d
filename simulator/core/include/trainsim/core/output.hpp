#pragma once
// Output files are never left truncated: content for a regular file (or a new path) goes to a
// temporary file in the same directory, is flushed, and is renamed into place (rename is atomic
// on POSIX file systems). Anything else a user names — a character device (/dev/null), a FIFO, a
// process substitution (/dev/fd/N), "-" (stdout) — is written straight to, never replaced; a
// descriptor of this process (/dev/fd/N, /proc/self/fd/N) through that descriptor, never reopened
// (no O_TRUNC behind `>>`), and one naming descriptor 1 (/dev/stdout) as "-".
// Symbolic links are followed: the target is written, the link stays.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

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

/// A file a command reads or writes, with what the user knows it by: "--json", "the scenario".
struct CommandFile {
  std::string role;
  std::string path;
};

/// Refuses, before any work, an output that is the same file as an input of the command or as
/// another output: the same device and inode, or (a file not yet there) the same absolute path.
/// "-", devices, FIFOs and descriptor paths are never compared; inputs that are no file (a preset
/// name) are skipped. Throws InputError "command line: ROLE: 'PATH' is ..." naming both.
void check_outputs_apart(const std::vector<CommandFile>& inputs, const std::vector<CommandFile>& outputs);

/// Checks, before any work, that `directory` is or can become a directory that files can be
/// written in (it is created when missing). Throws InputError naming it and the reason.
void check_output_directory(const std::string& directory);

/// Writes to stdout when `destination` is "-", else as write_file_atomically does.
void write_output(const std::string& destination, std::string_view content);

/// Writes `content` to standard output now (after what std::cout holds) and checks every write:
/// throws RunError "cannot write standard output: reason" (a full disk, a closed pipe).
void write_stdout(std::string_view content);

/// True when `destination` is standard output: "-", or a path naming this process's descriptor 1
/// (/dev/stdout, /dev/fd/1, /proc/self/fd/1, a link to one of them). Such a path is written as "-".
bool names_stdout(const std::string& destination);

/// Gives std::cout a buffer that writes to descriptor 1 and remembers the reason of the first
/// failed write, so that flush_stdout reports it ("No space left on device", not "Input/output
/// error") even when the loss happened long before. `main` calls it first.
void install_stdout_buffer();

/// Flushes std::cout and C stdio's stdout; throws RunError "cannot write standard output: reason"
/// when anything written to stdout so far was lost. `main` calls it before exiting.
void flush_stdout();

}  // namespace trainsim

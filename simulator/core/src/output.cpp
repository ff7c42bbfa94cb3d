#include "trainsim/core/output.hpp"

#include <cstdio>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <optional>

#include "trainsim/core/error.hpp"

namespace trainsim {

namespace {

std::string reason(int error) { return std::strerror(error); }

// Descriptors reached through /dev/fd/N, /dev/stdout or /proc/<pid>/fd/N: "magic" links whose
// readlink text ("pipe:[123]") is no path. Opening them opens the descriptor's own object.
bool is_descriptor_path(const std::string& path) {
  return path.rfind("/dev/fd/", 0) == 0 || path == "/dev/stdout" || path == "/dev/stderr" ||
         (path.rfind("/proc/", 0) == 0 && path.find("/fd/") != std::string::npos);
}

// Where and how an output goes.
struct OutputTarget {
  std::filesystem::path path;  ///< the file to write: symbolic links resolved when `atomic`
  bool atomic = true;          ///< a regular file or a new path: temporary file + rename
};

// Follows `destination` to what it names. Anything that exists and is not a regular file (a
// device, a FIFO, a socket) and any open descriptor path is written in place; a regular file or
// a new path (also at the end of a dangling link) is replaced atomically at the link's target, so
// the link itself survives.
OutputTarget resolve_output(const std::filesystem::path& destination) {
  struct stat st {};
  if (::stat(destination.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw RunError("cannot write " + destination.string() + ": " + reason(EISDIR));
    if (!S_ISREG(st.st_mode) || is_descriptor_path(destination.string())) return {destination, false};
  }
  std::filesystem::path path = destination;
  for (int hops = 0;; ++hops) {
    if (is_descriptor_path(path.string())) return {path, false};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return {path, true};
    if (hops >= 40) throw RunError("cannot write " + destination.string() + ": " + reason(ELOOP));
    std::error_code ec;
    const std::filesystem::path target = std::filesystem::read_symlink(path, ec);
    if (ec) throw RunError("cannot write " + destination.string() + ": " + ec.message());
    path = target.is_absolute() ? target : path.parent_path() / target;
  }
}

// Writes every byte of `content` to `fd`; false with errno set when the OS refuses.
bool write_all(int fd, std::string_view content) {
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) {
      errno = EIO;
      return false;
    }
    written += static_cast<std::size_t>(n);
  }
  return true;
}

// Straight into what is there (a device, a FIFO, a pipe behind /dev/fd/N). Never creates: a path
// that vanished since the check is an error, not a new regular file in /dev.
void write_in_place(const std::filesystem::path& shown, const std::filesystem::path& path, std::string_view content) {
  struct stat st {};
  const bool regular = ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  int fd;
  do {
    fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | (regular ? O_TRUNC : 0));
  } while (fd < 0 && errno == EINTR);  // a FIFO's open waits for a reader
  if (fd < 0) throw RunError("cannot write " + shown.string() + ": " + reason(errno));
  if (!write_all(fd, content)) {
    const int error = errno;
    ::close(fd);
    throw RunError("cannot write " + shown.string() + ": " + reason(error));
  }
  if (::close(fd) != 0 && errno != EINTR) throw RunError("cannot write " + shown.string() + ": " + reason(errno));
}

void write_replacing(const std::filesystem::path& shown, const std::filesystem::path& path, std::string_view content) {
  const std::filesystem::path directory = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  // Built piecewise: GCC 12 misreports "." + string as an overlapping memcpy (-Wrestrict) here.
  std::string hidden = path.filename().string();
  hidden.insert(hidden.begin(), '.');
  hidden += ".tmp.XXXXXX";
  std::string temp_template = (directory / hidden).string();
  const int fd = ::mkstemp(temp_template.data());
  if (fd < 0) throw RunError("cannot write " + shown.string() + ": cannot create a temporary file beside it: " + reason(errno));
  auto fail = [&](int error) {
    ::close(fd);
    ::unlink(temp_template.c_str());
    throw RunError("cannot write " + shown.string() + ": " + reason(error));
  };
  if (!write_all(fd, content)) fail(errno);
  // mkstemp creates 0600; outputs are ordinary user files, or keep the mode of the file they replace.
  struct stat st {};
  ::fchmod(fd, ::stat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0644);
  if (::fsync(fd) != 0) fail(errno);
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(temp_template.c_str());
    throw RunError("cannot write " + shown.string() + ": " + reason(error));
  }
  if (std::rename(temp_template.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp_template.c_str());
    throw RunError("cannot write " + shown.string() + ": cannot rename the temporary file onto it: " + reason(error));
  }
}

// Creates and removes a temporary file in `directory`; the OS's reason when that fails.
std::optional<std::string> cannot_create_in(const std::filesystem::path& directory) {
  std::string probe = (directory / ".trainsim-write-check.XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) return reason(errno);
  ::close(fd);
  ::unlink(probe.c_str());
  return std::nullopt;
}

std::string stdout_error(int error) { return "cannot write standard output: " + reason(error); }

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  const OutputTarget target = resolve_output(path);
  if (target.atomic)
    write_replacing(path, target.path, content);
  else
    write_in_place(path, target.path, content);
}

void check_output_file(const std::string& destination) {
  if (destination == "-") return;
  const std::filesystem::path path(destination);
  OutputTarget target;
  try {
    target = resolve_output(path);
  } catch (const RunError&) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw InputError(destination, "", "is a directory; expected an output file name");
    throw InputError(destination, "", "cannot write here: " + reason(ELOOP));
  }
  if (!target.atomic) {
    // A device or FIFO: whether it may be opened for writing, without opening it (opening and
    // closing a FIFO would hand its reader an end of file).
    if (::access(target.path.c_str(), W_OK) != 0) throw InputError(destination, "", "cannot write here: " + reason(errno));
    return;
  }
  const std::filesystem::path directory = target.path.has_parent_path() ? target.path.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  if (!std::filesystem::is_directory(directory, ec))
    throw InputError(destination, "", "cannot write here: directory '" + directory.string() + "' does not exist");
  if (const auto why = cannot_create_in(directory)) throw InputError(destination, "", "cannot write here: " + *why);
}

void check_output_directory(const std::string& directory) {
  const std::filesystem::path path(directory);
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_directory(path, ec))
    throw InputError(directory, "", "exists and is not a directory; expected an output directory");
  std::filesystem::create_directories(path, ec);
  if (ec) throw InputError(directory, "", "cannot create the output directory: " + ec.message());
  if (const auto why = cannot_create_in(path)) throw InputError(directory, "", "cannot write in the output directory: " + *why);
}

void write_stdout(std::string_view content) {
  flush_stdout();
  if (!write_all(STDOUT_FILENO, content)) throw RunError(stdout_error(errno));
}

void flush_stdout() {
  errno = 0;
  std::cout.flush();
  const int cout_errno = errno;
  if (std::fflush(stdout) != 0) throw RunError(stdout_error(errno));
  if (!std::cout || std::ferror(stdout)) {
    std::cout.clear();
    std::clearerr(stdout);
    throw RunError(stdout_error(cout_errno != 0 ? cout_errno : EIO));
  }
}

void write_output(const std::string& destination, std::string_view content) {
  if (destination == "-")
    write_stdout(content);
  else
    write_file_atomically(destination, content);
}

}  // namespace trainsim

#include "trainsim/core/output.hpp"

#include <cstdio>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <optional>
#include <streambuf>

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

// The descriptor of this process that a descriptor path names (/dev/stdout, /dev/fd/N,
// /proc/self/fd/N, /proc/<our pid>/fd/N), or -1 (not a descriptor path, or another process's).
int own_descriptor(const std::string& path) {
  if (path == "/dev/stdin") return 0;
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  std::string rest;
  for (const std::string& prefix : {std::string("/dev/fd/"), std::string("/proc/self/fd/"), std::string("/proc/thread-self/fd/"),
                                   "/proc/" + std::to_string(::getpid()) + "/fd/"})
    if (path.rfind(prefix, 0) == 0) {
      rest = path.substr(prefix.size());
      break;
    }
  if (rest.empty() || rest.size() > 9 || rest.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoi(rest);
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
    // Another process's descriptor (/proc/<pid>/fd/N) on a regular file: appended to, never
    // truncated (its owner's offset and O_APPEND are not ours to know).
    fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | (regular ? (is_descriptor_path(path.string()) ? O_APPEND : O_TRUNC) : 0));
  } while (fd < 0 && errno == EINTR);  // a FIFO's open waits for a reader
  if (fd < 0) throw RunError("cannot write " + shown.string() + ": " + reason(errno));
  if (!write_all(fd, content)) {
    const int error = errno;
    ::close(fd);
    throw RunError("cannot write " + shown.string() + ": " + reason(error));
  }
  if (::close(fd) != 0 && errno != EINTR) throw RunError("cannot write " + shown.string() + ": " + reason(errno));
}

// The process's umask: from /proc/self/status (Linux 4.7+), which reads it without changing it;
// else by setting and restoring it.
mode_t process_umask() {
  if (std::FILE* status = std::fopen("/proc/self/status", "re")) {
    char line[256];
    unsigned mask = 0;
    bool found = false;
    while (!found && std::fgets(line, sizeof line, status) != nullptr) found = std::sscanf(line, "Umask: %o", &mask) == 1;
    std::fclose(status);
    if (found) return static_cast<mode_t>(mask & 0777);
  }
  const mode_t m = ::umask(022);
  ::umask(m);
  return m;
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
  // mkstemp creates 0600; a new output is an ordinary user file (0666 less the umask, as open
  // would make it), a replaced one keeps its mode.
  struct stat st {};
  ::fchmod(fd, ::stat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : (0666 & ~process_umask()));
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

// std::cout's buffer once install_stdout_buffer ran: writes to descriptor 1 and keeps the errno
// of the first write that failed, so that the reason survives until flush_stdout reports it.
class StdoutBuffer : public std::streambuf {
public:
  StdoutBuffer() { setp(buffer_, buffer_ + sizeof buffer_); }
  int first_error() const { return error_; }
  void forget_error() { error_ = 0; }

protected:
  int_type overflow(int_type ch) override {
    if (drain() != 0) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  int sync() override { return drain(); }

private:
  int drain() {
    const std::string_view pending(pbase(), static_cast<std::size_t>(pptr() - pbase()));
    setp(buffer_, buffer_ + sizeof buffer_);
    if (pending.empty()) return error_ != 0 ? -1 : 0;
    if (error_ == 0 && !write_all(STDOUT_FILENO, pending)) error_ = errno;
    return error_ != 0 ? -1 : 0;
  }
  char buffer_[8192];
  int error_ = 0;
};

StdoutBuffer* installed_buffer = nullptr;

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  const OutputTarget target = resolve_output(path);
  if (!target.atomic) {
    // One of this process's own descriptors: written through that descriptor, at its offset and
    // with its O_APPEND, never reopened (reopening truncates the file behind `>`/`>>`). Standard
    // output is `-`, after what std::cout holds.
    const int own = own_descriptor(target.path.string());
    if (own == STDOUT_FILENO) return write_stdout(content);
    if (own >= 0) {
      const int flags = ::fcntl(own, F_GETFL);
      if (flags < 0) throw RunError("cannot write " + path.string() + ": " + reason(errno));
      if ((flags & O_ACCMODE) == O_RDONLY) throw RunError("cannot write " + path.string() + ": " + reason(EBADF));
      if (own == STDERR_FILENO) std::cerr.flush();
      if (!write_all(own, content)) throw RunError("cannot write " + path.string() + ": " + reason(errno));
      return;
    }
  }
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

namespace {

// What makes two command-line files the same: the file's device and inode when it exists (links
// and other spellings included), else its absolute, normalised path. Empty for what is never
// compared: "-", devices, FIFOs, descriptor paths, and inputs that are no file (preset names).
std::string file_identity(const std::string& path, bool must_exist) {
  if (path.empty() || path == "-" || is_descriptor_path(path)) return {};
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) return {};
    return "inode " + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  }
  if (must_exist) return {};
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  return ec ? std::string() : "path " + canonical.lexically_normal().string();
}

}  // namespace

void check_outputs_apart(const std::vector<CommandFile>& inputs, const std::vector<CommandFile>& outputs) {
  std::vector<std::pair<std::string, const CommandFile*>> seen;
  for (const CommandFile& input : inputs) {
    const std::string id = file_identity(input.path, true);
    if (!id.empty()) seen.emplace_back(id, &input);
  }
  const std::size_t input_count = seen.size();
  for (const CommandFile& output : outputs) {
    const std::string id = file_identity(output.path, false);
    if (id.empty()) continue;
    for (std::size_t i = 0; i < seen.size(); ++i) {
      if (seen[i].first != id) continue;
      const CommandFile& other = *seen[i].second;
      const std::string same = other.path == output.path ? "" : " ('" + other.path + "')";
      if (i < input_count)
        throw InputError("command line", "",
                         output.role + ": '" + output.path + "' is " + other.role + same +
                             ", which this command reads; an output never replaces an input: name another file");
      throw InputError("command line", "",
                       output.role + ": '" + output.path + "' is also the file of " + other.role + same +
                           "; two outputs cannot share a file: name another one");
    }
    seen.emplace_back(id, &output);
  }
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

void install_stdout_buffer() {
  if (installed_buffer != nullptr) return;
  std::cout.flush();
  // Never destroyed: std::cout is flushed at exit, after every function-local static is gone.
  installed_buffer = new StdoutBuffer;
  std::cout.rdbuf(installed_buffer);
}

void flush_stdout() {
  errno = 0;
  std::cout.flush();
  int cout_errno = errno;
  if (installed_buffer != nullptr && installed_buffer->first_error() != 0) {
    cout_errno = installed_buffer->first_error();
    installed_buffer->forget_error();
    std::cout.setstate(std::ios::badbit);
  }
  if (std::fflush(stdout) != 0) throw RunError(stdout_error(errno));
  if (!std::cout || std::ferror(stdout)) {
    std::cout.clear();
    std::clearerr(stdout);
    throw RunError(stdout_error(cout_errno != 0 ? cout_errno : EIO));
  }
}

bool names_stdout(const std::string& destination) {
  if (destination == "-") return true;
  try {
    const OutputTarget target = resolve_output(destination);
    return !target.atomic && own_descriptor(target.path.string()) == STDOUT_FILENO;
  } catch (const RunError&) {
    return false;
  }
}

void write_output(const std::string& destination, std::string_view content) {
  if (destination == "-")
    write_stdout(content);
  else
    write_file_atomically(destination, content);
}

}  // namespace trainsim

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

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  const std::filesystem::path directory = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  // Built piecewise: GCC 12 misreports "." + string as an overlapping memcpy (-Wrestrict) here.
  std::string hidden = path.filename().string();
  hidden.insert(hidden.begin(), '.');
  hidden += ".tmp.XXXXXX";
  std::string temp_template = (directory / hidden).string();
  const int fd = ::mkstemp(temp_template.data());
  if (fd < 0) throw RunError("cannot create a temporary file beside " + path.string());
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n <= 0) {
      ::close(fd);
      ::unlink(temp_template.c_str());
      throw RunError("cannot write " + path.string());
    }
    written += static_cast<std::size_t>(n);
  }
  // mkstemp creates 0600; outputs are ordinary user files.
  ::fchmod(fd, 0644);
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(temp_template.c_str());
    throw RunError("cannot write " + path.string());
  }
  if (std::rename(temp_template.c_str(), path.c_str()) != 0) {
    ::unlink(temp_template.c_str());
    throw RunError("cannot rename the temporary file onto " + path.string());
  }
}

namespace {

// Creates and removes a temporary file in `directory`; the OS's reason when that fails.
std::optional<std::string> cannot_create_in(const std::filesystem::path& directory) {
  std::string probe = (directory / ".trainsim-write-check.XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) return std::string(std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
  return std::nullopt;
}

}  // namespace

void check_output_file(const std::string& destination) {
  if (destination == "-") return;
  const std::filesystem::path path(destination);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(destination, "", "is a directory; expected an output file name");
  const std::filesystem::path directory = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  if (!std::filesystem::is_directory(directory, ec))
    throw InputError(destination, "", "cannot write here: directory '" + directory.string() + "' does not exist");
  if (const auto reason = cannot_create_in(directory)) throw InputError(destination, "", "cannot write here: " + *reason);
}

void check_output_directory(const std::string& directory) {
  const std::filesystem::path path(directory);
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_directory(path, ec))
    throw InputError(directory, "", "exists and is not a directory; expected an output directory");
  std::filesystem::create_directories(path, ec);
  if (ec) throw InputError(directory, "", "cannot create the output directory: " + ec.message());
  if (const auto reason = cannot_create_in(path)) throw InputError(directory, "", "cannot write in the output directory: " + *reason);
}

void write_output(const std::string& destination, std::string_view content) {
  if (destination == "-") {
    std::cout << content;
    std::cout.flush();
    return;
  }
  write_file_atomically(destination, content);
}

}  // namespace trainsim

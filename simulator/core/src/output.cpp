#include "trainsim/core/output.hpp"

#include <cstdio>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <iostream>

#include "trainsim/core/error.hpp"

namespace trainsim {

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  const std::filesystem::path directory = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  std::string temp_template = (directory / ("." + path.filename().string() + ".tmp.XXXXXX")).string();
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

void write_output(const std::string& destination, std::string_view content) {
  if (destination == "-") {
    std::cout << content;
    std::cout.flush();
    return;
  }
  write_file_atomically(destination, content);
}

}  // namespace trainsim

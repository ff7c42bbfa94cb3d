#include "trainsim/core/input_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "trainsim/core/error.hpp"

namespace trainsim {

namespace {
std::string mib(std::size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }
}  // namespace

std::string read_input_text(const std::filesystem::path& path, std::string_view what, std::size_t limit) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(path.string(), "", "is a directory; expected a " + std::string(what));
  // stdio rather than ifstream: fread reports how much it got, and stops at the limit on devices
  // and FIFOs whose size stat cannot tell.
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) throw InputError(path.string(), "", std::string("cannot open file: ") + std::strerror(errno));
  std::string text;
  char buffer[1 << 16];
  while (text.size() <= limit) {
    const std::size_t want = std::min(sizeof buffer, limit + 1 - text.size());
    const std::size_t got = std::fread(buffer, 1, want, file.get());
    text.append(buffer, got);
    if (got < want) {
      if (std::ferror(file.get())) throw InputError(path.string(), "", std::string("cannot read file: ") + std::strerror(errno));
      break;
    }
  }
  if (text.size() > limit)
    throw InputError(path.string(), "",
                     "larger than " + mib(limit) + ", the largest input trainsim reads (a " + std::string(what) +
                         " is far smaller; is this the right file?)");
  return text;
}

void check_json_depth(std::string_view text, const std::string& source) {
  std::size_t depth = 0, line = 1, column = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    ++column;
    if (c == '\n') {
      ++line;
      column = 0;
      continue;
    }
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    switch (c) {
      case '"': in_string = true; break;
      case '[':
      case '{':
        if (++depth > kMaxJsonDepth)
          throw InputError(source, "line " + std::to_string(line) + ", column " + std::to_string(column),
                           "nested deeper than " + std::to_string(kMaxJsonDepth) +
                               " arrays and objects, the most trainsim reads (its inputs nest about 8 deep)");
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default: break;
    }
  }
}

}  // namespace trainsim

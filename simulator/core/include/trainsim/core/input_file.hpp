#pragma once
// Reading an input file safely: every reader (scenario, platform JSON, layer graph, Paleo, CSV,
// SimGrid XML) takes its text from read_input_text, so none can be made to read without end
// (`/dev/zero`, a FIFO) or to hold more than kMaxInputBytes; JSON text is checked for nesting
// depth before any parser sees it, so no input can overflow the stack.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace trainsim {

/// The largest input file trainsim reads: 32 MiB. A layer graph of 200,000 layers is 12 MB; the
/// worst JSON for its size (16 million one-digit numbers in 31 MiB) takes 5 s and 840 MB to parse
/// on the 2-core VM of tests/README.md's Performance section, 63 MiB of it 16 s and 1.6 GB (simulator/README.md,
/// Troubleshooting and limits).
inline constexpr std::size_t kMaxInputBytes = 32u << 20;

/// The deepest nesting of JSON arrays and objects trainsim reads: 256. Its formats nest at most
/// about 8 deep; the parser and the code that copies and compares documents recurse once per
/// level, and 256 levels keep that far below any thread's stack (a 100,000-deep document
/// overflowed the 8 MiB main stack before this limit).
inline constexpr std::size_t kMaxJsonDepth = 256;

/// The whole content of `path`. Reads at most kMaxInputBytes + 1 bytes, so a file that never ends
/// (a character device, a FIFO whose writer keeps writing) is refused as too large instead of
/// read until memory runs out. `what` names the expected content ("JSON file", "CSV file").
/// Throws InputError naming the path when it is a directory, cannot be opened or read, or is larger
/// than the limit. `limit` replaces kMaxInputBytes for formats whose files are larger by nature
/// (ONNX models hold their weights).
std::string read_input_text(const std::filesystem::path& path, std::string_view what,
                            std::size_t limit = kMaxInputBytes);

/// Throws InputError "source: line L, column C: ..." at the first array or object that opens
/// deeper than kMaxJsonDepth. Brackets inside strings do not count; the text need not be valid
/// JSON (the parser reports syntax errors afterwards).
void check_json_depth(std::string_view text, const std::string& source);

}  // namespace trainsim

#pragma once
// Reading nccl-tests' all_reduce_perf output (NVIDIA/nccl-tests src/common.cu: the "# nThread …"
// header, one "#  Rank  R Group G Pid P on HOST device D [BUS] NAME" line per rank, then one row
// per size: size, count, type, redop, root (newer versions), then out-of-place time (µs), algbw,
// busbw, #wrong and the same four in place). Pure text; `trainsim calibrate nccl-tests` fits on it.
#include <string>
#include <vector>

namespace trainsim::plan {

/// One size of an all_reduce_perf run. all_reduce_perf times each size twice, out of place and in
/// place (the same algorithm on the same bytes); the size's time is the faster of the two, as a
/// slow iteration or another process on the node only ever lengthens one of them (a published
/// Lambda B200 run: 512 KiB in 241 µs out of place, 126 µs in place).
struct NcclTestsRow {
  double size_bytes = 0;
  double time_s = 0;          ///< the faster of the out-of-place and in-place times
  double busbw_GBps = 0;      ///< as printed for that time (algbw · 2(n−1)/n)
  double out_of_place_s = 0;  ///< the out-of-place time
  double in_place_s = 0;      ///< the in-place time; 0 when the row has no in-place columns
  int line = 0;               ///< 1-based line of the file
};

/// One all_reduce_perf output file.
struct NcclTestsRun {
  std::string source;              ///< the file
  int ranks = 0;                   ///< the "# Rank" lines (nThread × nGpus × processes)
  int hosts = 0;                   ///< distinct host names among them
  int rank_line = 0;               ///< 1-based line of the first "# Rank" line
  std::vector<NcclTestsRow> rows;  ///< sizes in file order; sizes of 0 bytes left out
};

/// Parses `text` (`source` names it in errors). Lines of other output interleaved by the launcher
/// (NCCL INFO/WARN lines, mpirun banners) that contain "NCCL" are skipped. Throws
/// InputError(source, "line N", …) at the first line that is neither a comment, a skipped line
/// nor a row of numbers as all_reduce_perf prints them; when the text has no "# nThread" header
/// (not an nccl-tests file, at its first non-empty line); when it lists no "# Rank" lines; when it
/// has no row of a size above 0.
NcclTestsRun parse_nccl_tests(const std::string& text, const std::string& source);
/// Reads and parses a file (InputError when it cannot be read).
NcclTestsRun read_nccl_tests(const std::string& path);

}  // namespace trainsim::plan

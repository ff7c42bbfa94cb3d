#include "trainsim/plan/nccl_tests.hpp"

#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>

#include "trainsim/core/error.hpp"
#include "trainsim/core/input_file.hpp"

namespace trainsim::plan {

namespace {

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

bool number(const std::string& w, double& value) {
  if (w.empty()) return false;
  char* end = nullptr;
  value = std::strtod(w.c_str(), &end);
  return end == w.c_str() + w.size() && std::isfinite(value);
}

// "#  Rank  3 Group  0 Pid  1234 on HOST device  3 [0x..] NVIDIA H100": the host after "on".
std::string rank_host(const std::vector<std::string>& w) {
  for (std::size_t i = 0; i + 1 < w.size(); ++i)
    if (w[i] == "on") return w[i + 1];
  return {};
}

// A data row: size count type redop [root] time algbw busbw #wrong (then in place). all_reduce_perf
// prints root -1 since nccl-tests 2.10; older versions have no root column.
bool parse_row(const std::vector<std::string>& w, NcclTestsRow& row) {
  if (w.size() < 8) return false;
  double size = 0, count = 0;
  if (!number(w[0], size) || !number(w[1], count) || size < 0) return false;
  // 13 columns with root, 12 without; otherwise root is there when the fifth is a whole number.
  double root = 0.5;
  const bool has_root =
      w.size() == 13 || (w.size() != 12 && w.size() >= 9 && number(w[4], root) && root == std::floor(root));
  const std::size_t t = has_root ? 5 : 4;  // the time column
  double time_us = 0, algbw = 0, busbw = 0;
  if (!number(w[t], time_us) || !number(w[t + 1], algbw) || !number(w[t + 2], busbw) || time_us < 0) return false;
  row.size_bytes = size;
  row.out_of_place_s = time_us * 1e-6;
  row.time_s = row.out_of_place_s;
  row.busbw_GBps = busbw;
  // The in-place columns, when printed: the same collective timed again; the faster of the two is
  // the collective's time (a slow iteration or another process only ever adds to one of them).
  double in_us = 0, in_algbw = 0, in_busbw = 0;
  if (w.size() >= t + 7 && number(w[t + 4], in_us) && number(w[t + 5], in_algbw) && number(w[t + 6], in_busbw) &&
      in_us > 0) {
    row.in_place_s = in_us * 1e-6;
    if (row.in_place_s < row.time_s) {
      row.time_s = row.in_place_s;
      row.busbw_GBps = in_busbw;
    }
  }
  return true;
}

}  // namespace

NcclTestsRun parse_nccl_tests(const std::string& text, const std::string& source) {
  NcclTestsRun run;
  run.source = source;
  std::set<std::string> hosts;
  bool header = false;
  std::istringstream in(text);
  int line_no = 0;
  auto fail = [&](const std::string& why) { return InputError(source, "line " + std::to_string(line_no), why); };
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::vector<std::string> w = words(line);
    if (w.empty()) continue;
    if (!header) {
      // nccl-tests prints "# nThread …" first; newer versions put "# nccl-tests version …" and
      // "# Collective test starting: …" before it. A launcher's lines may come first too.
      if (line.rfind("# nThread", 0) == 0)
        header = true;
      else if (line.rfind("# nccl-tests version", 0) == 0 || line.rfind("# Collective test starting", 0) == 0 ||
               line.find("NCCL") != std::string::npos)
        continue;
      else
        throw fail("not an nccl-tests all_reduce_perf output: expected its '# nThread … nGpus …' header, got '" +
                   line.substr(0, 80) + "'");
      continue;
    }
    if (w[0] == "#" && w.size() > 1 && w[1] == "Rank") {
      if (run.ranks++ == 0) run.rank_line = line_no;
      hosts.insert(rank_host(w));
      continue;
    }
    if (w[0].front() == '#' || line.find("NCCL") != std::string::npos) continue;
    NcclTestsRow row;
    if (!parse_row(w, row))
      throw fail("expected a row of all_reduce_perf (size count type redop [root] time algbw busbw #wrong …), got '" +
                 line.substr(0, 80) + "'");
    row.line = line_no;
    if (row.size_bytes > 0) run.rows.push_back(row);
  }
  if (!header)
    throw InputError(source, "line 1", "not an nccl-tests all_reduce_perf output: no '# nThread … nGpus …' header");
  if (run.ranks == 0)
    throw InputError(source, "line 1",
                     "lists no '#  Rank …' lines, so the ranks and nodes of the run are unknown (all_reduce_perf "
                     "prints one per rank; keep them in the file)");
  if (run.rows.empty())
    throw InputError(source, "line " + std::to_string(line_no), "has no row of a size above 0 bytes");
  run.hosts = static_cast<int>(hosts.size());
  return run;
}

NcclTestsRun read_nccl_tests(const std::string& path) {
  return parse_nccl_tests(read_input_text(path, "nccl-tests output"), path);
}

}  // namespace trainsim::plan

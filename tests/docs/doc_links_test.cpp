// The documentation's links: every relative link in every README.md of the source tree names a file
// or folder that exists, and every anchor (`file.md#section`, `#section`) names a heading of that
// file, with headings turned into anchors as GitHub does (lower case; characters other than
// letters, digits, '_', '-' and ' ' dropped; spaces to '-'; a repeated heading gets -1, -2, ...).
// Links inside fenced code blocks and inline code are not links; http(s) and mailto links are not
// checked (no network here).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path kSource{TRAINSIM_SOURCE_DIR};

std::vector<std::string> read_lines(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool is_fence(const std::string& line) { return line.rfind("```", 0) == 0; }

// GitHub's anchor for a heading's text.
std::string anchor_of(const std::string& heading) {
  std::string anchor;
  for (const char c : heading) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) != 0 || c == '_' || c == '-') {
      anchor += static_cast<char>(std::tolower(u));
    } else if (c == ' ') {
      anchor += '-';
    } else if (u >= 0x80) {
      anchor += c;  // a letter of another script stays; no heading here has one
    }
  }
  return anchor;
}

std::set<std::string> anchors_of(const fs::path& markdown) {
  std::set<std::string> anchors;
  std::map<std::string, int> seen;
  bool fenced = false;
  for (const auto& line : read_lines(markdown)) {
    if (is_fence(line)) {
      fenced = !fenced;
      continue;
    }
    if (fenced || line.empty() || line[0] != '#') continue;
    const auto text_start = line.find_first_not_of('#');
    if (text_start == std::string::npos || line[text_start] != ' ') continue;
    std::string base = anchor_of(line.substr(text_start + 1));
    while (!base.empty() && base.back() == '-') base.pop_back();  // trailing blanks
    const int repeat = seen[base]++;
    anchors.insert(repeat == 0 ? base : base + "-" + std::to_string(repeat));
  }
  return anchors;
}

std::vector<fs::path> readmes() {
  std::vector<fs::path> found;
  for (auto it = fs::recursive_directory_iterator(kSource); it != fs::recursive_directory_iterator(); ++it) {
    const auto name = it->path().filename().string();
    if (it->is_directory() && (name.rfind("build", 0) == 0 || name.front() == '.')) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && name == "README.md") found.push_back(it->path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

// Inline code spans removed, so `[a](b)` inside backticks is not taken for a link.
std::string without_code_spans(const std::string& line) {
  std::string out;
  bool code = false;
  for (const char c : line) {
    if (c == '`') {
      code = !code;
      continue;
    }
    if (!code) out += c;
  }
  return out;
}

// Every broken link of one README, as "README.md:LINE: target: why".
std::vector<std::string> broken_links(const fs::path& readme) {
  static const std::regex link(R"(\]\(([^()\s]+)\))");
  std::vector<std::string> broken;
  const auto lines = read_lines(readme);
  const auto where = fs::relative(readme, kSource).string();
  bool fenced = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (is_fence(lines[i])) {
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    const auto text = without_code_spans(lines[i]);
    for (auto m = std::sregex_iterator(text.begin(), text.end(), link); m != std::sregex_iterator(); ++m) {
      const std::string target = (*m)[1];
      if (target.rfind("http://", 0) == 0 || target.rfind("https://", 0) == 0 || target.rfind("mailto:", 0) == 0) continue;
      const auto hash = target.find('#');
      const auto file_part = target.substr(0, hash);
      const fs::path file = file_part.empty() ? readme : readme.parent_path() / file_part;
      const auto at = where + ":" + std::to_string(i + 1) + ": " + target + ": ";
      if (!fs::exists(file)) {
        broken.push_back(at + "no such file");
        continue;
      }
      if (hash == std::string::npos) continue;
      if (file.extension() != ".md") {
        broken.push_back(at + "an anchor into a file that is not Markdown");
        continue;
      }
      if (anchors_of(file).count(target.substr(hash + 1)) == 0) broken.push_back(at + "no such heading");
    }
  }
  return broken;
}

TEST(DocLinks, AnchorsAreGitHubs) {
  EXPECT_EQ(anchor_of("NCCL's way: tuner, protocols, NVLS"), "nccls-way-tuner-protocols-nvls");
  EXPECT_EQ(anchor_of("Host-staged all-reduce (Horovod without GPU operations)"),
            "host-staged-all-reduce-horovod-without-gpu-operations");
  EXPECT_EQ(anchor_of("Sweeps, reports and capacity planning"), "sweeps-reports-and-capacity-planning");
}

TEST(DocLinks, EveryModuleHasItsReadme) {
  for (const char* module : {"simulator", "platforms", "workloads", "fitting", "scenarios", "tests"}) {
    EXPECT_TRUE(fs::is_regular_file(kSource / module / "README.md")) << module;
  }
}

TEST(DocLinks, EveryRelativeLinkAndAnchorResolves) {
  const auto files = readmes();
  ASSERT_GE(files.size(), 7U) << "the README files were not found under " << kSource;
  std::size_t checked = 0;
  std::vector<std::string> broken;
  for (const auto& readme : files) {
    const auto found = broken_links(readme);
    broken.insert(broken.end(), found.begin(), found.end());
    ++checked;
  }
  std::ostringstream report;
  for (const auto& b : broken) report << b << '\n';
  EXPECT_TRUE(broken.empty()) << broken.size() << " broken links in " << checked << " README files:\n" << report.str();
}

// The top-level README is the entry point: what trainsim is, the two commands, the commands, the
// architecture and the map of the rest; everything else lives beside the code it describes.
TEST(DocLinks, TopLevelReadmeStaysShort) {
  EXPECT_LE(read_lines(kSource / "README.md").size(), 300U);
}

}  // namespace

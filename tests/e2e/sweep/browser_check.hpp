#pragma once
// A self-contained HTML report opened in Debian's headless Chromium: a script added to a copy of it
// measures the laid-out page (every SVG text inside its SVG and apart from the others, no SVG scaled,
// the page within a 1400 px window, no legend entry repeated, every element of class "verdict"
// displayed in the window and not cut off) and Chromium dumps its findings and a screenshot.
#include <string>

namespace trainsim_test {

struct BrowserCheck {
  int exit_code = -1;    ///< Chromium's
  std::string err;       ///< Chromium's stderr (console messages show up here)
  std::string counts;    ///< "svgs=N texts=N verdicts=N verdict_top=PX"; empty when the script did not run
  std::string verdict;   ///< the text of the first verdict, if any
  std::string problems;  ///< one line per layout problem; empty when none
  std::string png;       ///< the screenshot's path
};

/// Opens `report` (an .html file without a script of its own) in headless Chromium, at 1400×2000,
/// using `work_dir` for the checked copy, the profile and the screenshot. `browser` is Chromium's path.
BrowserCheck check_report_in_browser(const std::string& browser, const std::string& report, const std::string& work_dir);

/// The value of `key=` in `counts` ("svgs=3 texts=10" → svgs: 3); -1 when absent.
long count_of(const std::string& counts, const std::string& key);

}  // namespace trainsim_test

#include "browser_check.hpp"

#include <fstream>
#include <sstream>

#include "trainsim_test/cli.hpp"

namespace trainsim_test {
namespace {

using trainsim_test::read_file;

// Runs in the page after it has been laid out. Text boxes are compared in CSS pixels (getBoundingClientRect
// includes the rotation of the y axis titles); 0.5 px of slack absorbs rounding.
const char* const kLayoutCheck = R"(<script>
(function () {
  const problems = [];
  const fmt = (r) => `[${Math.round(r.left)}, ${Math.round(r.top)}, ${Math.round(r.right)}, ${Math.round(r.bottom)}]`;
  const page = document.documentElement;
  if (page.scrollWidth > window.innerWidth)
    problems.push(`the page is ${page.scrollWidth} px wide in a ${window.innerWidth} px window`);
  const svgs = [...document.querySelectorAll('svg')];
  let texts = 0;
  svgs.forEach((svg, i) => {
    const title = svg.querySelector(':scope > title');
    const name = title ? title.textContent : `svg ${i}`;
    const box = svg.getBoundingClientRect();
    if (Math.abs(box.width - svg.width.baseVal.value) > 0.5 || Math.abs(box.height - svg.height.baseVal.value) > 0.5)
      problems.push(`${name}: drawn ${box.width}x${box.height}, declared ${svg.width.baseVal.value}x${svg.height.baseVal.value}`);
    const placed = [];
    for (const t of svg.querySelectorAll('text')) {
      ++texts;
      const r = t.getBoundingClientRect();
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
        problems.push(`${name}: "${t.textContent}" at ${fmt(r)} is clipped by the SVG at ${fmt(box)}`);
      for (const [other, o] of placed) {
        const w = Math.min(r.right, o.right) - Math.max(r.left, o.left);
        const h = Math.min(r.bottom, o.bottom) - Math.max(r.top, o.top);
        if (w > 1 && h > 1) problems.push(`${name}: "${t.textContent}" at ${fmt(r)} overlaps "${other.textContent}" at ${fmt(o)}`);
      }
      placed.push([t, r]);
    }
    const legend = [...svg.querySelectorAll('text.legend')].map((t) => t.textContent);
    if (new Set(legend).size !== legend.length) problems.push(`${name}: the legend repeats an entry: ${legend.join(' | ')}`);
  });
  // Verdicts (class "verdict") must be displayed, within the window and not cut off.
  const verdicts = [...document.querySelectorAll('.verdict')];
  verdicts.forEach((v, i) => {
    const r = v.getBoundingClientRect();
    if (r.width < 1 || r.height < 1 || getComputedStyle(v).visibility !== 'visible') problems.push(`verdict ${i} is not displayed`);
    if (r.left < 0 || r.right > window.innerWidth) problems.push(`verdict ${i} at ${fmt(r)} leaves the ${window.innerWidth} px window`);
    if (v.scrollWidth > v.clientWidth + 1) problems.push(`verdict ${i} overflows its box`);
  });
  const first = verdicts.length ? Math.round(verdicts[0].getBoundingClientRect().top + window.scrollY) : -1;
  const out = document.createElement('pre');
  out.id = 'layout-check';
  out.hidden = true;
  out.textContent = `svgs=${svgs.length} texts=${texts} verdicts=${verdicts.length} verdict_top=${first}\n` +
                    (verdicts.length ? `verdict: ${verdicts[0].textContent}\n` : '') + problems.join('\n');
  document.body.appendChild(out);
})();
</script>
)";

// The text of the <pre id="layout-check"> in a dumped DOM, entities as Chromium writes them.
std::string layout_findings(const std::string& dom) {
  const std::string open = "<pre id=\"layout-check\" hidden=\"\">";
  const auto begin = dom.find(open);
  if (begin == std::string::npos) return "";
  const auto end = dom.find("</pre>", begin);
  return dom.substr(begin + open.size(), end - begin - open.size());
}

}  // namespace

BrowserCheck check_report_in_browser(const std::string& browser, const std::string& report, const std::string& work_dir) {
  BrowserCheck check;
  std::string html = read_file(report);
  const auto body_end = html.rfind("</body>");
  if (body_end == std::string::npos) return check;
  html.insert(body_end, kLayoutCheck);
  std::ofstream(work_dir + "/checked.html") << html;
  check.png = work_dir + "/report.png";
  const auto r = run_program({browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                              "--disable-background-networking", "--disable-component-update", "--disable-sync",
                              "--hide-scrollbars", "--user-data-dir=" + work_dir + "/profile", "--enable-logging=stderr",
                              "--v=0", "--window-size=1400,2000", "--screenshot=" + check.png, "--dump-dom",
                              "file://" + work_dir + "/checked.html"});
  check.exit_code = r.exit_code;
  check.err = r.err;
  std::istringstream findings(layout_findings(r.out));
  std::getline(findings, check.counts);
  for (std::string line; std::getline(findings, line);) {
    if (line.rfind("verdict: ", 0) == 0 && check.verdict.empty()) check.verdict = line.substr(9);
    else check.problems += line + "\n";
  }
  return check;
}

long count_of(const std::string& counts, const std::string& key) {
  const auto at = counts.find(key + "=");
  if (at == std::string::npos) return -1;
  return std::stol(counts.substr(at + key.size() + 1));
}

}  // namespace trainsim_test

#pragma once
// SimGrid keeps process-wide state (one Engine per process, its clock, its platform): every test
// that simulates runs its body in a forked child, which sends its findings back as text.
#include <functional>
#include <string>

namespace trainsim_test {

/// Runs `body` in a forked child and returns the string it produced. If the child throws, the
/// exception's message is rethrown here as std::runtime_error; if it crashes or exits without
/// answering, std::runtime_error says how it ended.
std::string run_forked(const std::function<std::string()>& body);

}  // namespace trainsim_test

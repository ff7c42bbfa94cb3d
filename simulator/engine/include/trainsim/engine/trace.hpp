#pragma once
// Chrome trace event format (opens in Perfetto and chrome://tracing): complete events ("ph":"X")
// on tracks named by metadata events. Written as a stream of text, not a JSON tree, because a
// trace of thousands of GPUs holds millions of events.
#include <string>

namespace trainsim::engine {

class TraceWriter {
public:
  /// Names a process track group (a node, the communication group).
  void name_process(int pid, const std::string& name);
  /// Names a track (a GPU, a communicator).
  void name_thread(int pid, int tid, const std::string& name);
  /// One span: `start_s` and `duration_s` in simulated seconds (written in microseconds).
  void complete(int pid, int tid, const std::string& name, const std::string& category, double start_s, double duration_s);
  /// The whole trace document.
  std::string dump() const;

private:
  void separator();
  std::string body_;
  std::size_t events_ = 0;
};

/// Escapes a string for a JSON string literal (without the quotes).
std::string json_escape(const std::string& text);

}  // namespace trainsim::engine

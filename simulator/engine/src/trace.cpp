#include "trainsim/engine/trace.hpp"

#include <cstdio>

namespace trainsim::engine {

std::string json_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
          out += buffer;
        } else {
          out += c;
        }
    }
  }
  return out;
}

void TraceWriter::separator() {
  if (events_++ > 0) body_ += ",\n";
}

void TraceWriter::name_process(int pid, const std::string& name) {
  separator();
  body_ += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) + ",\"args\":{\"name\":\"" + json_escape(name) + "\"}}";
  separator();
  body_ += "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) + ",\"args\":{\"sort_index\":" +
           std::to_string(pid) + "}}";
}

void TraceWriter::name_thread(int pid, int tid, const std::string& name) {
  separator();
  body_ += "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
           ",\"args\":{\"name\":\"" + json_escape(name) + "\"}}";
}

void TraceWriter::complete(int pid, int tid, const std::string& name, const std::string& category, double start_s, double duration_s) {
  separator();
  char numbers[96];
  std::snprintf(numbers, sizeof numbers, "\"ts\":%.3f,\"dur\":%.3f,\"pid\":%d,\"tid\":%d", start_s * 1e6, duration_s * 1e6, pid, tid);
  body_ += "{\"name\":\"" + json_escape(name) + "\",\"cat\":\"" + json_escape(category) + "\",\"ph\":\"X\"," + numbers + "}";
}

std::string TraceWriter::dump() const { return "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n" + body_ + "\n]}\n"; }

}  // namespace trainsim::engine

#include "trainsim_test/fork.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>

namespace trainsim_test {

std::string run_forked(const std::function<std::string()>& body) {
  int channel[2];
  if (::pipe(channel) != 0) throw std::runtime_error("pipe failed");
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::close(channel[0]);
    std::string message;
    char tag = 'O';
    try {
      message = body();
    } catch (const std::exception& e) {
      tag = 'E';
      message = e.what();
    } catch (...) {
      tag = 'E';
      message = "unknown exception";
    }
    std::string packet = tag + message;
    std::size_t written = 0;
    while (written < packet.size()) {
      const ssize_t n = ::write(channel[1], packet.data() + written, packet.size() - written);
      if (n <= 0) break;
      written += static_cast<std::size_t>(n);
    }
    ::close(channel[1]);
    std::fflush(nullptr);
    ::_exit(0);  // skip atexit handlers: SimGrid's would run in the child too
  }
  ::close(channel[1]);
  std::string packet;
  char buffer[65536];
  ssize_t n;
  while ((n = ::read(channel[0], buffer, sizeof buffer)) > 0) packet.append(buffer, static_cast<std::size_t>(n));
  ::close(channel[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) throw std::runtime_error("simulation child killed by signal " + std::to_string(WTERMSIG(status)));
  if (packet.empty()) throw std::runtime_error("simulation child exited with status " + std::to_string(WEXITSTATUS(status)) + " without answering");
  if (packet[0] == 'E') throw std::runtime_error(packet.substr(1));
  return packet.substr(1);
}

}  // namespace trainsim_test

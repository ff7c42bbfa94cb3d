#include "trainsim_test/cli.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <signal.h>

#include <cstdlib>
#include <stdexcept>

namespace trainsim_test {

namespace {

// AddressSanitizer builds: SimGrid's actors run on their own stacks, and the first exception that
// leaves one makes ASan print a three-line notice ("ignoring requested __asan_handle_no_return ...
// False positive error reports may follow ... issues/189") on stderr. It is the sanitizer's, not
// trainsim's, so it is removed before tests compare what trainsim printed; real ASan reports stay.
void drop_asan_stack_notice(std::string& err) {
  const std::size_t at = err.find("WARNING: ASan is ignoring requested __asan_handle_no_return");
  if (at == std::string::npos) return;
  std::size_t begin = err.rfind('\n', at);
  begin = begin == std::string::npos ? 0 : begin + 1;
  std::size_t end = begin;
  for (int line = 0; line < 3 && end < err.size(); ++line) {
    const std::size_t nl = err.find('\n', end);
    end = nl == std::string::npos ? err.size() : nl + 1;
  }
  err.erase(begin, end - begin);
}

}  // namespace

std::string trainsim_binary() {
  return TRAINSIM_BINARY;
}

CliResult run_trainsim(const std::vector<std::string>& args, const std::string& working_directory) {
  std::vector<std::string> argv{trainsim_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv, working_directory);
}

std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = dirs.find(':', start);
    const std::string dir = dirs.substr(start, end == std::string::npos ? std::string::npos : end - start);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return "";
}

int start_trainsim(const std::vector<std::string>& args) {
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::setpgid(0, 0);
    const int devnull = ::open("/dev/null", O_RDWR);
    if (devnull >= 0) {
      ::dup2(devnull, 0);
      ::dup2(devnull, 1);
      ::dup2(devnull, 2);
    }
    std::vector<std::string> copies{trainsim_binary()};
    copies.insert(copies.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : copies) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(copies[0].c_str(), argv.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  return pid;
}

int kill_group(int pid, int signal) {
  ::kill(-pid, signal);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

CliResult run_program(const std::vector<std::string>& command, const std::string& working_directory) {
  if (command.empty()) throw std::runtime_error("run_program: empty command");
  const std::string program = find_program(command[0]);
  if (program.empty()) throw std::runtime_error("run_program: " + command[0] + " not found in PATH");
  int out_pipe[2], err_pipe[2];
  if (::pipe(out_pipe) != 0 || ::pipe(err_pipe) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    if (!working_directory.empty() && ::chdir(working_directory.c_str()) != 0) ::_exit(127);
    std::vector<std::string> copies = command;
    std::vector<char*> argv;
    for (auto& a : copies) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(program.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  CliResult result;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_count = 2;
  char buffer[65536];
  while (open_count > 0) {
    if (::poll(fds, 2, -1) < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<std::size_t>(n));
      } else {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_count;
      }
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  drop_asan_stack_notice(result.err);
  return result;
}

}  // namespace trainsim_test

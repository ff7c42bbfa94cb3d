#include "sweep_mpi.hpp"

#include <cstdlib>

#include <mpi.h>

#include "trainsim/core/error.hpp"
#include "trainsim/core/json_reader.hpp"

namespace trainsim::app {

namespace {
constexpr int kLineTag = 1;  // a result line
constexpr int kDoneTag = 2;  // a rank has sent all its lines

// Launchers announce themselves in the environment; without one we never touch MPI (MPI_Init in a
// singleton is slow and, as root, refused by Open MPI).
bool started_by_mpi_launcher() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(name)) return true;
  return false;
}
}  // namespace

MpiContext::MpiContext() {
  if (!started_by_mpi_launcher()) return;
  int already = 0;
  MPI_Initialized(&already);
  if (!already) {
    MPI_Init(nullptr, nullptr);
    initialised_ = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiContext::~MpiContext() {
  if (initialised_) MPI_Finalize();
}

void MpiContext::abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; this satisfies [[noreturn]]
}

std::vector<std::size_t> MpiContext::broadcast_indices(const std::vector<std::size_t>& indices) const {
  if (size_ == 1) return indices;
  unsigned long long count = indices.size();
  MPI_Bcast(&count, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  std::vector<unsigned long long> buffer(indices.begin(), indices.end());
  buffer.resize(count);
  MPI_Bcast(buffer.data(), static_cast<int>(count), MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  return std::vector<std::size_t>(buffer.begin(), buffer.end());
}

SweepSummary run_points_with_mpi(const MpiContext& mpi, const std::vector<SweepPoint>& points,
                                 const SweepOptions& options, const std::vector<std::size_t>& todo,
                                 const std::function<void(const std::string&)>& append) {
  std::vector<std::size_t> mine;
  for (std::size_t i = 0; i < todo.size(); ++i)
    if (static_cast<int>(i % mpi.size()) == mpi.rank()) mine.push_back(todo[i]);

  SweepSummary summary;
  int ranks_done = 1;  // rank 0 counts itself once its own points are done
  auto count = [&](const std::string& line) {
    if (Json::parse(line).contains("error"))
      ++summary.failed;
    else
      ++summary.simulated;
  };
  // Rank 0: take whatever lines other ranks have sent so far.
  auto drain = [&](bool block) {
    while (ranks_done < mpi.size()) {
      int waiting = 0;
      MPI_Status status;
      if (block)
        MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status), waiting = 1;
      else
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &waiting, &status);
      if (!waiting) return;
      int length = 0;
      MPI_Get_count(&status, MPI_CHAR, &length);
      std::string line(static_cast<std::size_t>(length), '\0');
      MPI_Recv(line.data(), length, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (status.MPI_TAG == kDoneTag) {
        ++ranks_done;
      } else {
        count(line);
        append(line);
      }
    }
  };

  SweepOptions local = options;
  local.progress = options.progress && mpi.is_coordinator();
  if (mpi.is_coordinator()) {
    const SweepSummary own = run_points_locally(points, local, mine, [&](const std::string& line) {
                                                  count(line);
                                                  append(line);
                                                },
                                                [&] { drain(false); });
    summary.interrupted = own.interrupted;
    drain(true);
  } else {
    const SweepSummary own = run_points_locally(
        points, local, mine,
        [](const std::string& line) {
          MPI_Send(line.data(), static_cast<int>(line.size()), MPI_CHAR, 0, kLineTag, MPI_COMM_WORLD);
        },
        {});
    summary = own;
    MPI_Send(nullptr, 0, MPI_CHAR, 0, kDoneTag, MPI_COMM_WORLD);
  }
  return summary;
}

}  // namespace trainsim::app

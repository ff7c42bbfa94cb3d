#pragma once
// Sweeps across machines with MPI: `mpirun -np N trainsim sweep …` shares the points across the
// ranks (round-robin over the points still to do); every rank simulates its points in child
// processes as a local sweep does and sends each finished line to rank 0, which appends it to
// results.jsonl and writes the same files as a local sweep. Started without mpirun, nothing of MPI
// is initialised and the sweep is local.
#include <functional>
#include <string>
#include <vector>

#include "sweep.hpp"

namespace trainsim::app {

/// MPI for the life of the object when the process was started by an MPI launcher.
class MpiContext {
public:
  MpiContext();
  ~MpiContext();
  MpiContext(const MpiContext&) = delete;
  MpiContext& operator=(const MpiContext&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_coordinator() const { return rank_ == 0; }
  /// Ends every rank with `code` (MPI_Abort): for an error on one rank that others would wait on.
  [[noreturn]] void abort(int code) const;
  /// Rank 0's `indices` on every rank.
  std::vector<std::size_t> broadcast_indices(const std::vector<std::size_t>& indices) const;

private:
  int rank_ = 0;
  int size_ = 1;
  bool initialised_ = false;
};

/// The distributed sweep (see the file comment); on rank 0 `append` receives every line.
SweepSummary run_points_with_mpi(const MpiContext& mpi, const std::vector<SweepPoint>& points,
                                 const SweepOptions& options, const std::vector<std::size_t>& todo,
                                 const std::function<void(const std::string&)>& append);

}  // namespace trainsim::app

#pragma once
// `trainsim sweep`: the study library's sweep (trainsim/study/sweep.hpp: the points, running them in
// child processes, results.jsonl, results.csv and report.html) spread over MPI ranks when started by
// mpirun (sweep_mpi.hpp), with the output directory's lock and identity.
#include "trainsim/study/sweep.hpp"

namespace trainsim::app {

using study::count_sweep_points;
using study::current_results;
using study::expand_sweep;
using study::kMaxSweepPoints;
using study::read_results;
using study::run_points_locally;
using study::SweepOptions;
using study::SweepPoint;
using study::SweepSummary;

/// The whole `trainsim sweep` (local, or across MPI ranks when started by mpirun).
SweepSummary run_sweep(const plan::Scenario& base, const SweepOptions& options);

}  // namespace trainsim::app

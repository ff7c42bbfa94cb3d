/* One MPI_Allreduce of argv[1] bytes of floats under SMPI; every rank prints its host, rank and
 * when it started and ended the call (simulated seconds). Built with smpicc by
 * smpi_crosscheck_test.cpp and run with smpirun. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* The sum itself costs no simulated time (smpi/simulate-computation:0): skip it to keep runs fast. */
static void no_sum(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)in;
  (void)inout;
  (void)len;
  (void)type;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char host[MPI_MAX_PROCESSOR_NAME];
  int length = 0;
  MPI_Get_processor_name(host, &length);
  const long bytes = argc > 1 ? atol(argv[1]) : 1048576;
  const int count = (int)(bytes / (long)sizeof(float));
  /* Every rank's buffers share the same pages: 64 MiB x 16 ranks would not fit otherwise. */
  float* in = (float*)SMPI_SHARED_MALLOC((size_t)bytes);
  float* out = (float*)SMPI_SHARED_MALLOC((size_t)bytes);
  MPI_Op op;
  MPI_Op_create(no_sum, 1, &op);
  const double start = MPI_Wtime();
  MPI_Allreduce(in, out, count, MPI_FLOAT, op, MPI_COMM_WORLD);
  const double end = MPI_Wtime();
  printf("host %s rank %d start %.9f end %.9f\n", host, rank, start, end);
  MPI_Op_free(&op);
  SMPI_SHARED_FREE(in);
  SMPI_SHARED_FREE(out);
  MPI_Finalize();
  return 0;
}

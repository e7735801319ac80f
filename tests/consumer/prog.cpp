// A C++ program built with the MPI's C++ compiler wrapper (which links the MPI's C++ bindings library, e.g.
// Open MPI's libmpi_cxx.so) and cohort's flags: it must link, and its calls of the C API go through cohort.
// Built without cohort and run under `cohort-run --preload`, it finds cohort's API at run time.
#include <dlfcn.h>
#include <mpi.h>

#include <cstdio>
#include <vector>

#if __has_include(<cohort/cohort.h>)
#include <cohort/cohort.h>
#endif

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = -1, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<int> mine(4, rank), sum(4, -1);
  MPI_Allreduce(mine.data(), sum.data(), 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
#ifdef COHORT_API
  long (*count)(const char *) = cohort_call_count;
#else
  auto count = reinterpret_cast<long (*)(const char *)>(dlsym(RTLD_DEFAULT, "cohort_call_count"));
#endif
  const int expect = size * (size - 1) / 2;
  long n = count != nullptr ? count("MPI_Barrier") : -1;
  if (n != 1 || count("MPI_Allreduce") != 1 || sum != std::vector<int>(4, expect)) {
    std::printf("cohort-test: rank %d FAIL MPI_Barrier went through cohort %ld times, sum %d (expected 1, %d)\n", rank,
                n, sum[0], expect);
    return 1;
  }
  std::printf("cohort-test: rank %d PASS C++: MPI_Barrier and MPI_Allreduce went through cohort\n", rank);
  MPI_Finalize();
  return 0;
}

/* An out-of-tree program that knows nothing of cohort but its optional header: built against an installed
 * prefix with pkg-config (or find_package), it must have its MPI_Barrier go through cohort. Built without
 * cohort at all and run with the installed `cohort-run --preload` (by consumer.sh, under --timeout 60), it
 * finds cohort's API at run time. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

#if __has_include(<cohort/cohort.h>)
#include <cohort/cohort.h>
#endif

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
#ifndef COHORT_API
  long (*cohort_call_count)(const char *) = (long (*)(const char *))dlsym(RTLD_DEFAULT, "cohort_call_count");
  if (cohort_call_count == NULL) {
    printf("cohort-test: rank %d FAIL cohort is neither linked in nor preloaded\n", rank);
    return 1;
  }
#endif
  long n = cohort_call_count("MPI_Barrier");
  if (n != 1) {
    printf("cohort-test: rank %d FAIL MPI_Barrier went through cohort %ld times, expected 1\n", rank, n);
    return 1;
  }
  printf("cohort-test: rank %d PASS MPI_Barrier went through cohort\n", rank);
  MPI_Finalize();
  return 0;
}

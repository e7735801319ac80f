// The point-to-point calls as a table of function pointers, so that one test scenario runs once through
// cohort's wrappers (MPI_X, redirected to __wrap_MPI_X by the link line) and once through the MPI library
// itself (__real_MPI_X), in the same process.
#pragma once
#include <mpi.h>

#include "wrap/calls.h"

struct P2pApi {
  const char *name;
  int (*send)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
  int (*recv)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);
  int (*sendrecv)(const void *, int, MPI_Datatype, int, int, void *, int, MPI_Datatype, int, int, MPI_Comm,
                  MPI_Status *);
  int (*isend)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
  int (*irecv)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
  int (*wait)(MPI_Request *, MPI_Status *);
  int (*waitall)(int, MPI_Request *, MPI_Status *);
  int (*waitany)(int, MPI_Request *, int *, MPI_Status *);
  int (*test)(MPI_Request *, int *, MPI_Status *);
  int (*testall)(int, MPI_Request *, int *, MPI_Status *);
  int (*request_free)(MPI_Request *);
  int (*probe)(int, int, MPI_Comm, MPI_Status *);
  int (*iprobe)(int, int, MPI_Comm, int *, MPI_Status *);
  // the send modes and MPI_Sendrecv_replace
  int (*ssend)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
  int (*rsend)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
  int (*bsend)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
  int (*issend)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
  int (*irsend)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
  int (*ibsend)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
  int (*sendrecv_replace)(void *, int, MPI_Datatype, int, int, int, int, MPI_Comm, MPI_Status *);
  int (*testany)(int, MPI_Request *, int *, int *, MPI_Status *);
  int (*testsome)(int, MPI_Request *, int *, int *, MPI_Status *);
  int (*waitsome)(int, MPI_Request *, int *, int *, MPI_Status *);
  // requests, matched probes and persistent requests
  int (*request_get_status)(MPI_Request, int *, MPI_Status *);
  int (*cancel)(MPI_Request *);
  int (*mprobe)(int, int, MPI_Comm, MPI_Message *, MPI_Status *);
  int (*improbe)(int, int, MPI_Comm, int *, MPI_Message *, MPI_Status *);
  int (*mrecv)(void *, int, MPI_Datatype, MPI_Message *, MPI_Status *);
  int (*imrecv)(void *, int, MPI_Datatype, MPI_Message *, MPI_Request *);
  int (*send_init)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
  int (*bsend_init)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
  int (*ssend_init)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
  int (*rsend_init)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
  int (*recv_init)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
  int (*start)(MPI_Request *);
  int (*startall)(int, MPI_Request *);
};

inline const P2pApi kWrapped = {"wrapped", MPI_Send,  MPI_Recv,    MPI_Sendrecv,     MPI_Isend,
                                MPI_Irecv, MPI_Wait,  MPI_Waitall, MPI_Waitany,      MPI_Test,
                                MPI_Testall, MPI_Request_free, MPI_Probe, MPI_Iprobe,
                                MPI_Ssend, MPI_Rsend, MPI_Bsend, MPI_Issend, MPI_Irsend, MPI_Ibsend,
                                MPI_Sendrecv_replace, MPI_Testany, MPI_Testsome, MPI_Waitsome,
                                MPI_Request_get_status, MPI_Cancel, MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv,
                                MPI_Send_init, MPI_Bsend_init, MPI_Ssend_init, MPI_Rsend_init, MPI_Recv_init,
                                MPI_Start, MPI_Startall};
inline const P2pApi kReal = {"real",           __real_MPI_Send,    __real_MPI_Recv,    __real_MPI_Sendrecv,
                             __real_MPI_Isend, __real_MPI_Irecv,   __real_MPI_Wait,    __real_MPI_Waitall,
                             __real_MPI_Waitany, __real_MPI_Test,  __real_MPI_Testall, __real_MPI_Request_free,
                             __real_MPI_Probe, __real_MPI_Iprobe,
                             __real_MPI_Ssend, __real_MPI_Rsend, __real_MPI_Bsend, __real_MPI_Issend,
                             __real_MPI_Irsend, __real_MPI_Ibsend, __real_MPI_Sendrecv_replace,
                             __real_MPI_Testany, __real_MPI_Testsome, __real_MPI_Waitsome,
                             __real_MPI_Request_get_status, __real_MPI_Cancel, __real_MPI_Mprobe,
                             __real_MPI_Improbe, __real_MPI_Mrecv, __real_MPI_Imrecv, __real_MPI_Send_init,
                             __real_MPI_Bsend_init, __real_MPI_Ssend_init, __real_MPI_Rsend_init,
                             __real_MPI_Recv_init, __real_MPI_Start, __real_MPI_Startall};

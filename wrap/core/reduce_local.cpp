// reduce_local: the MPI's MPI_Reduce_local, or cohort's own loops over predefined operations and datatypes
// where the MPI's cannot run (see reduce_local.hpp).
#include "wrap/core/reduce_local.hpp"

#include <cstdint>
#include <cstring>

#include "detector/log.hpp"

namespace cohort::wrap {
namespace {

// NOTE: Open MPI 5 routes MPI_Reduce_local through MPI_COMM_WORLD's collective module, which only MPI_Init
// sets up; MPICH reduces without any communicator.
bool mpi_reduce_local_usable() {
#if defined(OPEN_MPI)
  int initialized = 0, finalized = 0;
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  return initialized != 0 && finalized == 0;
#else
  return true;
#endif
}

enum class Kind { arith, bits, none };

Kind kind_of(MPI_Op op) {
  if (op == MPI_SUM || op == MPI_PROD || op == MPI_MIN || op == MPI_MAX || op == MPI_LAND || op == MPI_LOR ||
      op == MPI_LXOR) {
    return Kind::arith;
  }
  if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR) return Kind::bits;
  return Kind::none;
}

template <typename T>
bool arith(const void *in_v, void *io_v, int n, MPI_Op op) {
  const T *in = static_cast<const T *>(in_v);
  T *io = static_cast<T *>(io_v);
  for (int i = 0; i < n; ++i) {
    const T a = in[i], b = io[i];
    if (op == MPI_SUM) io[i] = static_cast<T>(a + b);
    else if (op == MPI_PROD) io[i] = static_cast<T>(a * b);
    else if (op == MPI_MIN) io[i] = a < b ? a : b;
    else if (op == MPI_MAX) io[i] = a > b ? a : b;
    else if (op == MPI_LAND) io[i] = static_cast<T>((a != T(0)) && (b != T(0)));
    else if (op == MPI_LOR) io[i] = static_cast<T>((a != T(0)) || (b != T(0)));
    else if (op == MPI_LXOR) io[i] = static_cast<T>((a != T(0)) != (b != T(0)));
    else return false;
  }
  return true;
}

template <typename T>
bool bits(const void *in_v, void *io_v, int n, MPI_Op op) {
  const T *in = static_cast<const T *>(in_v);
  T *io = static_cast<T *>(io_v);
  for (int i = 0; i < n; ++i) {
    if (op == MPI_BAND) io[i] = static_cast<T>(in[i] & io[i]);
    else if (op == MPI_BOR) io[i] = static_cast<T>(in[i] | io[i]);
    else if (op == MPI_BXOR) io[i] = static_cast<T>(in[i] ^ io[i]);
    else return false;
  }
  return true;
}

template <typename T>
bool integer(const void *in, void *io, int n, MPI_Op op) {
  return kind_of(op) == Kind::bits ? bits<T>(in, io, n, op) : arith<T>(in, io, n, op);
}

// MPI_MAXLOC / MPI_MINLOC on a (value, int index) pair: the lower index among equal values (MPI 4.0 6.9.4).
template <typename V>
bool loc(const void *in_v, void *io_v, int n, MPI_Op op) {
  struct Pair {
    V v;
    int i;
  };
  const Pair *in = static_cast<const Pair *>(in_v);
  Pair *io = static_cast<Pair *>(io_v);
  for (int k = 0; k < n; ++k) {
    const Pair a = in[k], b = io[k];
    const bool a_better = op == MPI_MAXLOC ? a.v > b.v : a.v < b.v;
    if (a_better || (a.v == b.v && a.i < b.i)) io[k] = a;
  }
  return true;
}

// Returns false when cohort has no loop for (type, op); with in == nullptr it only answers that.
bool own(const void *in, void *io, int n, MPI_Datatype t, MPI_Op op) {
  const bool probe = in == nullptr;
  if (op == MPI_MAXLOC || op == MPI_MINLOC) {
    if (t == MPI_2INT) return probe || loc<int>(in, io, n, op);
    if (t == MPI_LONG_INT) return probe || loc<long>(in, io, n, op);
    if (t == MPI_DOUBLE_INT) return probe || loc<double>(in, io, n, op);
    if (t == MPI_FLOAT_INT) return probe || loc<float>(in, io, n, op);
    if (t == MPI_SHORT_INT) return probe || loc<short>(in, io, n, op);
    return false;
  }
  const Kind k = kind_of(op);
  if (k == Kind::none) return false;
  if (t == MPI_FLOAT || t == MPI_DOUBLE || t == MPI_LONG_DOUBLE) {
    if (k == Kind::bits) return false;
    if (probe) return true;
    if (t == MPI_FLOAT) return arith<float>(in, io, n, op);
    if (t == MPI_DOUBLE) return arith<double>(in, io, n, op);
    return arith<long double>(in, io, n, op);
  }
  if (probe) {
    return t == MPI_INT || t == MPI_LONG || t == MPI_LONG_LONG || t == MPI_SHORT || t == MPI_SIGNED_CHAR ||
           t == MPI_CHAR || t == MPI_UNSIGNED || t == MPI_UNSIGNED_LONG || t == MPI_UNSIGNED_LONG_LONG ||
           t == MPI_UNSIGNED_SHORT || t == MPI_UNSIGNED_CHAR || t == MPI_INT8_T || t == MPI_INT16_T ||
           t == MPI_INT32_T || t == MPI_INT64_T || t == MPI_UINT8_T || t == MPI_UINT16_T || t == MPI_UINT32_T ||
           t == MPI_UINT64_T || t == MPI_C_BOOL || (t == MPI_BYTE && k == Kind::bits);
  }
  if (t == MPI_INT || t == MPI_INT32_T) return integer<std::int32_t>(in, io, n, op);
  if (t == MPI_LONG) return integer<long>(in, io, n, op);
  if (t == MPI_LONG_LONG || t == MPI_INT64_T) return integer<long long>(in, io, n, op);
  if (t == MPI_SHORT || t == MPI_INT16_T) return integer<std::int16_t>(in, io, n, op);
  if (t == MPI_SIGNED_CHAR || t == MPI_CHAR || t == MPI_INT8_T) return integer<signed char>(in, io, n, op);
  if (t == MPI_UNSIGNED || t == MPI_UINT32_T) return integer<std::uint32_t>(in, io, n, op);
  if (t == MPI_UNSIGNED_LONG) return integer<unsigned long>(in, io, n, op);
  if (t == MPI_UNSIGNED_LONG_LONG || t == MPI_UINT64_T) return integer<unsigned long long>(in, io, n, op);
  if (t == MPI_UNSIGNED_SHORT || t == MPI_UINT16_T) return integer<std::uint16_t>(in, io, n, op);
  if (t == MPI_UNSIGNED_CHAR || t == MPI_UINT8_T || t == MPI_BYTE) return integer<unsigned char>(in, io, n, op);
  if (t == MPI_C_BOOL) return integer<bool>(in, io, n, op);
  return false;
}

}  // namespace

bool reduce_local_covers(MPI_Datatype type, MPI_Op op) {
  return mpi_reduce_local_usable() || own(nullptr, nullptr, 0, type, op);
}

int reduce_local(const void *in, void *inout, int count, MPI_Datatype type, MPI_Op op, const char *call) {
  if (mpi_reduce_local_usable()) return PMPI_Reduce_local(in, inout, count, type, op);
  if (count <= 0) return MPI_SUCCESS;
  if (in != nullptr && in != MPI_IN_PLACE && inout != nullptr && own(in, inout, count, type, op)) return MPI_SUCCESS;
  COHORT_LOG_ERROR("%s: under the Sessions model alone, Open MPI cannot reduce locally and cohort reduces only "
                   "predefined operations on predefined datatypes", call);
  return MPI_ERR_OP;
}

}  // namespace cohort::wrap

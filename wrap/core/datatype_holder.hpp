// Datatypes that an operation keeps for its life: a persistent request's, a nonblocking or persistent
// collective's, so that the program may free its own once the call returned, as MPI allows.
#pragma once
#include <mpi.h>

#include <memory>
#include <vector>

namespace cohort::wrap {

/// True for a derived datatype (MPI_Type_get_envelope's combiner is not MPI_COMBINER_NAMED).
inline bool derived(MPI_Datatype t) {
  int ni = 0, na = 0, nd = 0, combiner = MPI_COMBINER_NAMED;
  return t != MPI_DATATYPE_NULL && PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) == MPI_SUCCESS &&
         combiner != MPI_COMBINER_NAMED;
}
/// A datatype that a persistent request keeps for its life: the program's predefined one as it is, or
/// cohort's duplicate of a derived one, so that the program may free its own after the init call, as MPI
/// allows. The duplicate is freed with the last reference (not after MPI_Finalize). Immutable once made.
/// significant: false for an argument MPI ignores at this rank (a Gather's recvtype at a non-root, the send
/// side under MPI_IN_PLACE, ...), which may name no datatype at all: kept as it is, never queried.
class HeldType {
 public:
  explicit HeldType(MPI_Datatype t, bool significant = true) : type_(t) {
    if (significant && derived(t) && PMPI_Type_dup(t, &type_) == MPI_SUCCESS) own_ = true;
  }
  HeldType(const HeldType &) = delete;
  HeldType &operator=(const HeldType &) = delete;
  ~HeldType() {
    int finalized = 1;
    PMPI_Finalized(&finalized);
    if (own_ && !finalized) PMPI_Type_free(&type_);
  }
  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_;
  bool own_ = false;
};
using TypeRef = std::shared_ptr<const HeldType>;
inline TypeRef hold_type(MPI_Datatype t, bool significant = true) {
  return std::make_shared<const HeldType>(t, significant);
}
/// An array of n datatypes (a w variant's sendtypes or recvtypes), each derived one held as HeldType holds
/// it: get() gives the handles to pass, in the array's order (nullptr for a null or empty array).
class HeldTypes {
 public:
  HeldTypes(const MPI_Datatype *types, int n) {
    if (types != nullptr && n > 0) handles_.assign(types, types + n);
    for (MPI_Datatype &t : handles_) {
      if (!derived(t)) continue;
      held_.push_back(hold_type(t));
      t = held_.back()->get();
    }
  }
  const MPI_Datatype *get() const { return handles_.empty() ? nullptr : handles_.data(); }

 private:
  std::vector<TypeRef> held_;
  std::vector<MPI_Datatype> handles_;
};

}  // namespace cohort::wrap

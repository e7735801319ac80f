// FunctionRef: a non-owning, allocation-free reference to a callable, for callbacks that do not outlive
// the call they are passed to (the driver's post functions, wait loops' tests).
#pragma once
#include <type_traits>

namespace cohort::wrap {

/// A non-owning reference to a callable (no allocation; the callable must outlive the call).
template <typename Sig>
class FunctionRef;
template <typename R, typename... A>
class FunctionRef<R(A...)> {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef>>>
  FunctionRef(F &&f)  // NOLINT: implicit by design
      : obj_(const_cast<void *>(static_cast<const void *>(&f))),
        call_([](void *o, A... a) -> R { return (*static_cast<std::remove_reference_t<F> *>(o))(a...); }) {}
  R operator()(A... a) const { return call_(obj_, a...); }

 private:
  void *obj_;
  R (*call_)(void *, A...);
};

}  // namespace cohort::wrap

#include "wrap/core/confirm_state.hpp"

#include <algorithm>
#include <iterator>
#include <mutex>
#include <vector>

#include "repair/repair.hpp"
#include "wrap/core/settings.hpp"

namespace cohort::wrap::deferred {

static_assert(setting::COHORT_CONFIRM_WINDOW.hi == kMaxWindow, "the window's range is its code words' capacity");

State::State() : win(window()) {}

State::~State() {
  int finalized = 1;
  PMPI_Finalized(&finalized);
  if (!finalized) leave_substitute(*this);
}

int window() {
  static const int w = static_cast<int>(read_setting(setting::COHORT_CONFIRM_WINDOW));
  return w;
}

long max_bytes() {
  static const long b = read_setting(setting::COHORT_CONFIRM_MAX_BYTES);
  return b;
}

void leave_substitute(State &st) {
  if (st.report_recv != MPI_REQUEST_NULL) {
    PMPI_Cancel(&st.report_recv);
    PMPI_Wait(&st.report_recv, MPI_STATUS_IGNORE);  // cancelled, or completed meanwhile: either way local
  }
  for (auto &r : st.sent) {
    for (MPI_Request &q : r->reqs) {
      if (q != MPI_REQUEST_NULL) PMPI_Request_free(&q);  // (the buffer is lost with the report below)
    }
    r.release();  // NOTE: MPI may still read the count: leaked
  }
  st.sent.clear();
  st.report_sub = nullptr;
}

int agree_code(MPI_Comm comm, AgreementCode *code, int words, std::vector<int> *failed) {
  int rc = MPI_SUCCESS;
  failed->clear();
  for (int k = 0; k < words; ++k) {
    std::vector<int> f, all;
    const int r = repair::agree(comm, &code->word[k], &f);
    if (rc == MPI_SUCCESS) rc = r;
    std::set_union(failed->begin(), failed->end(), f.begin(), f.end(), std::back_inserter(all));
    failed->swap(all);
  }
  return rc;
}

void note_span(State &st, const CompletedSpan &span) {
  std::lock_guard<std::recursive_mutex> lock(st.mu);
  for (auto &e : st.win.recover(span)) st.held.push_back(std::move(e));
}

}  // namespace cohort::wrap::deferred

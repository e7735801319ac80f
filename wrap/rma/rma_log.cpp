#include "wrap/rma/rma_log.hpp"

#include <cstddef>
#include <cstdio>
#include <cstring>

namespace cohort::wrap::rma_log {

void append(std::vector<char> *log, Kind kind, int type, int op, int count, std::int64_t disp, const void *payload,
            std::size_t payload_bytes, const void *payload2, std::size_t payload2_bytes) {
  Header h{};
  h.kind = static_cast<std::uint8_t>(kind);
  h.type = static_cast<std::uint8_t>(type);
  h.op = static_cast<std::uint8_t>(op);
  h.count = count;
  h.disp = disp;
  h.bytes = static_cast<std::int64_t>(payload_bytes + payload2_bytes);
  const char *hp = reinterpret_cast<const char *>(&h);
  log->insert(log->end(), hp, hp + sizeof h);
  if (payload_bytes > 0) {
    const char *p = static_cast<const char *>(payload);
    log->insert(log->end(), p, p + payload_bytes);
  }
  if (payload2_bytes > 0) {
    const char *p = static_cast<const char *>(payload2);
    log->insert(log->end(), p, p + payload2_bytes);
  }
}

void append_bulk_put(std::vector<char> *log, int type, int count, std::int64_t disp) {
  append(log, Kind::put, type, 0, count, disp, nullptr, 0);
  (*log)[log->size() - sizeof(Header) + offsetof(Header, flags)] = static_cast<char>(kBulk);
}

namespace {

// The byte offset of an operation's target span in mem, or -1 when the span is not inside it.
std::int64_t span_offset(const Header &h, std::size_t span, const Memory &mem) {
  // NOTE: the displacement is bounded before the multiplication, which could overflow for a peer's junk.
  if (h.disp < 0 || mem.disp_unit <= 0 || h.disp > mem.size / mem.disp_unit) return -1;
  std::int64_t offset = h.disp * mem.disp_unit;
  if (static_cast<std::uint64_t>(offset) + span > static_cast<std::uint64_t>(mem.size)) return -1;
  return offset;
}

}  // namespace

std::vector<Region> bulk_regions(const char *log, std::size_t len, const Memory &mem, const Apply &fx) {
  std::vector<Region> out;
  std::size_t at = 0;
  while (at + sizeof(Header) <= len) {
    Header h;
    std::memcpy(&h, log + at, sizeof h);
    at += sizeof h;
    if (h.bytes < 0 || static_cast<std::uint64_t>(h.bytes) > len - at) break;
    at += static_cast<std::size_t>(h.bytes);
    if ((h.flags & kBulk) == 0) continue;
    std::size_t elem = fx.elem_size(h.type);
    std::size_t span = static_cast<std::size_t>(h.count < 0 ? 0 : h.count) * elem;
    out.push_back(Region{elem == 0 || h.count < 0 ? -1 : span_offset(h, span, mem), span});
  }
  return out;
}

std::size_t reply_bytes(Kind kind, int count, std::size_t elem_size) {
  switch (kind) {
    case Kind::get:
    case Kind::get_accumulate: return static_cast<std::size_t>(count) * elem_size;
    case Kind::compare_and_swap: return elem_size;
    default: return 0;
  }
}

std::string apply(const char *log, std::size_t len, const Memory &mem, const Apply &fx, std::vector<char> *reply) {
  std::string error;
  auto fail = [&error](const char *what, const Header &h) {
    if (!error.empty()) return;
    char text[160];
    std::snprintf(text, sizeof text, "%s (operation kind %d, displacement %lld, count %d)", what, h.kind,
                  static_cast<long long>(h.disp), h.count);
    error = text;
  };
  std::size_t at = 0;
  while (at + sizeof(Header) <= len) {
    Header h;
    std::memcpy(&h, log + at, sizeof h);
    at += sizeof h;
    if (h.bytes < 0 || static_cast<std::uint64_t>(h.bytes) > len - at) {
      fail("truncated log", h);
      return error;
    }
    const char *payload = log + at;
    at += static_cast<std::size_t>(h.bytes);
    Kind kind = static_cast<Kind>(h.kind);
    std::size_t elem = fx.elem_size(h.type);
    std::size_t span = kind == Kind::compare_and_swap ? elem : static_cast<std::size_t>(h.count < 0 ? 0 : h.count) * elem;
    // NOTE: an operation that could never fit (a negative count, a span beyond the whole window) has no
    // reply layout worth keeping: its zeros would be as large as the count says (gigabytes from one
    // header). The walk stops there; the origin's remaining fetches read zeros (its reply is shorter).
    if (h.count < 0 || span > static_cast<std::uint64_t>(mem.size)) {
      fail(h.count < 0 ? "negative count; the rest of the log is dropped"
                       : "larger than the target's window; the rest of the log is dropped",
           h);
      return error;
    }
    std::size_t want_reply = reply_bytes(kind, h.count, elem);
    std::size_t reply_at = reply->size();
    reply->resize(reply_at + want_reply, 0);
    std::size_t want_payload = kind == Kind::get ? 0 : kind == Kind::compare_and_swap ? 2 * elem : span;
    if (elem == 0 || h.count < 0) {
      fail("unknown datatype", h);
      continue;
    }
    // Outside the window: MPI's MPI_ERR_RMA_RANGE at the origin; here the target skips it.
    std::int64_t offset = span_offset(h, span, mem);
    if (offset < 0) {
      fail("outside the target's window", h);
      continue;
    }
    if ((h.flags & kBulk) != 0) continue;  // its data was received in place (bulk_regions)
    bool fetch_only = (kind == Kind::accumulate || kind == Kind::get_accumulate) && h.op == kOpNoOp;
    if (!fetch_only && static_cast<std::size_t>(h.bytes) != want_payload) {
      fail("payload size does not match the count", h);
      continue;
    }
    char *target = mem.base + offset;
    if (want_reply > 0 && kind != Kind::compare_and_swap) std::memcpy(reply->data() + reply_at, target, span);
    switch (kind) {
      case Kind::put: std::memcpy(target, payload, span); break;
      case Kind::get: break;
      case Kind::accumulate:
      case Kind::get_accumulate:
        if (h.op == kOpReplace) {
          std::memcpy(target, payload, span);
        } else if (h.op != kOpNoOp && !fx.accumulate(h.type, h.op, payload, target, h.count)) {
          fail("the operation is not defined for the datatype", h);
        }
        break;
      case Kind::compare_and_swap:
        std::memcpy(reply->data() + reply_at, target, elem);
        if (std::memcmp(target, payload + elem, elem) == 0) std::memcpy(target, payload, elem);
        break;
      default: fail("unknown operation", h); break;
    }
  }
  if (at != len && error.empty()) error = "trailing bytes after the last operation";
  return error;
}

}  // namespace cohort::wrap::rma_log

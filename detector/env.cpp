#include "detector/env.hpp"

#include <cerrno>
#include <cstdlib>

namespace cohort::env {

std::optional<std::string> get(const char *name) {
  const char *v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

std::optional<long> parse_long(const std::string &text, long lo, long hi) {
  if (text.empty()) return std::nullopt;
  errno = 0;
  char *end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0' || v < lo || v > hi) return std::nullopt;
  return v;
}

std::optional<long> get_long(const char *name, long fallback, long lo, long hi) {
  auto v = get(name);
  if (!v) return fallback;
  return parse_long(*v, lo, hi);
}

}  // namespace cohort::env

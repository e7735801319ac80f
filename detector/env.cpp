#include "detector/env.hpp"

#include <cerrno>
#include <cstdlib>
#include <algorithm>

namespace cohort::env {

std::optional<std::string> get(const char *name) {
  const char *v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

std::string printable(const std::string &text) {
  static const char hex[] = "0123456789abcdef";
  std::string out;
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c != 0x7f) {
      out += ch;
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string invalid(const char *name, const std::string &value, const std::string &expected) {
  return std::string("invalid ") + name + "='" + printable(value) + "' (expected " + expected + ")";
}

std::string read_word(const char *name, const std::vector<std::string> &words, int *index) {
  auto v = get(name);
  if (!v) return "";
  std::string expected;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (*v == words[i]) {
      *index = static_cast<int>(i);
      return "";
    }
    expected += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + words[i];
  }
  return invalid(name, *v, expected);
}

std::vector<std::string> split(const std::string &text, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    std::size_t i = text.find(sep, start);
    out.push_back(text.substr(start, i == std::string::npos ? std::string::npos : i - start));
    if (i == std::string::npos) return out;
    start = i + 1;
  }
}

std::optional<long> parse_long(const std::string &text, long lo, long hi) {
  if (text.empty()) return std::nullopt;
  errno = 0;
  char *end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0' || v < lo || v > hi) return std::nullopt;
  return v;
}

std::string closest(const std::string &name, const std::vector<std::string> &candidates) {
  std::string best;
  size_t best_d = std::max<size_t>(3, name.size() / 3) + 1;
  std::vector<size_t> row, prev;
  for (const std::string &c : candidates) {
    prev.resize(c.size() + 1);
    row.resize(c.size() + 1);
    for (size_t j = 0; j <= c.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= name.size(); ++i) {
      row[0] = i;
      for (size_t j = 1; j <= c.size(); ++j) {
        size_t sub = prev[j - 1] + (name[i - 1] == c[j - 1] ? 0 : 1);
        row[j] = std::min({prev[j] + 1, row[j - 1] + 1, sub});
      }
      std::swap(row, prev);
    }
    if (prev[c.size()] < best_d) {
      best_d = prev[c.size()];
      best = c;
    }
  }
  return best;
}

std::optional<long> get_long(const char *name, long fallback, long lo, long hi) {
  auto v = get(name);
  if (!v) return fallback;
  return parse_long(*v, lo, hi);
}

}  // namespace cohort::env

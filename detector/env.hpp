// Reading COHORT_* environment variables. Every parse failure is reported by the caller as one line
// naming the variable; nothing here exits.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace cohort::env {

/// The variable's value, or nullopt when unset or empty.
std::optional<std::string> get(const char *name);

/// `text` with every control character (bytes below 0x20 and 0x7f) written as \xNN, so that a value
/// quoted in a message keeps the message on one line.
std::string printable(const std::string &text);

/// One line saying that variable `name` holds `value`, which is not what it takes:
/// "invalid NAME='value' (expected <expected>)", the value through printable().
std::string invalid(const char *name, const std::string &value, const std::string &expected);

/// Reads a variable that takes one word of `words`: "" when unset (`*index` untouched) or when its value is
/// words[i] (`*index` = i); otherwise invalid(name, value, "a, b or c").
std::string read_word(const char *name, const std::vector<std::string> &words, int *index);

/// `text` cut at every `sep`: "a,,b" gives {"a", "", "b"}; "" gives {""}.
std::vector<std::string> split(const std::string &text, char sep);

/// Parses a whole decimal integer in [lo, hi]. Returns nullopt on junk, overflow or out of range.
std::optional<long> parse_long(const std::string &text, long lo, long hi);

/// Reads an integer variable: `fallback` when unset; nullopt (invalid) when set but not an integer in
/// [lo, hi].
std::optional<long> get_long(const char *name, long fallback, long lo, long hi);

/// The candidate nearest to `name` by edit distance (insertions, deletions, substitutions; ties: the
/// first), or "" when no candidate is within max(3, |name| / 3) edits (too far to be a typo).
std::string closest(const std::string &name, const std::vector<std::string> &candidates);

}  // namespace cohort::env

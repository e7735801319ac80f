// Reading a libFuzzer input as a stream of small values (no bounds can be overrun: every read past the
// end gives zeros).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace cohort::fuzz {

class Input {
 public:
  Input(const std::uint8_t *data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  /// The next `n` bytes (fewer at the end).
  std::string bytes(std::size_t n) {
    n = n < size_ - pos_ ? n : size_ - pos_;
    std::string out(reinterpret_cast<const char *>(data_ + pos_), n);
    pos_ += n;
    return out;
  }
  std::string rest() { return bytes(size_ - pos_); }
  bool empty() const { return pos_ >= size_; }

 private:
  const std::uint8_t *data_;
  std::size_t size_, pos_ = 0;
};

}  // namespace cohort::fuzz

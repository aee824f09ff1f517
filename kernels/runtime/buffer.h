// DeviceBuffer<T>: owning, move-only memory on a Device (GPU memory on CUDA, host memory on the
// CPU backend). Kernels never see a DeviceBuffer: they take plain `T* __restrict__` views in
// trivially copyable argument structs (or, for a WordMajorBuffer below, WordMajorIn / Out views).
//
// Asynchronous operations (copyFrom, zero) are issued on the device's stream and may be captured
// into a CUDA graph; upload and download are synchronous and belong outside step().
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/runtime/device.h"
#include "kernels/runtime/word_major.h"

namespace weft {
namespace detail {
void* allocateBytes(const Device& device, size_t bytes);
void freeBytes(const Device& device, void* ptr);
void uploadBytes(const Device& device, void* dst, const void* src, size_t bytes);
void downloadBytes(const Device& device, void* dst, const void* src, size_t bytes);
void copyBytesAsync(const Device& device, void* dst, const void* src, size_t bytes);
void zeroBytesAsync(const Device& device, void* dst, size_t bytes);
}  // namespace detail

template <class T>
class DeviceBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "device buffers hold trivially copyable types");

 public:
  DeviceBuffer() = default;
  /// `count` zero-initialized elements.
  DeviceBuffer(const Device& device, size_t count) : device_(&device), size_(count) {
    data_ = static_cast<T*>(detail::allocateBytes(device, bytes()));
    detail::zeroBytesAsync(device, data_, bytes());
  }
  /// A copy of `host`.
  DeviceBuffer(const Device& device, std::span<const T> host)
      : device_(&device), size_(host.size()) {
    data_ = static_cast<T*>(detail::allocateBytes(device, bytes()));
    detail::uploadBytes(device, data_, host.data(), bytes());
  }
  DeviceBuffer(const Device& device, const std::vector<T>& host)
      : DeviceBuffer(device, std::span<const T>(host)) {}

  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      device_ = std::exchange(o.device_, nullptr);
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t bytes() const { return size_ * sizeof(T); }
  const Device* device() const { return device_; }

  /// Replaces the contents with `host` (same size); synchronous.
  void upload(std::span<const T> host) {
    checkSize(host.size());
    detail::uploadBytes(*device_, data_, host.data(), bytes());
  }
  void upload(const std::vector<T>& host) { upload(std::span<const T>(host)); }
  /// Waits for the device's stream, then copies the contents to the host.
  std::vector<T> download() const {
    std::vector<T> host(size_);
    if (size_) detail::downloadBytes(*device_, host.data(), data_, bytes());
    return host;
  }
  /// Asynchronous device-to-device copy of `src` (same size); graph-capturable.
  void copyFrom(const DeviceBuffer& src) {
    checkSize(src.size());
    if (size_) detail::copyBytesAsync(*device_, data_, src.data_, bytes());
  }
  /// Asynchronous zero fill; graph-capturable.
  void zero() {
    if (size_) detail::zeroBytesAsync(*device_, data_, bytes());
  }

 private:
  void release() {
    if (data_) detail::freeBytes(*device_, data_);
    data_ = nullptr;
    size_ = 0;
  }
  void checkSize(size_t n) const;

  const Device* device_ = nullptr;
  T* data_ = nullptr;
  size_t size_ = 0;
};

void throwBufferSizeMismatch(size_t expected, size_t got);

/// Where a buffer's contents are when called (pointer, bytes): for code that keeps referring to a
/// buffer that may be reallocated in between (the state FrameDriver saves at each frame's start).
using BufferRange = std::function<std::pair<void*, size_t>()>;
template <class T>
BufferRange rangeOf(DeviceBuffer<T>& buffer) {
  return [&buffer] { return std::pair<void*, size_t>(buffer.data(), buffer.bytes()); };
}

/// An array of `count` structs T stored word-major (kernels/runtime/word_major.h) in a
/// DeviceBuffer of floats (whole blocks of 32 elements); kernels see it through WordMajorIn /
/// WordMajorOut. Uploads and downloads take and give the structs in element order.
template <class T>
class WordMajorBuffer {
 public:
  WordMajorBuffer() = default;
  /// `count` zero-initialized elements.
  WordMajorBuffer(const Device& device, size_t count)
      : words_(device, wordMajorFloats<T>(count)), count_(count) {}
  /// A copy of `host`.
  WordMajorBuffer(const Device& device, const std::vector<T>& host)
      : words_(device, toWords(host)), count_(host.size()) {}

  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  /// What the storage takes (the last block padded to 32 elements).
  size_t bytes() const { return words_.bytes(); }
  DeviceBuffer<float>& words() { return words_; }
  const DeviceBuffer<float>& words() const { return words_; }
  WordMajorOut<T> out() { return {words_.data()}; }
  WordMajorIn<T> in() const { return {words_.data()}; }

  /// Replaces the contents with `host` (same size); synchronous.
  void upload(const std::vector<T>& host) {
    if (host.size() != count_) throwBufferSizeMismatch(count_, host.size());
    words_.upload(toWords(host));
  }
  /// Waits for the device's stream, then copies the contents to the host in element order.
  std::vector<T> download() const { return fromWords(words_.download(), count_); }

  /// `host` laid out word-major (padding zero).
  static std::vector<float> toWords(const std::vector<T>& host) {
    std::vector<float> w(wordMajorFloats<T>(host.size()));
    for (size_t i = 0; i < host.size(); ++i) storeWordMajor<T>(w.data(), int(i), host[i]);
    return w;
  }
  /// The first `count` elements of the word-major array `words`, in order.
  static std::vector<T> fromWords(const std::vector<float>& words, size_t count) {
    std::vector<T> host(count);
    for (size_t i = 0; i < count; ++i) host[i] = loadWordMajor<T>(words.data(), int(i));
    return host;
  }

 private:
  DeviceBuffer<float> words_;
  size_t count_ = 0;
};

template <class T>
void DeviceBuffer<T>::checkSize(size_t n) const {
  if (n != size_) throwBufferSizeMismatch(size_, n);
}

}  // namespace weft

// Word-major arrays (kernels/runtime/word_major.h, WordMajorBuffer in kernels/runtime/buffer.h):
// word w of element i lies at ((i / 32) · W + w) · 32 + i % 32, an element read back is bit for
// bit the one stored, a member store writes only its member's words, and a buffer's upload and
// download give the elements in order on both backends.
#include "kernels/runtime/word_major.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "kernels/rod_joint.h"
#include "kernels/runtime/buffer.h"
#include "test_support.h"

namespace weft {
namespace {

/// `n` step terms with every word a different random bit pattern (denormals and NaNs included:
/// the layout moves words, it must not touch their bits).
std::vector<RodStepTerms> randomTerms(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<RodStepTerms> v(static_cast<size_t>(n));
  for (RodStepTerms& t : v) {
    std::uint32_t w[wordsOf<RodStepTerms>()];
    for (std::uint32_t& x : w) x = std::uint32_t(rng());
    std::memcpy(static_cast<void*>(&t), w, sizeof(t));
  }
  return v;
}

bool sameBytes(const std::vector<RodStepTerms>& a, const std::vector<RodStepTerms>& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(RodStepTerms)) == 0;
}

TEST(WordMajor, WordWOfElementILiesInRowWOfItsBlock) {
  static_assert(wordsOf<RodJoint>() == 26 && wordsOf<RodStepTerms>() == 25 &&
                wordsOf<RodMultipliers>() == 6);
  const int n = 70;  // two whole blocks and part of a third
  const std::vector<RodStepTerms> terms = randomTerms(n, test::testSeed());
  const std::vector<float> words = WordMajorBuffer<RodStepTerms>::toWords(terms);
  ASSERT_EQ(words.size(), size_t(96) * 25);
  for (int i = 0; i < n; ++i) {
    float w[25];
    std::memcpy(w, static_cast<const void*>(&terms[size_t(i)]), sizeof(w));
    for (int k = 0; k < 25; ++k) {
      const size_t at = (size_t(i / 32) * 25 + size_t(k)) * 32 + size_t(i % 32);
      EXPECT_EQ(std::memcmp(&words[at], &w[k], sizeof(float)), 0)
          << "element " << i << " word " << k;
    }
  }
  for (size_t at = 0; at < words.size(); ++at)
    if (at / 32 >= 2 * 25 && at % 32 >= size_t(n - 64))
      EXPECT_EQ(words[at], 0.0f) << "padding at " << at;
  std::vector<RodStepTerms> back(static_cast<size_t>(n));
  const WordMajorIn<RodStepTerms> in{words.data()};
  for (int i = 0; i < n; ++i) back[size_t(i)] = in[i];
  EXPECT_TRUE(sameBytes(back, terms));
}

TEST(WordMajor, AMemberStoreWritesOnlyThatMember) {
  const int n = 40;
  const std::vector<RodStepTerms> terms = randomTerms(n, test::testSeed() + 1);
  std::vector<float> words = WordMajorBuffer<RodStepTerms>::toWords(terms);
  const WordMajorOut<RodStepTerms> out{words.data()};
  const Vec3 sigma{1.5f, -2.0f, 0.25f};
  out.storeMember(35, offsetof(RodStepTerms, dahlSigma0), sigma);
  std::vector<RodStepTerms> want = terms;
  want[35].dahlSigma0 = sigma;
  std::vector<RodStepTerms> got(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) got[size_t(i)] = out[i];
  EXPECT_TRUE(sameBytes(got, want));
}

void roundTrip(const Device& device) {
  const int n = 1000;
  const std::vector<RodStepTerms> terms = randomTerms(n, test::testSeed() + 2);
  WordMajorBuffer<RodStepTerms> buffer(device, terms);
  EXPECT_EQ(buffer.size(), size_t(n));
  EXPECT_EQ(buffer.bytes(), size_t(1024) * sizeof(RodStepTerms));
  EXPECT_TRUE(sameBytes(buffer.download(), terms));
  const std::vector<float> words = buffer.words().download();
  const std::vector<float> want = WordMajorBuffer<RodStepTerms>::toWords(terms);
  ASSERT_EQ(words.size(), want.size());
  EXPECT_EQ(std::memcmp(words.data(), want.data(), words.size() * sizeof(float)), 0);
  const std::vector<RodStepTerms> other = randomTerms(n, test::testSeed() + 3);
  buffer.upload(other);
  EXPECT_TRUE(sameBytes(buffer.download(), other));
  EXPECT_THROW(buffer.upload(std::vector<RodStepTerms>(size_t(n - 1))), std::exception);
  WordMajorBuffer<RodStepTerms> zeros(device, size_t(3));
  for (const RodStepTerms& t : zeros.download()) EXPECT_EQ(t.alpha, 0.0f);
}

TEST(WordMajor, BufferUploadsAndDownloadsElementsInOrder) {
  roundTrip(*test::openCpu());
}

TEST(WordMajor, CudaBufferUploadsAndDownloadsElementsInOrder) {
  WEFT_REQUIRE_CUDA(cuda);
  roundTrip(*cuda);
}

}  // namespace
}  // namespace weft

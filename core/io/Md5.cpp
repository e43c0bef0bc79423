#include "io/Md5.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace jointscope {

namespace {

constexpr std::array<uint32_t, 64> kSines = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391};

constexpr std::array<uint32_t, 64> kShifts = {7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
                                              5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20,
                                              4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
                                              6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};

uint32_t rotateLeft(uint32_t x, uint32_t n) {
    return (x << n) | (x >> (32 - n));
}

// One of the 64 steps of RFC 1321's four rounds; unrolled at compile time (a loop with a branch per step runs
// at about two thirds of the speed, and big logs hash every payload byte).
template <uint32_t I>
inline void md5Step(uint32_t& a, uint32_t b, uint32_t c, uint32_t d, const uint32_t* words) {
    uint32_t f = 0;
    constexpr uint32_t g = I < 16 ? I : I < 32 ? (5 * I + 1) % 16 : I < 48 ? (3 * I + 5) % 16 : (7 * I) % 16;
    if constexpr (I < 16)
        f = d ^ (b & (c ^ d));
    else if constexpr (I < 32)
        f = c ^ (d & (b ^ c));
    else if constexpr (I < 48)
        f = b ^ c ^ d;
    else
        f = c ^ (b | ~d);
    a = b + rotateLeft(a + f + kSines[I] + words[g], kShifts[I]);
}

// The state rotates one place per step: step I updates the word that is `a` in it.
template <uint32_t... I>
inline void md5Rounds(std::array<uint32_t, 4>& s, const uint32_t* words,
                      std::integer_sequence<uint32_t, I...>) {
    (md5Step<I>(s[(64 - I) % 4], s[(65 - I) % 4], s[(66 - I) % 4], s[(67 - I) % 4], words), ...);
}

} // namespace

Md5::Md5() : state_{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476} {}

void Md5::processBlock(const uint8_t* block) {
    uint32_t words[16];
    for (int i = 0; i < 16; ++i)
        words[i] = uint32_t(block[i * 4]) | uint32_t(block[i * 4 + 1]) << 8 |
                   uint32_t(block[i * 4 + 2]) << 16 | uint32_t(block[i * 4 + 3]) << 24;
    std::array<uint32_t, 4> s = state_;
    md5Rounds(s, words, std::make_integer_sequence<uint32_t, 64>{});
    for (int i = 0; i < 4; ++i)
        state_[i] += s[i];
}

void Md5::update(std::string_view data) {
    if (data.empty())
        return; // an empty view may hold no pointer at all, which memcpy must not get
    const auto* bytes = reinterpret_cast<const uint8_t*>(data.data());
    size_t size = data.size();
    size_t used = length_ % 64;
    length_ += size;
    if (used) {
        const size_t take = std::min(size, 64 - used);
        std::memcpy(buffer_.data() + used, bytes, take);
        bytes += take;
        size -= take;
        if (used + take < 64)
            return;
        processBlock(buffer_.data());
    }
    for (; size >= 64; bytes += 64, size -= 64)
        processBlock(bytes);
    std::memcpy(buffer_.data(), bytes, size);
}

std::array<uint8_t, 16> Md5::finish() {
    const uint64_t bitLength = length_ * 8;
    const size_t used = length_ % 64;
    const size_t padding = used < 56 ? 56 - used : 120 - used;
    static constexpr uint8_t kPad[64] = {0x80};
    update(std::string_view(reinterpret_cast<const char*>(kPad), padding));
    uint8_t lengthBytes[8];
    for (int i = 0; i < 8; ++i)
        lengthBytes[i] = uint8_t(bitLength >> (8 * i));
    update(std::string_view(reinterpret_cast<const char*>(lengthBytes), 8));
    std::array<uint8_t, 16> digest{};
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
            digest[i * 4 + j] = uint8_t(state_[i] >> (8 * j));
    return digest;
}

std::string md5HexOf(const std::array<uint8_t, 16>& digest) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(32);
    for (uint8_t byte : digest) {
        out += kHex[byte >> 4];
        out += kHex[byte & 15];
    }
    return out;
}

std::string md5Hex(std::string_view data) {
    Md5 md5;
    md5.update(data);
    return md5HexOf(md5.finish());
}

} // namespace jointscope

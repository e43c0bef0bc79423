// MD5 digest (RFC 1321), used only to check TORCH_TRACE payload integrity (`has_payload`), not for security.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace jointscope {

class Md5 {
public:
    Md5();
    void update(std::string_view data);
    // Finishes the digest; the object must not be updated afterwards.
    std::array<uint8_t, 16> finish();

private:
    void processBlock(const uint8_t* block);

    std::array<uint32_t, 4> state_;
    std::array<uint8_t, 64> buffer_{};
    uint64_t length_ = 0; // bytes hashed so far
};

// Lower-case hex of a finished digest.
std::string md5HexOf(const std::array<uint8_t, 16>& digest);
// Lower-case hex digest of `data`, e.g. "d41d8cd98f00b204e9800998ecf8427e" for "".
std::string md5Hex(std::string_view data);

} // namespace jointscope

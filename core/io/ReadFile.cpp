#include "io/ReadFile.h"

#include <filesystem>
#include <fstream>
#include <system_error>

namespace jointscope {

Expected<std::string> readDocumentFile(const std::string& path, const char* what, uint64_t maxBytes) {
    std::error_code ec;
    const uintmax_t size = std::filesystem::file_size(path, ec);
    if (ec)
        return makeError({path, 0, 0}, std::string("cannot open ") + what + ": " + ec.message());
    if (size > maxBytes)
        return makeError({path, 0, 0}, std::string(what) + " is " + std::to_string(size >> 20) + " MiB; " +
                                           what + "s are at most " + std::to_string(maxBytes >> 20) + " MiB");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return makeError({path, 0, 0}, std::string("cannot open ") + what + " for reading");
    std::string text(static_cast<size_t>(size), '\0');
    in.read(text.data(), static_cast<std::streamsize>(size));
    text.resize(static_cast<size_t>(in.gcount()));
    return text;
}

} // namespace jointscope

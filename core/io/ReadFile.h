// Reading a small document (a session, a decision) whole, with a size limit: what cannot be read is a
// located error that names the kind of document.
#pragma once

#include "support/Diagnostic.h"

#include <cstdint>
#include <string>

namespace jointscope {

// The bytes of `path`; `what` ("session", "decision") names it in errors; files over `maxBytes` are refused.
Expected<std::string> readDocumentFile(const std::string& path, const char* what, uint64_t maxBytes);

} // namespace jointscope

#include "support/Diagnostic.h"

namespace jointscope {

std::string Diagnostic::format() const {
    std::string out = loc.file.empty() ? std::string("<input>") : loc.file;
    if (loc.line) {
        out += ':' + std::to_string(loc.line);
        if (loc.col)
            out += ':' + std::to_string(loc.col);
    }
    switch (severity) {
    case Severity::Error: out += ": error: "; break;
    case Severity::Warning: out += ": warning: "; break;
    case Severity::Note: out += ": note: "; break;
    }
    return out + message;
}

Diagnostic makeError(SourceLocation loc, std::string message) {
    return Diagnostic{Severity::Error, std::move(loc), std::move(message)};
}

} // namespace jointscope
